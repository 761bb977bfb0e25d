#include "bench/observe_report.h"

#include <algorithm>
#include <sstream>

#include "bench/observe_checks.h"
#include "bench/report.h"

namespace sluice::bench {
namespace {

using nlohmann::json;

constexpr double kEstablishedGoal = 0.97;
constexpr double kConnectionsGoal = 0.90;

// The configurations of the run, in the order it listed them.
std::vector<std::string> configs_of(const json& setup, const std::vector<json>& records) {
    std::vector<std::string> out;
    if (setup.contains("configs") && setup["configs"].is_array())
        for (const auto& c : setup["configs"])
            if (c.is_string()) out.push_back(c.get<std::string>());
    if (!out.empty()) return out;
    for (const auto& c : observe_configs())
        if (!select(records, {{"config", c}}).empty()) out.push_back(c);
    return out;
}

// (a): record[field] by window, keyed pass * kCycleKey + cycle, so that
// ratios_by_pass() pairs each window with the one of its own cycle.
constexpr int kCycleKey = kObserveMaxCycles + 1;

std::map<int, double> established(const std::vector<json>& records, const std::string& config,
                                  const std::string& rate, const std::string& field) {
    std::map<int, double> out;
    for (const auto& r : select(records, {{"part", "established"}, {"config", config}, {"rate", rate}}))
        if (r.contains(field) && r[field].is_number() && r.contains("pass"))
            out[r["pass"].get<int>() * kCycleKey + r.value("cycle", 0)] = r[field].get<double>();
    return out;
}

// The median of each pass's windows (keys as established() makes them).
std::map<int, double> pass_medians(const std::map<int, double>& by_window) {
    std::map<int, std::vector<double>> grouped;
    for (const auto& [key, v] : by_window) grouped[key / kCycleKey].push_back(v);
    std::map<int, double> out;
    for (const auto& [pass, v] : grouped) out[pass] = spread_of(v)->median;
    return out;
}

std::map<int, double> connections(const std::vector<json>& records, const std::string& config,
                                  const std::string& field) {
    return by_pass(records, {{"part", "connections"}, {"config", config}}, field);
}

// (c): one case of sluice_xdp_cost --observability ("established_v4", ...).
std::map<int, double> datapath(const std::vector<json>& records, const std::string& case_name,
                               const std::string& field) {
    return by_pass(records, {{"part", "datapath"}, {"case", case_name}}, field);
}

std::vector<double> scaled(const std::map<int, double>& per_pass, double factor) {
    std::vector<double> out;
    for (const auto& [pass, v] : per_pass) out.push_back(v * factor);
    return out;
}

std::string per_pass_line(const std::map<int, double>& per_pass) {
    std::string out;
    for (const auto& [pass, v] : per_pass) out += (out.empty() ? "" : ", ") + std::to_string(pass) + ": " + fixed(v, 3);
    return out.empty() ? "-" : out;
}

std::string established_table(const std::vector<json>& records, const std::vector<std::string>& configs,
                              const std::string& rate) {
    const bool unlimited = rate == "unlimited";
    std::vector<std::string> header{"configuration", "offered Mpps", "received Mpps", "loss %", "CPU ns/pkt (softirq)",
                                    "off CPU / this CPU, every pair (throughput equivalent)"};
    if (unlimited)
        header.insert(header.end(), {"received / off, every pair", "sluice BPF ns/pkt (run time)",
                                     "off BPF / this BPF, every pair"});
    else
        header.insert(header.end(), {"busy ns/pkt (all CPU time)", "off busy / this busy, every pair", "daemon CPU %",
                                     "capture + scraper CPU %"});
    MarkdownTable t(header);
    const auto off_cpu = established(records, "off", rate, "softirq_ns_per_packet");
    const auto off_busy = established(records, "off", rate, "busy_ns_per_packet");
    const auto off_received = established(records, "off", rate, "received_pps");
    bool any = false;
    for (const auto& config : configs) {
        const auto cpu = established(records, config, rate, "softirq_ns_per_packet");
        if (cpu.empty()) continue;
        any = true;
        const auto received = established(records, config, rate, "received_pps");
        std::vector<std::string> row{observe_config_label(config),
                                     format_spread(scaled(established(records, config, rate, "offered_pps"), 1e-6), 3),
                                     format_spread(scaled(received, 1e-6), 3),
                                     format_spread(values(established(records, config, rate, "loss_percent")), 2),
                                     format_spread(values(cpu), 0),
                                     format_spread(values(ratios_by_pass(off_cpu, cpu)), 3)};
        if (unlimited) {
            row.push_back(format_spread(values(ratios_by_pass(received, off_received)), 3));
            const auto bpf = established(records, config, rate, "bpf_ns_per_packet");
            row.push_back(format_spread(values(bpf), 1));
            row.push_back(format_spread(values(ratios_by_pass(established(records, "off", rate, "bpf_ns_per_packet"), bpf)), 3));
        } else {
            const auto busy = established(records, config, rate, "busy_ns_per_packet");
            row.push_back(format_spread(values(busy), 0));
            row.push_back(format_spread(values(ratios_by_pass(off_busy, busy)), 3));
            row.push_back(format_spread(values(established(records, config, rate, "daemon_cpu_percent")), 1));
            row.push_back(observe_scrapes_and_captures(config)
                              ? format_spread(values(established(records, config, rate, "observers_cpu_percent")), 1)
                              : "-");
        }
        t.row(row);
    }
    return any ? t.str() : "";
}

std::string connections_table(const std::vector<json>& records, const std::vector<std::string>& configs) {
    MarkdownTable t({"configuration", "new connections/s", "this / off", "p50 ms", "p99 ms", "failed",
                     "flow-log lines per connection", "daemon CPU %"});
    const auto off_rate = connections(records, "off", "conn_per_second");
    bool any = false;
    for (const auto& config : configs) {
        const auto rate = connections(records, config, "conn_per_second");
        if (rate.empty()) continue;
        any = true;
        std::vector<double> p50, p99, lines_per;
        for (const auto& [pass, v] : connections(records, config, "p50_us")) p50.push_back(v / 1000);
        for (const auto& [pass, v] : connections(records, config, "p99_us")) p99.push_back(v / 1000);
        const auto lines = connections(records, config, "flow_log_lines");
        const auto created = connections(records, config, "sessions_created");
        for (const auto& [pass, v] : ratios_by_pass(lines, created)) lines_per.push_back(v);
        t.row({observe_config_label(config), format_spread(values(rate), 0),
               format_spread(values(ratios_by_pass(rate, off_rate)), 3), format_spread(p50, 1),
               format_spread(p99, 1), format_spread(values(connections(records, config, "failed")), 0),
               observe_logs(config) ? format_spread(lines_per, 2) : "0",
               format_spread(values(connections(records, config, "daemon_cpu_percent")), 0)});
    }
    return any ? t.str() : "";
}

}  // namespace

std::map<int, double> ratios_by_pass(const std::map<int, double>& a, const std::map<int, double>& b) {
    std::map<int, double> out;
    for (const auto& [pass, denominator] : b) {
        auto it = a.find(pass);
        if (it != a.end() && denominator > 0) out[pass] = it->second / denominator;
    }
    return out;
}

std::vector<ObserveGoal> observe_goals(const std::vector<json>& records) {
    std::vector<ObserveGoal> goals;
    auto finish = [&](ObserveGoal g) {
        if (g.per_pass.empty()) return;
        g.spread = spread_of(values(g.per_pass));
        // Reached: within rounding of the goal (0.85 and 0.95 have a median
        // of 0.9 in print, not a hair below it).
        constexpr double kSlack = 1e-9;
        for (const auto& [pass, v] : g.per_pass)
            if (v + kSlack >= g.goal) ++g.passes_met;
        g.met = g.spread && g.spread->median + kSlack >= g.goal;
        goals.push_back(std::move(g));
    };
    for (const auto& config : observe_configs()) {
        if (config == "off") continue;
        ObserveGoal e;
        e.config = config;
        e.measure = "established";
        e.label = "established packets at the fixed rate: off softirq ns/pkt / " + config +
                  " softirq ns/pkt (the path's work per packet), windows paired within a cycle, the median of each "
                  "pass's cycles";
        e.goal = kEstablishedGoal;
        e.no_goal = "— (end to end: against the control)";
        e.per_pass = pass_medians(ratios_by_pass(established(records, "off", "fixed", "softirq_ns_per_packet"),
                                                 established(records, config, "fixed", "softirq_ns_per_packet")));
        finish(std::move(e));
        ObserveGoal c;
        c.config = config;
        c.measure = "connections";
        c.label = "new connections per second: " + config + " / off";
        c.goal = kConnectionsGoal;
        c.per_pass = ratios_by_pass(connections(records, config, "conn_per_second"),
                                    connections(records, "off", "conn_per_second"));
        finish(std::move(c));
    }
    // (a)'s control: how far apart two off windows one cycle apart are,
    // with nothing different between them: what (a) gives for the same
    // thing measured twice a few seconds apart.
    {
        ObserveGoal a;
        a.config = "off";
        a.measure = "established control";
        a.label = "control, the same measurement with nothing different: off softirq ns/pkt / off softirq ns/pkt of "
                  "the next cycle, the median of each pass's cycles";
        a.no_goal = "— (control)";
        const auto off = established(records, "off", "fixed", "softirq_ns_per_packet");
        std::map<int, double> next;  // off of the next cycle, under this cycle's key
        for (const auto& [key, v] : off)
            if (off.count(key + 1)) next[key] = off.at(key + 1);
        a.per_pass = pass_medians(ratios_by_pass(off, next));
        finish(std::move(a));
    }
    // (c): the same established packet through the datapath with logging
    // and capture off and on.
    for (const char* build : {"", "tc_"})
        for (const char* family : {"v4", "v6"}) {
            const std::string case_name = std::string(build) + "established_" + family;
            ObserveGoal d;
            d.config = "on";
            d.measure = "datapath " + case_name;
            d.label = std::string("established packets in the datapath (BPF_PROG_TEST_RUN, ") + (*build ? "TC" : "XDP") +
                      " build), IPv" + (family + 1) + ": off ns/pkt / flow log + capture ns/pkt";
            d.goal = kEstablishedGoal;
            d.per_pass = ratios_by_pass(datapath(records, case_name, "plain_ns_per_packet"),
                                        datapath(records, case_name, "observed_ns_per_packet"));
            finish(std::move(d));
        }
    return goals;
}

std::string observe_report(const std::vector<json>& records) {
    auto setups = select(records, {{"event", "setup"}});
    const json setup = setups.empty() ? json::object() : setups.front();
    const auto configs = configs_of(setup, records);
    std::ostringstream out;
    out << "### Observability cost, " << setup.value("date", utc_now()) << "\n\n";
    out << setup.value("machine", machine_line()) << "; load average " << setup.value("load_start", std::string("?"))
        << " at the start";
    auto ends = select(records, {{"event", "end"}});
    if (!ends.empty()) out << ", " << ends.front().value("load_end", std::string("?")) << " at the end";
    if (setup.contains("quiet_busy_percent") && setup["quiet_busy_percent"].is_number())
        out << "; the machine " << fixed(setup["quiet_busy_percent"].get<double>(), 1)
            << " % busy over 5 s at the quiet gate";
    out << ". " << setup.value("passes", 0) << " pass(es); in (a) one sluice start per pass, the configurations "
        << "taking turns in each cycle, their order rotating from cycle to cycle; in (b) one start per measurement, "
        << "configurations interleaved (pass p starts at the p-th); sluice in the `"
        << setup.value("xdp_mode", std::string("?")) << "` mode on lan0 and wan0.";
    if (setup.contains("curl")) out << " " << setup["curl"].get<std::string>() << ".";
    out << "\n\n";

    const auto goals = observe_goals(records);
    if (!goals.empty()) {
        MarkdownTable g({"configuration", "measure", "goal", "median (min–max) over passes", "passes at or above",
                         "met (median)"});
        for (const auto& goal : goals)
            g.row({goal.config, goal.label, goal.no_goal.empty() ? "≥ " + fixed(goal.goal, 2) : goal.no_goal,
                   format_spread(goal.spread, 3),
                   goal.no_goal.empty()
                       ? std::to_string(goal.passes_met) + " of " + std::to_string(goal.per_pass.size())
                       : "—",
                   goal.no_goal.empty() ? (goal.met ? "yes" : "no") : "—"});
        out << "Issue 21's goal (point 4), each ratio taken within a pass against off. An established packet's cost "
               "is measured two ways: (c), the datapath's own time per packet (the goal rows), and (a), the whole "
               "machine's CPU per packet end to end, scrapes and capture included, beside its control (off against "
               "off: how far apart (a) puts two measurements of the same thing here); (a)'s rows carry no goal of "
               "their own while that spread is wider than 3 %:\n\n"
            << g.str() << "\n";
        const bool has_control = std::any_of(goals.begin(), goals.end(),
                                             [](const ObserveGoal& g) { return g.measure == "established control"; });
        if (!has_control && !select(records, {{"part", "established"}, {"rate", "fixed"}}).empty())
            out << "No control row: no pass has two fixed-rate off windows a cycle apart (--cycles 1, or their "
                   "rate was not held), so nothing says how far apart (a) puts the same measurement here.\n\n";
        out << "Per pass (pass: ratio):\n\n";
        for (const auto& goal : goals)
            out << "- " << goal.config << ", " << goal.measure << ": " << per_pass_line(goal.per_pass) << "\n";
        out << "\n";
    }

    const std::string fixed_table = established_table(records, configs, "fixed");
    if (!fixed_table.empty()) {
        out << "(a) Established UDP flows (" << setup.value("flows", 0) << " flows of "
            << setup.value("frame_bytes", 60) + 4 << "-byte frames, LAN host → WAN host), at "
            << setup.value("rate_pps", uint64_t{0}) << " packets/s offered; one sluice start per pass, the "
            << "configurations switched by `sluice reload`, " << setup.value("cycles", 0) << " cycles per pass of one "
            << setup.value("seconds", 0.0) << " s window per configuration (each after "
            << setup.value("settle_seconds", 0.0) << " s to settle). Cells: median (min–max) over every window; "
            << "ratios over every window paired with off's window of the same cycle (the goal table takes each "
            << "pass's median of these instead):\n\n"
            << fixed_table << "\n";
        const std::string unlimited = established_table(records, configs, "unlimited");
        if (!unlimited.empty())
            out << "The same flows unlimited (as fast as one trafgen core sends), with BPF run-time statistics on "
                   "(BPF_ENABLE_STATS; they add two clock reads per program run, in every configuration alike):\n\n"
                << unlimited << "\n";
    }
    const std::string conn = connections_table(records, configs);
    if (!conn.empty())
        out << "(b) New TCP connections (sluice_connrate: connect, 80-byte request, 200-byte answer, close; "
            << setup.value("conn_threads", 0) << " client threads × " << setup.value("conn_concurrency", 0)
            << " in flight, " << setup.value("conn_seconds", 0.0) << " s counted per run):\n\n"
            << conn << "\n";
    for (const auto& summary : select(records, {{"part", "datapath_summary"}}))
        out << "(c) The datapath alone (tests/sluice_xdp_cost --observability). "
            << summary.value("summary_markdown", std::string()) << "\n";
    out << "sluice BPF ns/pkt: the run time the kernel counted for sluice's entry program on lan0 (its tail calls "
           "included) over the window, per run.\n";
    out << "(b) cells: median (min–max) over passes; ratios per pass against off of the same pass, median (min–max) "
           "of those. CPU ns/pkt: the softirq time of all CPUs (/proc/stat, tick-sampled) over the window divided by "
           "the packets the receiver counted: the firewall's per-packet work plus the veth and receiver work every "
           "configuration pays. busy ns/pkt: every CPU's non-idle time over the window per packet (the generator, "
           "the daemon, the scraper and the capture included). The goal's throughput equivalent is off's CPU per "
           "packet over the configuration's: 1.00 costs the same, 0.97 is 3 % more CPU per packet. daemon CPU %: the "
           "sluice daemon's user + system time over the window (a) or the client's run (b), in % of one CPU.\n";

    std::vector<double> gates;
    if (setup.contains("quiet_busy_percent") && setup["quiet_busy_percent"].is_number())
        gates.push_back(setup["quiet_busy_percent"].get<double>());
    for (const auto& q : select(records, {{"event", "quiet"}}))
        if (q.contains("busy_percent") && q["busy_percent"].is_number()) gates.push_back(q["busy_percent"].get<double>());
    if (gates.size() > 1)
        out << "\nThe quiet gate, each of the " << gates.size() << " times it ran (before every pass), saw the machine "
            << format_spread(gates, 1) << " % busy over 5 s.\n";
    const auto discarded = select(records, {{"event", "discarded"}});
    if (!discarded.empty()) {
        out << "\nFixed-rate windows left out because the rate was not held (trafgen fell behind on a busy "
               "machine; such a window counts in no cell and leaves its pair without a ratio):\n\n";
        for (const auto& d : discarded)
            out << "- " << d.value("config", std::string("?")) << " pass " << d.value("pass", 0) << " cycle "
                << d.value("cycle", 0) << ": " << d.value("reason", std::string("?")) << "\n";
    }

    std::string paths;
    for (const auto& r : records) {
        if (!r.contains("in_path") || !r.contains("config")) continue;
        std::string what = r.value("part", std::string("?"));
        if (r.contains("rate")) what += " " + r["rate"].get<std::string>();
        if (r.contains("cycle")) what += " cycle " + std::to_string(r.value("cycle", 0));
        if (r.contains("after")) what += " after " + r["after"].get<std::string>();
        paths += r["config"].get<std::string>() + " " + what + " pass " + std::to_string(r.value("pass", 0)) + ": " +
                 r["in_path"].get<std::string>() + "\n";
    }
    if (!paths.empty()) out << "\nWhat proved each measurement's path:\n\n```\n" << paths << "```\n";
    return out.str();
}

}  // namespace sluice::bench
