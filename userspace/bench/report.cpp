#include "bench/report.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sluice::bench {

std::string MarkdownTable::str() const {
    std::string out = "|";
    for (const auto& h : header_) out += " " + h + " |";
    out += "\n|";
    for (size_t i = 0; i < header_.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& r : rows_) {
        out += "|";
        for (const auto& c : r) out += " " + c + " |";
        out += "\n";
    }
    return out;
}

std::string utc_now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
    return buf;
}

std::string machine_line() {
    struct utsname u{};
    uname(&u);
    std::string model;
    std::ifstream cpu("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpu, line))
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos) model = line.substr(line.find_first_not_of(' ', colon + 1));
            break;
        }
    return std::string(u.release) + ", " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " CPUs" +
           (model.empty() ? "" : ", " + model);
}

std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    in >> a >> b >> c;
    return a + " " + b + " " + c;
}

Status write_report(const std::string& path, const std::string& text) {
    std::error_code ec;
    auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    std::ofstream out(path);
    out << text;
    if (!out) return make_error("cannot write " + path);
    return {};
}

}  // namespace sluice::bench
