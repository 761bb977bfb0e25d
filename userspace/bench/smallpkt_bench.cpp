// `sluice bench smallpkt` (docs/benchmarks.md), one run: on the single lab
// (LAN host -> firewall namespace -> WAN host), trafgen on the LAN host
// sends 64-byte UDP frames over 256 flows to the WAN host, where a receiver
// (bpf/bench_sink.bpf.c) counts and drops them; the firewall's CPU time per
// forwarded packet comes from the kernel's own accounting over the same
// window (smallpkt_window.h says what it includes). Configurations of the
// firewall, interleaved (pass p starts at the p-th):
//   kernel          kernel forwarding, nothing attached
//   nft-ct          nftables conntrack (a forward chain with ct state)
//   sluice-native   sluice, xdp-mode: native on lan0 and wan0
//   sluice-tc       sluice, xdp-mode: tc
//   sluice-generic  sluice, xdp-mode: generic
//   xdp-redirect    the minimal XDP redirect (bpf/baseline_redirect.bpf.c)
//                   native on lan0, redirecting to wan0
// Each is measured at a fixed rate below the platform's cap and once
// unlimited. Every measurement proves its configuration was the one in the
// path (smallpkt_checks.h) or the run fails.
//
// CPUs: trafgen pins its one sending process to CPU 0, and a veth hands a
// frame to its peer on the sending CPU, so the whole path runs in softirq
// on CPU 0; the sluice daemon runs on CPU 1, out of its way.
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>

#include "common/option_checks.h"
#include "bench/benchmark.h"
#include "bench/interrupt.h"
#include "bench/lab.h"
#include "bench/link_counters.h"
#include "bench/minimal_redirect.h"
#include "bench/nft_firewall.h"
#include "bench/packet_sink.h"
#include "bench/report.h"
#include "bench/schedule.h"
#include "bench/sluice_firewall.h"
#include "bench/smallpkt_checks.h"
#include "bench/smallpkt_report.h"
#include "bench/smallpkt_trafgen.h"
#include "bench/smallpkt_window.h"
#include "bench/synflood_checks.h"
#include "bench/synflood_trafgen.h"
#include "cluster/topology.h"

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;

// 0 = not given: the default, or the --quick value.
struct Options {
    int passes = 0;   // 3; --quick 1
    int seconds = 0;  // 10; --quick 2
    uint64_t rate = 150000;
    std::string configs = "kernel nft-ct sluice-native sluice-tc sluice-generic xdp-redirect";
};

constexpr int kDaemonCpu = 1;        // trafgen sends from CPU 0 (it pins itself there)
constexpr uint16_t kFlowPort = 9;    // UDP discard
constexpr double kWarmupSeconds = 1;  // trafgen up, every flow's first packet (sessions) behind us
const std::vector<std::string> kFirewallInterfaces{"lan0", "wan0"};

const char* kNftConntrack = R"(table inet bench {
  chain forward { type filter hook forward priority 0; policy drop;
    ct state established,related counter accept
    iifname "lan0" oifname "wan0" udp dport 9 ct state new counter accept
  }
}
)";

// Plain permit: the flows' policy and nothing else (native XDP is only
// allowed without inspect policies or a SYN proxy on this kernel).
std::string sluice_config(const std::string& mode) {
    return lab_zones_config(mode) + R"(applications:
  discard: { protocol: udp, destination-port: 9 }
policies:
  - { name: lan-udp, from: trust, to: untrust, source: [lan-net], application: [discard], action: permit }
default-action: deny
)";
}

double now_seconds() {
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

struct Bench {
    BenchRun& run;
    Lab& lab;
    SluiceFirewall& fw;
    NftFirewall& nft;
    PacketSink& sink;
    std::map<std::string, std::string> sluice_configs;  // mode -> config path
    std::string trafgen_config;
    int seconds = 10;
    long user_hz = 100;
    std::unique_ptr<MinimalRedirect> redirect;

    Status start_config(const std::string& config) {
        if (auto s = verify_no_pipeline(lab, "fw", kFirewallInterfaces); !s)
            return with_context("before " + config, s.error());
        const std::string mode = sluice_mode_of(config);
        if (!mode.empty()) return fw.start(sluice_configs.at(mode), kDaemonCpu);
        if (config == "nft-ct") return nft.load(kNftConntrack);
        if (config == "xdp-redirect") {
            auto r = MinimalRedirect::attach(lab.ns("fw"), "lan0", "wan0");
            if (!r) return r.error();
            redirect = std::move(*r);
        }
        return {};
    }

    Status stop_config(const std::string& config) {
        if (!sluice_mode_of(config).empty()) return fw.stop();
        if (config == "nft-ct") return nft.unload();
        if (config == "xdp-redirect") {
            redirect.reset();
            if (auto s = verify_no_pipeline(lab, "fw", kFirewallInterfaces); !s)
                return with_context("after the minimal redirect", s.error());
        }
        return {};
    }

    // Ok when what the configuration names is in the path now: sluice in
    // its mode on both interfaces, the minimal redirect natively on lan0,
    // nothing attached for kernel forwarding and nftables.
    Status prove_attached(const std::string& config, const std::string& what) {
        const std::string mode = sluice_mode_of(config);
        if (!mode.empty()) {
            if (auto s = fw.attached(); !s) return with_context(what, s.error());
            auto zones = lab.output("", {lab.sluice_binary(), "--netns", lab.ns("fw"), "show", "zones", "--json"});
            if (!zones) return zones.error();
            auto modes = sluice_modes_of(*zones);
            if (!modes) return modes.error();
            return check_sluice_modes(mode, *modes, kFirewallInterfaces);
        }
        if (config == "xdp-redirect") {
            auto links = lab.output("fw", {"ip", "-j", "link", "show"});
            if (!links) return links.error();
            auto prog = native_xdp_program(*links, "lan0");
            if (!prog) return with_context(what, prog.error());
            const std::string expected = std::string(MinimalRedirect::program_name()).substr(0, 15);
            if (*prog != expected)
                return make_error(what + ": lan0 runs " + *prog + ", not the minimal redirect (" + expected + ")");
            return {};
        }
        if (auto s = verify_no_pipeline(lab, "fw", kFirewallInterfaces); !s) return with_context(what, s.error());
        return {};
    }

    // The firewall's own count of what it forwarded: sluice's `forward`,
    // the nft rules' counters; nothing for the others.
    Result<std::optional<uint64_t>> firewall_count(const std::string& config) {
        if (!sluice_mode_of(config).empty()) {
            auto c = fw.stats();
            if (!c) return c.error();
            auto it = c->find("forward");
            return std::optional<uint64_t>(it == c->end() ? 0 : it->second);
        }
        if (config == "nft-ct") {
            auto n = nft.counted_packets();
            if (!n) return n.error();
            return std::optional<uint64_t>(*n);
        }
        return std::optional<uint64_t>();
    }

    Result<WindowReading> reading(SinkCounts* sink_counts, TxCounters* lan_tx) {
        WindowReading r;
        r.at_seconds = now_seconds();
        auto cpu = parse_cpu_sample(read_text("/proc/stat"));
        if (!cpu) return cpu.error();
        r.cpu = *cpu;
        auto counts = sink.read();
        if (!counts) return counts.error();
        r.received = counts->flow_frames;
        *sink_counts = *counts;
        auto tx = tx_counters(lab.ns("lan"), "eth0");
        if (!tx) return tx.error();
        r.offered = tx->packets + tx->dropped;
        *lan_tx = *tx;
        return r;
    }

    Status measure(int pass, const std::string& config, uint64_t rate) {
        const std::string rate_name = rate ? "fixed" : "unlimited";
        const std::string what = config + (rate ? " at " + std::to_string(rate) + " pps" : " unlimited") +
                                 " pass " + std::to_string(pass);
        if (auto s = prove_attached(config, what); !s) return s;
        auto count0 = firewall_count(config);
        if (!count0) return count0.error();

        auto flood = TrafgenFlood::start(lab.ns("lan"), "eth0", trafgen_config, lab.tmp() + "/trafgen.log", rate);
        if (!flood) return flood.error();
        if (auto s = pause(kWarmupSeconds); !s) return s;
        SinkCounts sink0, sink1;
        TxCounters tx0, tx1;
        auto before = reading(&sink0, &tx0);
        if (!before) return before.error();
        if (auto s = pause(seconds); !s) return s;
        auto after = reading(&sink1, &tx1);
        if (!after) return after.error();
        const bool ran_through = (*flood)->running();
        const std::string trafgen_log = (*flood)->log();
        if (auto s = (*flood)->stop(); !s) return s;
        if (!ran_through) return make_error(what + ": trafgen stopped early: " + trafgen_log);

        auto count1 = firewall_count(config);
        if (!count1) return count1.error();
        if (auto s = prove_attached(config, what + ", after the run"); !s) return s;
        auto w = window_result(*before, *after, user_hz);
        if (!w) return with_context(what, w.error());
        std::string in_path;
        if (*count1) {
            const uint64_t forwarded = **count1 - **count0;
            const std::string counter = config == "nft-ct" ? "the nft counters" : "sluice's forward counter";
            if (auto s = check_forwarded(what + ": " + counter, forwarded, w->received_packets); !s) return s;
            in_path = counter + " +" + std::to_string(forwarded);
        } else {
            in_path = config == "xdp-redirect" ? "xdp_baseline_redirect native on lan0" : "nothing attached";
        }
        const uint64_t at_tc = sink1.flow_frames_at_tc - sink0.flow_frames_at_tc;
        const uint64_t others = (sink1.frames - sink0.frames) - (sink1.flow_frames - sink0.flow_frames);
        run.results->add({{"pass", pass},
                          {"config", config},
                          {"rate", rate_name},
                          {"target_pps", rate},
                          {"seconds", w->seconds},
                          {"offered_packets", w->offered_packets},
                          {"received_packets", w->received_packets},
                          {"received_at_tc", at_tc},
                          {"dropped_at_lan_host", tx1.dropped - tx0.dropped},
                          {"other_frames", others},
                          {"offered_pps", w->offered_pps},
                          {"received_pps", w->received_pps},
                          {"loss_percent", w->loss_percent},
                          {"softirq_seconds", w->softirq_seconds},
                          {"busy_seconds", w->busy_seconds},
                          {"softirq_ns_per_packet", w->softirq_ns_per_packet},
                          {"busy_ns_per_packet", w->busy_ns_per_packet},
                          {"in_path", in_path}});
        run.out() << "pass " << pass << " " << config << std::string(15 - std::min<size_t>(config.size(), 14), ' ')
                  << rate_name << ": offered " << fixed(w->offered_pps / 1e6, 3) << " Mpps, received "
                  << fixed(w->received_pps / 1e6, 3) << " Mpps, loss " << fixed(w->loss_percent, 2) << " %, "
                  << fixed(w->softirq_ns_per_packet, 0) << " ns softirq/pkt (" << fixed(w->busy_ns_per_packet, 0)
                  << " busy); " << in_path << (at_tc ? ", " + std::to_string(at_tc) + " arrived at TC" : "")
                  << "\n";
        return {};
    }

    Status measure_config(int pass, const std::string& config, uint64_t rate) {
        if (auto s = start_config(config); !s) return s;
        for (uint64_t r : {rate, uint64_t{0}}) {
            if (auto s = check_interrupted(); !s) return s;
            if (auto s = measure(pass, config, r); !s) return s;
        }
        return stop_config(config);
    }
};

Status run_smallpkt(BenchRun& run, const Options& o) {
    if (auto s = check_machine({"trafgen", "nft", "conntrack", "taskset"}); !s) return s;
    auto configs = parse_configs(o.configs);
    if (!configs) return with_context("--configs", configs.error());
    const int passes = o.passes ? o.passes : run.quick ? 1 : 3;
    const int seconds = o.seconds ? o.seconds : run.quick ? 2 : 10;
    const long user_hz = sysconf(_SC_CLK_TCK);

    auto lab_r = Lab::create("single", run.prefix, run.out());
    if (!lab_r) return lab_r.error();
    Lab& lab = **lab_r;
    auto mac = [&](const std::string& node, const std::string& dev) -> Result<std::string> {
        auto link = lab.output(node, {"ip", "-j", "link", "show", dev});
        if (!link) return link.error();
        return mac_of(*link);
    };
    auto fw_lan_mac = mac("fw", "lan0");
    if (!fw_lan_mac) return fw_lan_mac.error();
    auto lan_mac = mac("lan", "eth0");
    if (!lan_mac) return lan_mac.error();
    auto wan_mac = mac("wan", "eth0");
    if (!wan_mac) return wan_mac.error();
    // The firewall knows the WAN host's MAC for good: no ARP in any
    // configuration's path, none that goes stale while XDP forwards.
    if (auto s = lab.must("fw", {"ip", "neigh", "replace", cluster::kWanHost4, "lladdr", *wan_mac, "dev", "wan0",
                                 "nud", "permanent"});
        !s)
        return s;

    UdpFlowsSpec spec;
    spec.destination_mac = *fw_lan_mac;
    spec.source_mac = *lan_mac;
    spec.source = cluster::kLanHost4;
    spec.destination = cluster::kWanHost4;
    spec.destination_port = kFlowPort;
    auto packets = trafgen_udp_flows_config(spec);
    if (!packets) return packets.error();
    auto trafgen_config = lab.write_file("udp-flows.cfg", *packets);
    if (!trafgen_config) return trafgen_config.error();

    auto sink = PacketSink::attach(lab.ns("wan"), "eth0", kFlowPort);
    if (!sink) return sink.error();

    SluiceFirewall fw(lab);
    NftFirewall nft(lab);
    Bench bench{run, lab, fw, nft, **sink, {}, *trafgen_config, seconds, user_hz, nullptr};
    for (const auto& config : *configs) {
        const std::string mode = sluice_mode_of(config);
        if (mode.empty()) continue;
        auto path = lab.write_file("sluice-" + mode + ".yaml", sluice_config(mode));
        if (!path) return path.error();
        if (auto s = fw.check(*path); !s) return s;
        bench.sluice_configs[mode] = *path;
    }

    run.results->add({{"event", "setup"},
                      {"passes", passes},
                      {"seconds", seconds},
                      {"rate_pps", o.rate},
                      {"configs", *configs},
                      {"flows", spec.flows},
                      {"first_source_port", spec.first_source_port},
                      {"frame_bytes", spec.frame_bytes},
                      {"user_hz", user_hz},
                      {"date", utc_now()},
                      {"machine", machine_line()},
                      {"load_start", load_average()}});
    run.out() << "== small packets: " << passes << " pass(es) x " << configs->size() << " configurations x (" << o.rate
              << " pps, unlimited), " << seconds << " s each; " << spec.flows << " UDP flows of "
              << spec.frame_bytes + 4 << "-byte frames\n";
    for (int pass = 1; pass <= passes; ++pass)
        for (const auto& config : rotated(*configs, pass))
            if (auto s = bench.measure_config(pass, config, o.rate); !s) return s;
    run.results->add({{"event", "end"}, {"load_end", load_average()}});
    return {};
}

}  // namespace

Benchmark smallpkt_benchmark() {
    auto o = std::make_shared<Options>();
    Benchmark b;
    b.name = "smallpkt";
    b.summary =
        "64-byte UDP over 256 flows at a fixed rate and unlimited: Mpps, loss and CPU ns per forwarded packet for "
        "kernel forwarding, nftables conntrack, sluice native XDP / tc / generic XDP and a minimal XDP redirect";
    b.doc = "docs/benchmarks.md";
    b.add_options = [o](CLI::App& app) {
        app.add_option("--passes", o->passes,
                       "passes (default 3, --quick 1); each measures every configuration, rotating which goes first")
            ->check(positive_number());
        app.add_option("--time", o->seconds, "seconds per measurement (default 10, --quick 2)")
            ->check(positive_number());
        app.add_option("--rate", o->rate,
                       "the fixed rate, packets per second; keep it below the platform's cap (docs/benchmarks.md)")
            ->capture_default_str()
            ->check(positive_number());
        app.add_option("--configs", o->configs,
                       "the configurations, space- or comma-separated: kernel nft-ct sluice-native sluice-tc "
                       "sluice-generic xdp-redirect")
            ->capture_default_str();
    };
    b.run = [o](BenchRun& run) -> Status { return run_smallpkt(run, *o); };
    b.report = smallpkt_report;
    return b;
}

}  // namespace sluice::bench
