#include "bench/proc_stat.h"

#include <cctype>
#include <cmath>
#include <optional>
#include <sstream>

namespace sluice::bench {
namespace {

double round1(double v) {
    return std::round(v * 10) / 10;
}

}  // namespace

Result<CpuSample> parse_cpu_sample(const std::string& proc_stat) {
    std::istringstream in(proc_stat);
    std::optional<CpuSample> sample;
    int cpus = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.size() > 3 && line.rfind("cpu", 0) == 0 && std::isdigit(static_cast<unsigned char>(line[3]))) ++cpus;
        if (line.rfind("cpu ", 0) != 0 || sample) continue;
        std::istringstream fields(line.substr(4));
        uint64_t v[8];
        for (auto& x : v)
            if (!(fields >> x)) return make_error("the cpu line of /proc/stat has fewer than 8 numbers: " + line);
        CpuSample s;
        for (auto x : v) s.total += x;  // user nice system idle iowait irq softirq steal
        s.idle = v[3] + v[4];
        s.softirq = v[6];
        sample = s;
    }
    if (!sample) return make_error("/proc/stat has no \"cpu \" line");
    sample->cpus = cpus;
    return *sample;
}

CpuShare cpu_share(const CpuSample& a, const CpuSample& b) {
    CpuShare s;
    if (b.total <= a.total) return s;
    const double total = static_cast<double>(b.total - a.total);
    const double idle = b.idle >= a.idle ? static_cast<double>(b.idle - a.idle) : 0;
    const double soft = b.softirq >= a.softirq ? static_cast<double>(b.softirq - a.softirq) : 0;
    s.busy_percent = round1(100 * (1 - idle / total));
    s.softirq_percent = round1(100 * soft / total);
    return s;
}

}  // namespace sluice::bench
