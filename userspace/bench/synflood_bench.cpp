// `sluice bench synflood` (docs/host-protection.md), one run: on the single
// lab (WAN host -> firewall namespace -> LAN host), trafgen sends
// spoofed-source SYNs (198.19.x.y, random ports and sequence numbers) at the
// highest rate one generator core reaches towards a permitted service on the
// LAN host, while tests/sluice_connrate opens short connections (connect,
// 80 B request, 200 B answer, close; a connection slower than 1 s fails)
// from the WAN host to the same service. Per system, without and with the
// flood:
//   none          kernel forwarding, no firewall
//   sluice        sluice, no screen (every permitted SYN creates a session)
//   sluice-proxy  sluice, `screen: { syn-proxy: always }` on the WAN zone
//   sluice-auto   sluice, `screen: { syn-proxy: { above: 1000 } }`
//   nft-ct        nftables conntrack (ct state new tcp dport ... accept)
//   nft-synproxy  nftables synproxy (notrack the SYNs, synproxy the rest)
// Reported: connections per second with the flood as a ratio to the same
// system without it (same pass, back to back), the SYN rate that reached the
// firewall, the firewall's sessions / conntrack entries after the flood, and
// the CPU busy share of the whole machine (2 cores: generator, firewall and
// hosts share it) with its softirq part. Every pass runs every system, in a
// rotating order; cells are median (min–max) over passes. A run whose system
// is not in the path (XDP not attached, or attached where no sluice runs;
// nft counters still; no cookies sent; no session hit; the flood not at the
// firewall) fails.
//
// Part (b), one source flooding with real connections: one WAN address
// (198.18.100.201) opens connections as fast as 64 in flight allow while
// legitimate clients on 16 other addresses (198.18.100.10-25, --concurrency
// in flight together) go on, through sluice without limits and with
// `source-limit: { new-sessions: 2000 }`; reported: the legitimate clients'
// rate with the flooder as a ratio to without it, and the rate the flooder
// got. With the limit on, a run where it refused nothing fails.
//
// CPUs: the connections' client and server run on CPU 1; trafgen pins its
// sending process to CPU 0. veth processes a packet on the CPU that sent it,
// so the flood's path through the firewall runs on CPU 0 and the
// connections' on CPU 1: what the flood does to the connections is the
// firewall's state (and any lock it shares), not two processes fighting for
// one core. The sluice daemon (its session GC walks the table every second
// while connections open) runs on CPU 0 too, with the rest of the
// firewall's flood work; so does part (b)'s flooder.
#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "common/option_checks.h"
#include "bench/benchmark.h"
#include "bench/connrate_run.h"
#include "bench/interrupt.h"
#include "bench/lab.h"
#include "bench/nft_firewall.h"
#include "bench/report.h"
#include "bench/schedule.h"
#include "bench/sluice_firewall.h"
#include "bench/synflood_checks.h"
#include "bench/synflood_trafgen.h"
#include "cluster/topology.h"

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;

// 0 = not given: the default, or the --quick value.
struct Options {
    int passes = 0;   // 3; --quick 1
    int seconds = 0;  // 5; --quick 2
    std::string systems = "none sluice sluice-proxy sluice-auto nft-ct nft-synproxy";
    int concurrency = 8;
    bool skip_b = false;
};

const char* kPorts = "5301-5316";
const char* kSpoofedNet = "198.19.0.0/16";
const char* kFlooderSource = "198.18.100.201";
constexpr int kFlooderConcurrency = 64;
constexpr uint64_t kFlooderOffset = 500000000;  // its own tuples, far from the legitimate clients'
constexpr int kFloodCpu = 0;                    // trafgen (it pins itself), the sluice daemon, (b)'s flooder
constexpr int kConnectionCpu = 1;               // the connections' client and server

std::string sluice_config(const std::string& screen) {
    return "interfaces: { lan0: { zone: trust }, wan0: { zone: untrust } }\n"
           "zones:\n"
           "  trust: {}\n"
           "  untrust: { screen: " +
           screen +
           " }\n"
           "applications: { bench: { protocol: tcp, destination-port: [5301-5316] } }\n"
           "policies:\n"
           "  - { name: in, from: untrust, to: trust, application: [bench], action: permit }\n"
           "  - { name: out, from: trust, to: untrust, action: permit }\n"
           "default-action: deny\n"
           "timeouts: { tcp-time-wait: " +
           std::string(kBenchTimeWait) + " }\n";
}

std::string sluice_screen(const std::string& system) {
    if (system == "sluice-proxy") return "{ syn-proxy: always }";
    if (system == "sluice-auto") return "{ syn-proxy: { above: 1000 } }";
    return "{}";
}

const char* kNftCt = R"(table inet bench {
  chain forward { type filter hook forward priority 0; policy drop;
    ct state established,related counter accept
    iifname "wan0" ct state new tcp dport 5301-5316 counter accept
    iifname "lan0" accept
  }
}
)";

const char* kNftSynproxy = R"(table inet bench {
  chain pre { type filter hook prerouting priority raw; policy accept;
    iifname "wan0" tcp dport 5301-5316 tcp flags syn notrack
  }
  chain forward { type filter hook forward priority 0; policy drop;
    iifname "wan0" tcp dport 5301-5316 ct state invalid,untracked counter synproxy mss 1460 wscale 7 timestamp sack-perm
    ct state invalid drop
    ct state established,related counter accept
    iifname "lan0" accept
  }
}
)";

// The client's ACK must reach synproxy as invalid, not be picked up by
// conntrack as a connection in progress (the table exists now). Set back to
// the kernel's default when the system is stopped.
const char* kStrictTcp = "net.netfilter.nf_conntrack_tcp_loose=0";
const char* kLooseTcp = "net.netfilter.nf_conntrack_tcp_loose=1";
// Closed flows kept as briefly as sluice keeps them (kBenchTimeWait), set
// back to the kernel's default (120 s) when the system is stopped.
const std::string kShortTimeWait =
    "net.netfilter.nf_conntrack_tcp_timeout_time_wait=" + std::to_string(kBenchTimeWaitSeconds);
const char* kDefaultTimeWait = "net.netfilter.nf_conntrack_tcp_timeout_time_wait=120";

struct PartBScreen {
    std::string label, screen;
    bool limit;
};
const std::vector<PartBScreen> kPartBScreens{
    {"no limit", "{}", false},
    {"source-limit: { new-sessions: 2000 }", "{ source-limit: { new-sessions: 2000 } }", true}};

std::vector<std::string> legitimate_sources() {
    std::vector<std::string> out;
    for (int i = 10; i <= 25; ++i) out.push_back("198.18.100." + std::to_string(i));
    return out;
}

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

uint64_t counter(const Counters& c, const std::string& name) {
    auto it = c.find(name);
    return it == c.end() ? 0 : it->second;
}

// Everything one measurement needs from the lab.
struct Bench {
    BenchRun& run;
    Lab& lab;
    SluiceFirewall& fw;
    NftFirewall& nft;
    std::string connrate;
    std::map<std::string, std::string> configs;  // system or part (b) label -> sluice config path
    std::string trafgen_config;
    int seconds = 5, concurrency = 8;
    uint64_t offset = 0;  // every run continues the tuples where the last one stopped

    Result<uint64_t> rx_packets() {
        auto out = lab.output("fw", {"ip", "-j", "-s", "link", "show", "wan0"});
        if (!out) return out.error();
        return rx_packets_of(*out);
    }

    Result<ConnrateOutcome> connections(const std::vector<std::string>& sources) {
        ConnrateClient c;
        c.node = "wan";
        c.address = cluster::kLanHost4;
        c.ports = kPorts;
        c.sources = sources;
        c.duration = seconds;
        c.warmup = 0.5;
        c.threads = 1;
        c.concurrency = concurrency;
        c.timeout_ms = 1000;
        c.cpu = kConnectionCpu;
        return run_connrate(lab, connrate, c, &offset);
    }

    Status start_system(const std::string& system) {
        if (is_sluice_system(system)) return fw.start(configs.at(system), kFloodCpu);
        if (auto s = verify_no_pipeline(lab, "fw", {"lan0", "wan0"}); !s) return with_context(system, s.error());
        if (system == "nft-ct") return nft.load(kNftCt, {kShortTimeWait});
        if (system == "nft-synproxy") return nft.load(kNftSynproxy, {kStrictTcp, kShortTimeWait});
        return {};
    }

    Status stop_system(const std::string& system) {
        if (is_sluice_system(system))
            if (auto s = fw.stop(); !s) return s;
        if (is_nft_system(system)) {
            if (auto s = nft.unload(); !s) return s;  // flushes conntrack
            if (auto s = lab.must("fw", {"sysctl", "-qw", kDefaultTimeWait}); !s) return s;
            if (system == "nft-synproxy") return lab.must("fw", {"sysctl", "-qw", kLooseTcp});
            return {};
        }
        // The next system starts from an empty conntrack table.
        if (auto s = lab.must("fw", {"conntrack", "-F"}); !s) return with_context("conntrack -F", s.error());
        return {};
    }

    // Flows from the spoofed sources / all flows in the system's table now;
    // nothing for "none".
    Result<std::optional<TableSize>> table_size(const std::string& system) {
        if (is_sluice_system(system)) {
            auto doc = fw.show("sessions");
            if (!doc) return doc.error();
            auto t = sluice_table_size(*doc);
            if (!t) return t.error();
            return std::optional<TableSize>(*t);
        }
        if (is_nft_system(system)) {
            TableSize t;
            // grep -c: exit 1 when no line matched (a count of 0).
            auto r = lab.run("fw", {"grep", "-c", "src=198\\.19\\.", "/proc/net/nf_conntrack"});
            if (!r) return r.error();
            if (r->exit_status > 1) return make_error("reading /proc/net/nf_conntrack: " + r->err);
            try {
                t.spoofed = std::stoull(r->out);
            } catch (...) {
                return make_error("grep -c printed no count: " + r->out);
            }
            auto all = nft.conntrack_count();
            if (!all) return all.error();
            t.all = *all;
            return std::optional<TableSize>(t);
        }
        return std::optional<TableSize>();
    }

    Status measure(int pass, const std::string& system) {
        const std::string what = system + " pass " + std::to_string(pass);
        if (auto s = start_system(system); !s) return s;
        const std::vector<std::string> wan_host{cluster::kWanHost4};

        auto r0 = rx_packets();
        if (!r0) return r0.error();
        auto b0 = Clock::now();
        auto base = connections(wan_host);
        if (!base) return with_context(what + ", without the flood", base.error());
        auto r1 = rx_packets();
        if (!r1) return r1.error();
        PacketWindow without{*r1 - *r0, since(b0)};

        InPathEvidence evidence;
        uint64_t full_before = 0;
        if (is_sluice_system(system)) {
            auto c = fw.stats();
            if (!c) return c.error();
            evidence.cookies_before = counter(*c, "syn-proxy-cookie-sent");
            full_before = counter(*c, "drop-session-table-full");
        }
        auto flood = TrafgenFlood::start(lab.ns("wan"), "eth0", trafgen_config, lab.tmp() + "/trafgen.log");
        if (!flood) return flood.error();
        if (auto s = pause(1); !s) return s;
        auto cpu0 = parse_cpu_sample(read_text("/proc/stat"));
        if (!cpu0) return cpu0.error();
        auto s0 = Clock::now();
        auto rx1 = rx_packets();
        if (!rx1) return rx1.error();
        auto flooded = connections(wan_host);
        if (!flooded) return with_context(what + ", with the flood", flooded.error());
        auto rx2 = rx_packets();
        if (!rx2) return rx2.error();
        PacketWindow with{*rx2 - *rx1, since(s0)};
        auto cpu1 = parse_cpu_sample(read_text("/proc/stat"));
        if (!cpu1) return cpu1.error();
        if (!(*flood)->running()) return make_error(what + ": trafgen stopped early: " + (*flood)->log());
        if (auto s = (*flood)->stop(); !s) return s;

        if (auto s = check_flood_reached(system, without, with); !s) return s;
        std::string in_path;
        if (is_sluice_system(system)) {
            if (auto s = fw.attached(); !s) return with_context(what + ", after the flood", s.error());
            auto c = fw.stats();
            if (!c) return c.error();
            evidence.cookies_after = counter(*c, "syn-proxy-cookie-sent");
            evidence.session_hits = counter(*c, "session-hit");
            // Only the unprotected sluice may fill its table (with spoofed flows).
            if (system != "sluice")
                if (auto s = check_table_not_full(what, counter(*c, "drop-session-table-full") - full_before); !s)
                    return s;
            in_path = "syn-proxy-cookie-sent +" + std::to_string(evidence.cookies_after - evidence.cookies_before) +
                      " in the flood, session-hit " + std::to_string(evidence.session_hits);
        } else if (is_nft_system(system)) {
            auto n = nft.counted_packets();
            if (!n) return n.error();
            evidence.nft_packets = *n;
            in_path = "nft counters " + std::to_string(*n) + " packets";
        } else {
            if (auto s = verify_no_pipeline(lab, "fw", {"lan0", "wan0"}); !s) return with_context(what, s.error());
            in_path = "no XDP program";
        }
        if (auto s = check_in_path(system, evidence); !s) return s;
        auto size = table_size(system);
        if (!size) return size.error();

        const CpuShare cpu = cpu_share(*cpu0, *cpu1);
        const double syns = syn_rate(without, with);
        nlohmann::json rec{{"part", "a"},
                           {"pass", pass},
                           {"system", system},
                           {"base_per_second", base->per_second},
                           {"flood_per_second", flooded->per_second},
                           {"syn_per_second", syns},
                           {"rx_packets_without_flood", without.packets},
                           {"seconds_without_flood", without.seconds},
                           {"rx_packets_with_flood", with.packets},
                           {"seconds_with_flood", with.seconds},
                           {"cpu_busy_percent", cpu.busy_percent},
                           {"softirq_percent", cpu.softirq_percent},
                           {"failures", flooded->failures},
                           {"failures_by_kind", flooded->failures_by_kind},
                           {"base_failures", base->failures},
                           {"in_path", in_path}};
        std::string table = "-";
        if (*size) {
            rec["spoofed_flows"] = (*size)->spoofed;
            rec["all_flows"] = (*size)->all;
            table = std::to_string((*size)->spoofed) + "/" + std::to_string((*size)->all);
        }
        run.results->add(rec);
        run.out() << "pass " << pass << " " << system << ": " << fixed(base->per_second, 1) << " conn/s without flood, "
                  << fixed(flooded->per_second, 1) << " with (" << fixed(syns, 0) << " SYN/s at the firewall), table "
                  << table << ", CPU " << fixed(cpu.busy_percent, 1) << "% (softirq " << fixed(cpu.softirq_percent, 1)
                  << "%), " << flooded->failures << " failed connections; " << in_path << "\n";
        if (auto s = stop_system(system); !s) return s;
        return pause(1);
    }

    Status measure_b(int pass, const PartBScreen& b) {
        const std::string what = "part (b) " + b.label + " pass " + std::to_string(pass);
        if (auto s = fw.start(configs.at(b.label), kFloodCpu); !s) return s;
        const auto legit = legitimate_sources();
        auto start = fw.stats();
        if (!start) return start.error();
        auto alone = connections(legit);
        if (!alone) return with_context(what + ", alone", alone.error());
        auto c0 = fw.stats();
        if (!c0) return c0.error();
        const uint64_t drops0 = counter(*c0, "drop-screen-source-rate") + counter(*c0, "drop-screen-source-sessions");

        ConnrateClient f;
        f.node = "wan";
        f.address = cluster::kLanHost4;
        f.ports = kPorts;
        f.sources = {kFlooderSource};
        f.duration = seconds + 2;
        f.warmup = 0;
        f.threads = 1;
        f.concurrency = kFlooderConcurrency;
        f.timeout_ms = 1000;
        f.cpu = kFloodCpu;
        // The flooder runs alongside the legitimate clients; the future is
        // waited for on every path out of here.
        auto flooder = std::async(std::launch::async, [this, f] {
            uint64_t flooder_offset = kFlooderOffset;
            return run_connrate(lab, connrate, f, &flooder_offset);
        });
        if (auto s = pause(0.5); !s) {
            flooder.wait();
            return s;
        }
        auto with = connections(legit);
        auto fl = flooder.get();
        if (!with) return with_context(what + ", with the flooder", with.error());
        if (!fl) return with_context(what + ", the flooder", fl.error());
        auto c1 = fw.stats();
        if (!c1) return c1.error();
        const uint64_t drops1 = counter(*c1, "drop-screen-source-rate") + counter(*c1, "drop-screen-source-sessions");
        const uint64_t refused = drops1 >= drops0 ? drops1 - drops0 : 0;
        if (auto s = check_table_not_full(what, counter(*c1, "drop-session-table-full") -
                                                    counter(*start, "drop-session-table-full"));
            !s)
            return s;
        if (auto s = check_source_limit(b.limit, refused); !s) return s;
        run.results->add({{"part", "b"},
                          {"pass", pass},
                          {"screen", b.label},
                          {"limit", b.limit},
                          {"legit_alone_per_second", alone->per_second},
                          {"legit_with_flooder_per_second", with->per_second},
                          {"flooder_per_second", fl->per_second},
                          {"flooder_failures", fl->failures},
                          {"legit_failures", with->failures},
                          {"refused", refused}});
        run.out() << "pass " << pass << " (b) " << b.label << ": legitimate " << fixed(alone->per_second, 1)
                  << " conn/s alone, " << fixed(with->per_second, 1) << " with the flooder; flooder "
                  << fixed(fl->per_second, 1) << " conn/s; " << refused << " limited\n";
        if (auto s = fw.stop(); !s) return s;
        return pause(1);
    }
};

Status run_synflood(BenchRun& run, const Options& o) {
    if (auto s = check_machine({"trafgen", "nft", "conntrack", "taskset"}); !s) return s;
    auto tool = run.tool("sluice_connrate");
    if (!tool) return tool.error();
    auto systems = parse_systems(o.systems);
    if (!systems) return with_context("--systems", systems.error());
    const int passes = o.passes ? o.passes : run.quick ? 1 : 3;
    const int seconds = o.seconds ? o.seconds : run.quick ? 2 : 5;

    auto lab_r = Lab::create("single", run.prefix, run.out());
    if (!lab_r) return lab_r.error();
    Lab& lab = **lab_r;
    // Spoofed sources live in 198.19.0.0/16: the firewall routes their
    // answers back to the WAN host, which drops them (it does not forward).
    if (auto s = lab.must("fw", {"ip", "route", "add", kSpoofedNet, "via", cluster::kWanHost4}); !s) return s;
    ConnrateServer server;
    server.node = "lan";
    server.addresses = {cluster::kLanHost4};
    server.ports = kPorts;
    server.threads = 1;
    server.cpu = kConnectionCpu;
    if (auto p = start_connrate_server(lab, *tool, server, "connrate-server"); !p) return p.error();

    auto fw_link = lab.output("fw", {"ip", "-j", "link", "show", "wan0"});
    if (!fw_link) return fw_link.error();
    auto wan_link = lab.output("wan", {"ip", "-j", "link", "show", "eth0"});
    if (!wan_link) return wan_link.error();
    SynPacketSpec spec;
    auto fw_mac = mac_of(*fw_link);
    if (!fw_mac) return fw_mac.error();
    auto wan_mac = mac_of(*wan_link);
    if (!wan_mac) return wan_mac.error();
    spec.destination_mac = *fw_mac;
    spec.source_mac = *wan_mac;
    spec.destination = cluster::kLanHost4;
    auto packet = trafgen_syn_config(spec);
    if (!packet) return packet.error();
    auto trafgen_config = lab.write_file("syn.cfg", *packet);
    if (!trafgen_config) return trafgen_config.error();

    // Part (b): 16 legitimate sources and one flooding source on the WAN host.
    std::vector<std::string> extra = legitimate_sources();
    extra.push_back(kFlooderSource);
    for (const auto& a : extra)
        if (auto s = lab.must("wan", {"ip", "addr", "add", a + "/24", "dev", "eth0"}); !s) return s;

    SluiceFirewall fw(lab);
    NftFirewall nft(lab);
    Bench bench{run, lab, fw, nft, *tool, {}, *trafgen_config, seconds, o.concurrency, 0};
    auto add_config = [&](const std::string& key, const std::string& file, const std::string& screen) -> Status {
        auto path = lab.write_file(file, sluice_config(screen));
        if (!path) return path.error();
        if (auto s = fw.check(*path); !s) return s;
        bench.configs[key] = *path;
        return {};
    };
    for (const auto& sys : *systems)
        if (is_sluice_system(sys))
            if (auto s = add_config(sys, sys + ".yaml", sluice_screen(sys)); !s) return s;
    if (!o.skip_b)
        for (size_t i = 0; i < kPartBScreens.size(); ++i)
            if (auto s = add_config(kPartBScreens[i].label, "b" + std::to_string(i) + ".yaml", kPartBScreens[i].screen);
                !s)
                return s;

    run.results->add({{"event", "setup"},
                      {"passes", passes},
                      {"seconds", seconds},
                      {"concurrency", o.concurrency},
                      {"systems", *systems},
                      {"skip_b", o.skip_b},
                      {"date", utc_now()},
                      {"machine", machine_line()},
                      {"load_start", load_average()}});
    run.out() << "== SYN flood: " << passes << " pass(es) x " << systems->size() << " systems, " << seconds
              << " s of connections per measurement, " << o.concurrency << " in flight\n";
    for (int pass = 1; pass <= passes; ++pass)
        for (const auto& sys : rotated(*systems, pass)) {
            if (auto s = check_interrupted(); !s) return s;
            if (auto s = bench.measure(pass, sys); !s) return s;
        }
    if (!o.skip_b) {
        run.out() << "== (b) one source flooding with real connections\n";
        for (int pass = 1; pass <= passes; ++pass)
            for (const auto& b : kPartBScreens) {
                if (auto s = check_interrupted(); !s) return s;
                if (auto s = bench.measure_b(pass, b); !s) return s;
            }
    }
    run.results->add({{"event", "end"}, {"load_end", load_average()}});
    return {};
}

// a[p] / b[p] for every pass both have, 0 where b[p] is 0 (a system that got
// no connection through without the flood counts as 0, not as missing).
std::vector<double> ratios_or_zero(const std::map<int, double>& a, const std::map<int, double>& b) {
    std::vector<double> out;
    for (const auto& [pass, denominator] : b) {
        auto it = a.find(pass);
        if (it != a.end()) out.push_back(denominator ? it->second / denominator : 0.0);
    }
    return out;
}

// The record field's values in order of first appearance.
std::vector<std::string> first_seen(const std::vector<nlohmann::json>& records, const std::string& field) {
    std::vector<std::string> out;
    for (const auto& r : records)
        if (r.contains(field) && r[field].is_string()) {
            auto v = r[field].get<std::string>();
            if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
        }
    return out;
}

std::string report(const std::vector<nlohmann::json>& records) {
    auto setup = select(records, {{"event", "setup"}});
    nlohmann::json s = setup.empty() ? nlohmann::json::object() : setup.front();
    const int concurrency = s.value("concurrency", 8);
    std::string text = "# SYN-flood benchmark\n\n" + std::to_string(s.value("passes", 0)) + " pass(es), " +
                       std::to_string(s.value("seconds", 0)) + " s of connections per measurement, " +
                       std::to_string(concurrency) +
                       " in flight, 1 s timeout; flows: the firewall's sessions (sluice) or conntrack entries (nft) "
                       "after the flood, the legitimate connections' closed flows included.\n\n";
    if (s.contains("machine"))
        text += "Machine: " + s.value("machine", "") + ", " + s.value("date", "") +
                "; trafgen and the sluice daemon on CPU 0, the connections' client and server on CPU 1.\n\n";

    auto a = select(records, {{"part", "a"}});
    MarkdownTable t({"system", "conn/s without flood", "conn/s with flood", "with / without", "SYN/s at the firewall",
                     "flows from spoofed sources after", "all flows after", "CPU busy % (softirq %)",
                     "failed connections in the flood"});
    for (const auto& sys : first_seen(a, "system")) {
        const nlohmann::json m{{"part", "a"}, {"system", sys}};
        auto base = by_pass(records, m, "base_per_second");
        auto flood = by_pass(records, m, "flood_per_second");
        t.row({sys, format_spread(values(base), 0), format_spread(values(flood), 0),
               format_spread(ratios_or_zero(flood, base), 2),
               format_spread(values(by_pass(records, m, "syn_per_second")), 0),
               format_spread(values(by_pass(records, m, "spoofed_flows")), 0),
               format_spread(values(by_pass(records, m, "all_flows")), 0),
               format_spread(values(by_pass(records, m, "cpu_busy_percent")), 0) + " (" +
                   format_spread(values(by_pass(records, m, "softirq_percent")), 0) + ")",
               format_spread(values(by_pass(records, m, "failures")), 0)});
    }
    text += t.str();

    auto b = select(records, {{"part", "b"}});
    if (!b.empty()) {
        text +=
            "\n## (b) One source flooding with real connections (64 in flight from 198.18.100.201; "
            "legitimate: 16 sources, " +
            std::to_string(concurrency) + " in flight)\n\n";
        MarkdownTable tb({"sluice screen", "legitimate conn/s alone", "legitimate conn/s with the flooder",
                          "with / without", "flooder conn/s", "new sessions refused by the limit"});
        for (const auto& label : first_seen(b, "screen")) {
            const nlohmann::json m{{"part", "b"}, {"screen", label}};
            auto alone = by_pass(records, m, "legit_alone_per_second");
            auto with = by_pass(records, m, "legit_with_flooder_per_second");
            tb.row({label, format_spread(values(alone), 0), format_spread(values(with), 0),
                    format_spread(ratios_or_zero(with, alone), 2),
                    format_spread(values(by_pass(records, m, "flooder_per_second")), 0),
                    format_spread(values(by_pass(records, m, "refused")), 0)});
        }
        text += tb.str();
    }
    return text;
}

}  // namespace

Benchmark synflood_benchmark() {
    auto o = std::make_shared<Options>();
    Benchmark b;
    b.name = "synflood";
    b.summary =
        "spoofed SYN flood vs conn/s: none, sluice (no screen, SYN proxy always / above 1000), nftables "
        "conntrack and synproxy; (b) one source flooding with connections, without and with a source limit";
    b.doc = "docs/host-protection.md";
    b.add_options = [o](CLI::App& app) {
        app.add_option("--passes", o->passes,
                       "passes (default 3, --quick 1); each measures every system, rotating which goes first")
            ->check(positive_number());
        app.add_option("--time", o->seconds, "seconds of connections per measurement (default 5, --quick 2)")
            ->check(positive_number());
        app.add_option("--systems", o->systems,
                       "the systems, space- or comma-separated: none sluice sluice-proxy sluice-auto nft-ct "
                       "nft-synproxy")
            ->capture_default_str();
        app.add_option("--concurrency", o->concurrency, "connections in flight for the legitimate clients")
            ->capture_default_str()
            ->check(positive_number());
        app.add_flag("--skip-b", o->skip_b, "leave out part (b), one source flooding with real connections");
    };
    b.run = [o](BenchRun& run) -> Status { return run_synflood(run, *o); };
    b.report = report;
    return b;
}

}  // namespace sluice::bench
