#include "perftest/profiler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "cluster/node_commands.h"
#include "cluster/process.h"
#include "perftest/iperf_result.h"
#include "perftest/throughput.h"
#include "perftest/text.h"

namespace sluice::perftest {

namespace {

std::string first_line(const std::string& s) {
    auto start = s.find_first_not_of("\n ");
    if (start == std::string::npos) return "";
    return s.substr(start, s.find('\n', start) - start);
}

}  // namespace

Result<std::string> find_perf(cluster::Executor& executor, const std::string& node) {
    std::string tried;
    for (const char* candidate : {"perf", "perf_6.1"}) {
        auto r = executor.run(node, {candidate, "--version"}, std::chrono::seconds(20));
        if (r && r->exit_status == 0) return std::string(candidate);
        tried += std::string(tried.empty() ? "" : "; ") + candidate + ": " +
                 (r ? first_line(r->err.empty() ? r->out : r->err) : r.error().message);
    }
    // Debian: /usr/bin/perf_X.Y from linux-perf, whatever the kernel's version.
    auto r = executor.run(node, {"sh", "-c", "ls /usr/bin/perf_* 2>/dev/null | head -n 1"}, std::chrono::seconds(20));
    if (r && r->exit_status == 0) {
        std::string path = first_line(r->out);
        if (!path.empty()) return path;
    }
    return make_error("perf is not installed on " + node + " (" + tried +
                      "); install it (Debian: apt-get install linux-perf; scripts/setup.sh does)");
}

Result<ProfileRun> record_profile(cluster::Executor& executor, const cluster::Environment& environment, Family family,
                                  const ProfileOptions& options, PathCheck& path, std::ostream& log) {
    ProfileRun run;
    run.family = family;
    run.node = environment.fw0;
    run.options = options;
    const std::string label = std::string("the ") + display_name(family) + " profile";
    const std::string refused = "\nperf-test reports no profile of traffic sluice was not in.";
    const std::string& target = target_of(environment, family);
    if (target.empty()) return make_error("environment " + environment.name + " has no " + display_name(family) + " target");
    // Sluice attached and counting before any traffic, or no profile at all.
    auto before = path.read();
    if (!before) return make_error("checking the firewall before " + label + ": " + before.error().message);
    if (auto s = verify_sluice_attached(*before, path.node(), label); !s) return make_error(s.error().message + refused);

    auto perf = find_perf(executor, run.node);
    if (!perf) return perf.error();
    run.perf_binary = *perf;

    std::string tag = std::to_string(getpid()) + "-" + to_string(family);
    std::string data = "/tmp/sluice-perftest-" + tag + ".data";
    std::string traffic_log = "/tmp/sluice-perftest-iperf3-" + tag + ".log";
    const std::string& source = environment.traffic_source();

    // -J: the result, read when the run ends on its own after the recording,
    // says how much went through the firewall.
    auto argv = iperf_client_argv(target, family, options.streams, options.traffic_seconds, /*json=*/true);
    log << "profile " << display_name(family) << ": background traffic on " << source << ": "
        << cluster::shell_join(argv) << "\n";
    // Running after the warm-up, or it ended at once: a "server is busy"
    // answer (the previous test's server winding down) is retried, as
    // measure_throughput does; any other end is the error it printed.
    Result<cluster::BackgroundProcess> traffic = make_error("not started");
    constexpr int kAttempts = 4;
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
        traffic = executor.start(source, argv, traffic_log);
        if (!traffic) return make_error("starting background iperf3: " + traffic.error().message);
        std::this_thread::sleep_for(std::chrono::seconds(options.warmup_seconds));
        auto ended = executor.run(source, cluster::node_commands::wait_gone(traffic->pid, 0), std::chrono::seconds(15));
        if (!ended) {
            (void)executor.stop(*traffic, std::chrono::seconds(5));
            return make_error("checking background iperf3 (pid " + std::to_string(traffic->pid) + " on " + source +
                              "): " + ended.error().message);
        }
        if (ended->exit_status == 1) break;  // still running
        auto text = executor.run(source, {"cat", traffic_log}, std::chrono::seconds(10));
        auto early = text ? parse_iperf_json(text->out) : Result<IperfResult>(text.error());
        const std::string why = early ? "it ended after the warm-up, before the recording" : early.error().message;
        if (why.find("busy") == std::string::npos || attempt == kAttempts) {
            (void)executor.run(source, {"rm", "-f", traffic_log}, std::chrono::seconds(10));
            return make_error("background iperf3 on " + source + " for " + label + ": " + why);
        }
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }

    std::vector<std::string> record{*perf,    "record", "-a", "-g", "--freq=" + std::to_string(options.frequency),
                                    "-o",     data,     "--", "sleep", std::to_string(options.record_seconds)};
    log << "profile " << display_name(family) << ": on " << run.node << ": " << cluster::shell_join(record) << "\n";
    auto recorded = executor.run(run.node, record, std::chrono::seconds(options.record_seconds + 120));

    auto cleanup = [&] {
        (void)executor.run(run.node, {"rm", "-f", data, data + ".old"}, std::chrono::seconds(10));
        (void)executor.run(source, {"rm", "-f", traffic_log}, std::chrono::seconds(10));
    };
    auto stop_traffic = [&] {
        if (auto s = executor.stop(*traffic, std::chrono::seconds(5)); !s)
            log << "warning: stopping background iperf3 (pid " << traffic->pid << "): " << s.error().message << "\n";
    };
    if (!recorded || recorded->exit_status != 0 || recorded->timed_out) {
        stop_traffic();
        cleanup();
        std::string why = !recorded ? recorded.error().message
                                    : recorded->timed_out ? "timed out" : first_line(recorded->err);
        return make_error("perf record on " + run.node + " failed: " + why);
    }

    // The traffic ends by itself (-t outlasts the recording); past that it
    // is stopped by its PID, and there is no result to prove the path with.
    const int wait_seconds = options.traffic_seconds + 15;
    auto ended = executor.run(source, cluster::node_commands::wait_gone(traffic->pid, wait_seconds),
                              std::chrono::seconds(wait_seconds + 15));
    if (!ended || ended->exit_status != 0 || ended->timed_out) {
        stop_traffic();
        cleanup();
        return make_error("background iperf3 (pid " + std::to_string(traffic->pid) + " on " + source +
                          ") was still running " + std::to_string(wait_seconds) + " s after it started (iperf3 -t " +
                          std::to_string(options.traffic_seconds) + "); stopped it: " + label +
                          " has no traffic result to check sluice's counters against");
    }
    auto log_text = executor.run(source, {"cat", traffic_log}, std::chrono::seconds(10));
    auto result = log_text ? parse_iperf_json(log_text->out) : Result<IperfResult>(log_text.error());
    if (!result) {
        cleanup();
        return make_error("background iperf3 on " + source + " during " + label + ": " + result.error().message);
    }
    run.traffic = *result;

    auto after = path.read();
    if (!after) {
        cleanup();
        return make_error("checking the firewall after " + label + ": " + after.error().message);
    }
    if (auto s = verify_sluice_in_path(*before, *after, result->receiver_bytes, path.node(), label); !s) {
        cleanup();
        return make_error(s.error().message + refused);
    }
    log << in_path_note(*before, *after, result->receiver_bytes, path.node()) << "\n";

    auto report = executor.run(run.node, {*perf, "report", "--no-children", "--sort=symbol", "--stdio", "-i", data},
                               std::chrono::seconds(300));
    cleanup();
    if (!report) return make_error("perf report on " + run.node + ": " + report.error().message);
    if (report->exit_status != 0) {
        return make_error("perf report on " + run.node + " exited with status " + std::to_string(report->exit_status) +
                          ": " + first_line(report->err));
    }
    auto parsed = parse_perf_report(report->out);
    if (!parsed) return parsed.error();
    run.profile = std::move(parsed.value());
    return run;
}

std::string render_top(const Profile& profile, size_t limit) {
    std::vector<std::vector<std::string>> rows{{"#", "Symbol", "CPU %"}};
    for (size_t i = 0; i < profile.entries.size() && i < limit; ++i) {
        const auto& e = profile.entries[i];
        rows.push_back({std::to_string(i + 1), e.symbol + (e.bpf ? " (BPF)" : ""), fixed(e.percent, 2)});
    }
    return markdown_table(rows);
}

std::string render_review(const std::vector<SymbolReview>& reviews) {
    std::vector<std::vector<std::string>> rows{{"Symbol", "CPU %", "Healthy", "Red flag", "Status", "Meaning"}};
    for (const auto& r : reviews) {
        rows.push_back({r.expected.symbol, fixed(r.percent, 2) + (r.present ? "" : " (absent)"),
                        fixed(r.expected.healthy_min, 2) + "–" + fixed(r.expected.healthy_max, 2) + "%",
                        ">" + fixed(r.expected.red_flag, 2) + "%", to_string(r.status), r.expected.meaning});
    }
    return markdown_table(rows);
}

std::string render_bpf_programs(const Profile& profile) {
    std::vector<std::vector<std::string>> rows{{"BPF program", "CPU %", "kallsyms name"}};
    for (const auto& e : profile.entries) {
        if (e.bpf) rows.push_back({e.symbol, fixed(e.percent, 2), e.raw});
    }
    if (rows.size() == 1) return "(no BPF program in the profile: is sluice attached and is traffic flowing through it?)\n";
    return markdown_table(rows);
}

std::string render_side_by_side(const Profile& ipv4, const Profile& ipv6, size_t limit) {
    std::vector<std::vector<std::string>> rows{{"#", "IPv4 symbol", "%", "IPv6 symbol", "%"}};
    size_t count = std::min(limit, std::max(ipv4.entries.size(), ipv6.entries.size()));
    for (size_t i = 0; i < count; ++i) {
        std::vector<std::string> row{std::to_string(i + 1)};
        for (const Profile* p : {&ipv4, &ipv6}) {
            bool has = i < p->entries.size();
            row.push_back(has ? p->entries[i].symbol : "");
            row.push_back(has ? fixed(p->entries[i].percent, 2) : "");
        }
        rows.push_back(std::move(row));
    }
    // Delta per symbol in either top list, largest change first.
    std::vector<std::string> symbols;
    for (const Profile* p : {&ipv4, &ipv6}) {
        for (size_t i = 0; i < p->entries.size() && i < limit; ++i) {
            if (std::find(symbols.begin(), symbols.end(), p->entries[i].symbol) == symbols.end()) {
                symbols.push_back(p->entries[i].symbol);
            }
        }
    }
    std::stable_sort(symbols.begin(), symbols.end(), [&](const std::string& a, const std::string& b) {
        return std::abs(ipv6.percent(a) - ipv4.percent(a)) > std::abs(ipv6.percent(b) - ipv4.percent(b));
    });
    std::vector<std::vector<std::string>> deltas{{"Symbol", "IPv4 %", "IPv6 %", "IPv6 − IPv4"}};
    for (const auto& s : symbols) {
        double d = ipv6.percent(s) - ipv4.percent(s);
        deltas.push_back({s, fixed(ipv4.percent(s), 2), fixed(ipv6.percent(s), 2), (d >= 0 ? "+" : "") + fixed(d, 2)});
    }
    return markdown_table(rows) + "\n" + markdown_table(deltas);
}

nlohmann::json profile_to_json(const ProfileRun& run, const std::vector<SymbolReview>* reviews) {
    nlohmann::json j;
    j["protocol"] = display_name(run.family);
    j["node"] = run.node;
    j["perf"] = run.perf_binary;
    j["record_seconds"] = run.options.record_seconds;
    j["frequency"] = run.options.frequency;
    j["samples"] = run.profile.samples;
    j["traffic_gbps"] = run.traffic.receiver_bps / 1e9;
    j["event"] = run.profile.event;
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& e : run.profile.entries) {
        if (e.percent < 0.01) continue;
        entries.push_back({{"symbol", e.symbol}, {"percent", e.percent}, {"bpf", e.bpf}, {"raw", e.raw}});
    }
    j["symbols"] = std::move(entries);
    if (reviews) {
        nlohmann::json review = nlohmann::json::array();
        for (const auto& r : *reviews) {
            review.push_back({{"symbol", r.expected.symbol},
                              {"percent", r.percent},
                              {"present", r.present},
                              {"healthy", {r.expected.healthy_min, r.expected.healthy_max}},
                              {"red_flag", r.expected.red_flag},
                              {"status", to_string(r.status)},
                              {"meaning", r.expected.meaning}});
        }
        j["review"] = std::move(review);
    }
    return j;
}

}  // namespace sluice::perftest
