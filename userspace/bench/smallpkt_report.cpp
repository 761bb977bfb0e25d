#include "bench/smallpkt_report.h"

#include <algorithm>

#include "bench/report.h"
#include "bench/results.h"
#include "bench/smallpkt_checks.h"

namespace sluice::bench {
namespace {

using nlohmann::json;

// Per-pass values scaled (pps -> Mpps).
std::vector<double> scaled(const std::map<int, double>& per_pass, double factor) {
    std::vector<double> out;
    for (const auto& [pass, v] : per_pass) out.push_back(v * factor);
    return out;
}

// The configurations of the run, in the order it listed them.
std::vector<std::string> configs_of(const json& setup, const std::vector<json>& records) {
    std::vector<std::string> out;
    if (setup.contains("configs") && setup["configs"].is_array())
        for (const auto& c : setup["configs"])
            if (c.is_string()) out.push_back(c.get<std::string>());
    if (!out.empty()) return out;
    for (const auto& r : records)
        if (r.contains("config") && r["config"].is_string()) {
            auto c = r["config"].get<std::string>();
            if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
        }
    return out;
}

std::string rate_table(const std::vector<json>& records, const std::vector<std::string>& configs,
                       const std::string& rate) {
    const bool unlimited = rate == "unlimited";
    std::vector<std::string> header{"configuration",        "offered Mpps",         "received Mpps",
                                    "loss %",               "CPU ns/pkt (softirq)", "CPU / kernel",
                                    "CPU / minimal redirect"};
    header.push_back(unlimited ? "received / kernel" : "busy ns/pkt (all CPU time)");
    MarkdownTable t(header);
    auto of = [&](const std::string& config, const std::string& field) {
        return by_pass(records, {{"config", config}, {"rate", rate}}, field);
    };
    const auto kernel_cpu = of("kernel", "softirq_ns_per_packet");
    const auto redirect_cpu = of("xdp-redirect", "softirq_ns_per_packet");
    const auto kernel_received = of("kernel", "received_pps");
    for (const auto& config : configs) {
        const auto cpu = of(config, "softirq_ns_per_packet");
        if (cpu.empty()) continue;
        const auto received = of(config, "received_pps");
        std::vector<std::string> row{smallpkt_config_label(config),
                                     format_spread(scaled(of(config, "offered_pps"), 1e-6), 3),
                                     format_spread(scaled(received, 1e-6), 3),
                                     format_spread(values(of(config, "loss_percent")), 2),
                                     format_spread(values(cpu), 0),
                                     format_spread(per_pass_ratios(cpu, kernel_cpu), 2),
                                     format_spread(per_pass_ratios(cpu, redirect_cpu), 2)};
        row.push_back(unlimited ? format_spread(per_pass_ratios(received, kernel_received), 2)
                                : format_spread(values(of(config, "busy_ns_per_packet")), 0));
        t.row(row);
    }
    return t.str();
}

}  // namespace

std::string smallpkt_report(const std::vector<json>& records) {
    auto setups = select(records, {{"event", "setup"}});
    const json setup = setups.empty() ? json::object() : setups.front();
    const auto configs = configs_of(setup, records);
    const int passes = setup.value("passes", 0);
    const uint64_t rate = setup.value("rate_pps", uint64_t{0});
    std::string text = "# Small-packet forwarding benchmark, " + setup.value("date", utc_now()) + "\n\n";
    text += "Machine: " + setup.value("machine", machine_line()) + "; load average at start " +
            setup.value("load_start", std::string("?")) + "\n\n";
    text += std::to_string(setup.value("frame_bytes", 60) + 4) + "-byte frames (" +
            std::to_string(setup.value("frame_bytes", 60)) + " bytes and the FCS a veth does not carry), UDP over " +
            std::to_string(setup.value("flows", 256)) +
            " flows (one source port each from " + std::to_string(setup.value("first_source_port", 0)) + "), LAN host 198.18.1.10 → WAN host 198.18.100.200 through the "
            "firewall namespace; trafgen sends from CPU 0, a counter on the WAN host's veth (native XDP, and TC "
            "ingress for bpf_redirect_peer) counts and drops. " +
            std::to_string(passes) + " pass(es) of " + std::to_string(setup.value("seconds", 0)) +
            " s per measurement, configurations interleaved (pass p starts at the p-th).\n\n";
    text += "## At a fixed rate: " + std::to_string(rate) + " packets/s offered\n\n" +
            rate_table(records, configs, "fixed") + "\n";
    text += "## Unlimited: as fast as one trafgen core sends\n\n" + rate_table(records, configs, "unlimited") + "\n";
    text +=
        "Cells: median (min–max) over passes. Ratios: per pass, against the configuration of the same pass and "
        "rate; median (min–max) of those.\n"
        "CPU ns/pkt: the softirq time of all CPUs (/proc/stat, the kernel's tick-sampled accounting) over the "
        "window, divided by the packets the receiver counted. It holds the firewall's receive, its forwarding "
        "(kernel, nftables, XDP or TC) and the transmit into the WAN host's veth, and the receiver's counting "
        "program: the veth and receiver work is the same for every configuration, so the differences and ratios "
        "are the firewall's. The generator's own sending (system time) is not in it; busy ns/pkt is every CPU's "
        "non-idle time over the same window, the generator and everything else included.\n";
    std::string paths;
    for (const auto& r : records)
        if (r.contains("config") && r.contains("in_path"))
            paths += r["config"].get<std::string>() + " " + r.value("rate", "") + " pass " +
                     std::to_string(r.value("pass", 0)) + ": " + r["in_path"].get<std::string>() +
                     (r.value("received_at_tc", uint64_t{0}) ? ", " + std::to_string(r["received_at_tc"].get<uint64_t>()) +
                                                                  " received at TC ingress"
                                                            : "") +
                     "\n";
    if (!paths.empty()) text += "\nWhat proved each measurement's path:\n\n```\n" + paths + "```\n";
    return text;
}

}  // namespace sluice::bench
