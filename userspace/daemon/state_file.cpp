#include "daemon/state_file.h"

#include <signal.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

namespace sluice {

Status write_state(const std::string& path, const nlohmann::json& state) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp);
        if (!out) return make_error("cannot write " + tmp);
        out << state.dump(2) << "\n";
    }
    std::filesystem::rename(tmp, path, ec);  // readers never see a half-written file
    if (ec) return make_error("cannot write " + path + ": " + ec.message());
    return {};
}

std::optional<nlohmann::json> read_state(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    try {
        return nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

bool process_alive(int pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace sluice
