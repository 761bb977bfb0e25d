#include "perftest/throughput.h"

#include <thread>

namespace sluice::perftest {

std::vector<std::string> iperf_client_argv(const std::string& target, Family family, int streams, int seconds,
                                           bool json, int port) {
    std::vector<std::string> argv{"iperf3"};
    if (family == Family::ipv6) argv.push_back("-6");
    argv.insert(argv.end(), {"-c", target, "-p", std::to_string(port), "-P", std::to_string(streams), "-t",
                             std::to_string(seconds)});
    if (json) argv.push_back("-J");
    return argv;
}

const std::string& target_of(const cluster::Environment& environment, Family family) {
    return family == Family::ipv4 ? environment.ipv4_target : environment.ipv6_target;
}

Measurement measure_throughput(cluster::Executor& executor, const cluster::Environment& environment, Family family,
                               const cluster::IperfParams& params) {
    Measurement m;
    m.family = family;
    const std::string& target = target_of(environment, family);
    if (target.empty()) {
        m.error = "environment " + environment.name + " has no " + display_name(family) + " target";
        return m;
    }
    auto argv = iperf_client_argv(target, family, params.streams, params.seconds, /*json=*/true);
    std::chrono::seconds timeout(params.timeout_seconds > 0 ? params.timeout_seconds : params.seconds + 30);
    constexpr int kAttempts = 4;
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
        auto run = executor.run(environment.traffic_source(), argv, timeout);
        if (!run) {
            m.error = run.error().message;
            return m;
        }
        if (run->timed_out) {
            m.error = "iperf3 did not finish within " + std::to_string(timeout.count()) + " s";
            return m;
        }
        auto parsed = parse_iperf_json(run->out);
        if (parsed) {
            m.result = std::move(parsed.value());
            m.error.clear();
            return m;
        }
        m.error = parsed.error().message;
        if (run->out.empty() && !run->err.empty()) m.error += " (" + run->err.substr(0, run->err.find('\n')) + ")";
        // The server takes a moment to accept the next test after one ends.
        bool busy = m.error.find("busy") != std::string::npos;
        if (!busy || attempt == kAttempts) return m;
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    return m;
}

}  // namespace sluice::perftest
