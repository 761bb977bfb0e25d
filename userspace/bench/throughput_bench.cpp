// `sluice bench throughput` (docs/benchmarks.md), one run:
//   (a) per-packet cost of the XDP pipeline against a minimal XDP redirect
//       (tests/sluice_xdp_cost: BPF_PROG_TEST_RUN durations, interleaved passes),
//       and of an established flow with source NAT against the same without;
//   (b) iperf3 TCP LAN host -> WAN host through the single lab's firewall:
//       kernel forwarding vs sluice vs sluice with source NAT to the WAN
//       interface's address (generic XDP, what `auto` picks on veth), IPv4
//       and IPv6; the three rotate within every pass, the families alternate.
// Every sluice run proves its path from sluice's counters (XDP attached, rx
// moving with the bytes, NAT translated or not as the mode says) and from
// the address the iperf3 server saw; every kernel run proves no XDP program
// was attached.
#include <memory>

#include "common/option_checks.h"
#include "bench/benchmark.h"
#include "bench/iperf_run.h"
#include "bench/lab.h"
#include "bench/report.h"
#include "bench/schedule.h"
#include "bench/sluice_firewall.h"
#include "bench/interrupt.h"
#include "cluster/process.h"
#include "cluster/topology.h"
#include "perftest/path_check.h"

namespace sluice::bench {
namespace {

// 0 = not given: the default, or the --quick value.
struct Options {
    int passes = 0;      // 3; --quick 1
    int seconds = 0;     // 5; --quick 2
    int streams = 4;
    int xdp_passes = 0;  // 5; --quick 1
    bool skip_xdp = false;
    bool skip_iperf = false;
};

const char* kPolicies = R"(applications:
  iperf3: { protocol: tcp, destination-port: 5201 }
policies:
  - { name: lan-iperf, from: trust, to: untrust, source: [lan-net], application: [iperf3], action: permit }
  - { name: nothing-in, from: untrust, to: trust, action: deny }
default-action: deny
)";

const char* kNat = R"(nat:
  source:
    - { name: lan-out, from: trust, to: untrust, source: [lan-net], translate: interface }
)";

const std::vector<std::string> kModes{"kernel", "sluice", "sluice-nat"};

// Ok when sluice's counters over one run show the path the mode names: NAT
// translated in XDP, and every aggregate left to tc_egress_prog translated
// there; without NAT, nothing translated. And rx moved with the bytes.
Status check_counters(const std::string& mode, const Counters& d, double bytes, const std::string& what,
                      std::string* summary) {
    uint64_t xlat = d.count("nat-translated") ? d.at("nat-translated") : 0;
    uint64_t defer = d.count("nat-source-left-to-tc-egress") ? d.at("nat-source-left-to-tc-egress") : 0;
    uint64_t tc = d.count("tc-egress-nat-translated") ? d.at("tc-egress-nat-translated") : 0;
    uint64_t rx = d.count("rx") ? d.at("rx") : 0;
    *summary = "rx=" + std::to_string(rx) + " xdp_redirect=" +
               std::to_string(d.count("forward") ? d.at("forward") : 0) +
               " passed=" + std::to_string(sum_prefixed(d, "pass-")) +
               " dropped=" + std::to_string(sum_prefixed(d, "drop-")) + " " +
               nonzero_summary(d, {"pass-", "drop-"});
    if (mode == "sluice-nat" || xlat || tc)
        *summary += " nat-translated=" + std::to_string(xlat) + " nat-source-left-to-tc-egress=" +
                    std::to_string(defer) + " tc-egress-nat-translated=" + std::to_string(tc);
    const uint64_t needed = perftest::minimum_packets(bytes);
    if (rx < needed)
        return make_error(what + ": sluice's rx counter moved by " + std::to_string(rx) + ", but " +
                          std::to_string(static_cast<uint64_t>(bytes)) + " bytes need at least " +
                          std::to_string(needed) + " packets: the traffic did not go through sluice");
    if (mode == "sluice-nat" && (xlat == 0 || tc < defer))
        return make_error(what + ": sluice's counters say the run was not translated as configured: " + *summary);
    if (mode == "sluice" && (xlat || defer || tc))
        return make_error(what + ": a run without NAT translated packets: " + *summary);
    return {};
}

Status run_xdp_cost(BenchRun& run, const Options& o) {
    auto tool = run.tool("sluice_xdp_cost");
    if (!tool) return tool.error();
    const int passes = o.xdp_passes ? o.xdp_passes : run.quick ? 1 : 5;
    run.out() << "== (a) per-packet cost: sluice_xdp_cost (BPF_PROG_TEST_RUN), " << passes << " interleaved passes\n";
    std::string summary = "/tmp/sluice-bench-xdp-" + std::to_string(getpid()) + ".md";
    std::vector<std::string> argv{*tool, "--passes=" + std::to_string(passes), "--summary_out=" + summary};
    if (run.quick) argv.push_back("--calls=50");
    auto r = cluster::run_local(argv, std::chrono::minutes(30));
    std::string text = read_text(summary);
    std::remove(summary.c_str());
    if (!r) return r.error();
    run.out() << r->out;
    if (r->exit_status != 0) return make_error("sluice_xdp_cost failed:\n" + r->out + r->err);
    run.results->add({{"part", "a"}, {"summary_markdown", text}});
    return check_interrupted();
}

Status run_iperf_part(BenchRun& run, const Options& o) {
    const int passes = o.passes ? o.passes : run.quick ? 1 : 3;
    const int seconds = o.seconds ? o.seconds : run.quick ? 2 : 5;
    run.out() << "\n== (b) iperf3 LAN -> WAN through the firewall namespace: kernel forwarding vs sluice vs sluice + "
                 "source NAT\n   "
              << passes << " passes x (IPv4, IPv6) x (kernel, sluice, sluice-nat), iperf3 -t " << seconds << " -P "
              << o.streams << "\n";
    auto lab = Lab::create("single", run.prefix, run.out());
    if (!lab) return lab.error();
    auto config = (*lab)->write_file("fw.yaml", lab_zones_config() + kPolicies);
    auto nat_config = (*lab)->write_file("fw-nat.yaml", lab_zones_config() + kPolicies + kNat);
    if (!config) return config.error();
    if (!nat_config) return nat_config.error();
    SluiceFirewall fw(**lab);
    if (auto s = fw.check(*config); !s) return s;
    if (auto s = fw.check(*nat_config); !s) return s;
    run.results->add({{"part", "b"}, {"event", "setup"}, {"passes", passes}, {"seconds", seconds},
                      {"streams", o.streams}, {"date", utc_now()}, {"machine", machine_line()},
                      {"load_start", load_average()}});

    for (int pass = 1; pass <= passes; ++pass) {
        for (const auto& mode : rotated(kModes, pass)) {
            if (mode != "kernel") {
                if (auto s = fw.start(mode == "sluice" ? *config : *nat_config); !s) return s;
                if (pass == 1) run.out() << "   " << mode << " attached: " << fw.attach_summary() << "\n";
            }
            for (const auto& fam : families_for_pass(pass)) {
                if (auto s = check_interrupted(); !s) return s;
                const bool v4 = fam == "v4";
                const std::string what = "iperf3 " + mode + " " + fam + " pass " + std::to_string(pass);
                std::string expect_peer = mode == "sluice-nat" ? (v4 ? cluster::kFw0Wan4 : cluster::kFw0Wan6)
                                                               : (v4 ? cluster::kLanHost4 : cluster::kLanHost6);
                Counters before;
                if (mode == "kernel") {
                    if (auto s = verify_no_pipeline(**lab, "fw", {"lan0", "wan0"}); !s)
                        return with_context(what, s.error());
                } else {
                    if (auto s = fw.attached(); !s) return with_context(what, s.error());
                    auto b = fw.stats();
                    if (!b) return b.error();
                    before = *b;
                }
                IperfSpec spec;
                spec.target = v4 ? cluster::kWanHost4 : cluster::kWanHost6;
                spec.seconds = seconds;
                spec.streams = o.streams;
                auto outcome = run_iperf(**lab, spec);
                if (!outcome) return with_context(what, outcome.error());
                if (outcome->server_saw != expect_peer)
                    return make_error(what + ": the server saw " + outcome->server_saw + " as the client, expected " +
                                      expect_peer);
                std::string path;
                if (mode != "kernel") {
                    if (auto s = fw.attached(); !s) return with_context(what + ", after the run", s.error());
                    auto after = fw.stats();
                    if (!after) return after.error();
                    if (auto s = check_counters(mode, counter_delta(before, *after), outcome->client.receiver_bytes,
                                                what, &path);
                        !s)
                        return s;
                }
                run.results->add({{"part", "b"}, {"pass", pass}, {"system", mode}, {"family", fam},
                                  {"gbps", outcome->gbps()}, {"server_saw", outcome->server_saw}, {"path", path}});
                run.out() << "   pass " << pass << "  " << mode << std::string(10 - mode.size(), ' ') << " " << fam
                          << "  " << fixed(outcome->gbps(), 3) << " Gbit/s  server saw " << outcome->server_saw
                          << "  " << path << "\n";
            }
            if (mode != "kernel")
                if (auto s = fw.stop(); !s) return s;
        }
    }
    run.results->add({{"part", "b"}, {"event", "end"}, {"load_end", load_average()}});
    return {};
}

std::string report(const std::vector<nlohmann::json>& records) {
    std::string text = "## sluice benchmark, ";
    auto setup = select(records, {{"part", "b"}, {"event", "setup"}});
    text += setup.empty() ? utc_now() : setup.front().value("date", "");
    text += "\n\nMachine: " + (setup.empty() ? machine_line() : setup.front().value("machine", "")) + "\n\n";
    auto a = select(records, {{"part", "a"}});
    if (!a.empty()) {
        text += "### (a) XDP per-packet cost vs a minimal XDP redirect\n\n" +
                a.front().value("summary_markdown", std::string()) + "\n";
    }
    if (!setup.empty()) {
        const auto& s = setup.front();
        text += "### (b) Throughput through the firewall namespace\n\n";
        text += "iperf3 TCP throughput LAN host -> WAN host, Gbit/s (receiver), median (min–max) over " +
                std::to_string(s.value("passes", 0)) + " interleaved passes, -t " +
                std::to_string(s.value("seconds", 0)) + " -P " + std::to_string(s.value("streams", 0)) + "\n\n";
        MarkdownTable t({"family", "kernel forwarding", "sluice (generic XDP)", "sluice + source NAT",
                         "sluice / kernel", "NAT / no NAT", "NAT / kernel"});
        for (const auto& [fam, label] : std::vector<std::pair<std::string, std::string>>{{"v4", "IPv4"},
                                                                                         {"v6", "IPv6"}}) {
            auto k = by_pass(records, {{"part", "b"}, {"system", "kernel"}, {"family", fam}}, "gbps");
            auto sl = by_pass(records, {{"part", "b"}, {"system", "sluice"}, {"family", fam}}, "gbps");
            auto n = by_pass(records, {{"part", "b"}, {"system", "sluice-nat"}, {"family", fam}}, "gbps");
            t.row({label, format_spread(values(k), 2), format_spread(values(sl), 2), format_spread(values(n), 2),
                   format_spread(per_pass_ratios(sl, k), 2), format_spread(per_pass_ratios(n, sl), 2),
                   format_spread(per_pass_ratios(n, k), 2)});
        }
        text += t.str() + "\n";
        text += "Ratios: per pass, of the same pass (NAT / no NAT = sluice + source NAT / sluice); median (min–max) "
                "of those.\nsluice + source NAT: the same config plus a `nat.source` rule trust → untrust, "
                "`translate: interface`.\nEvery NAT run's server saw the firewall's WAN address (198.18.100.1, "
                "2001:2:0:100::1) as the client,\nevery other run's the LAN host (iperf3 server JSON, "
                "start.connected[0].remote_host).\n\n";
        std::string paths;
        for (const auto& r : select(records, {{"part", "b"}}))
            if (r.contains("path") && !r["path"].get<std::string>().empty())
                paths += r["system"].get<std::string>() + " " + r["family"].get<std::string>() + " " +
                         std::to_string(r["pass"].get<int>()) + " " + r["path"].get<std::string>() + "\n";
        if (!paths.empty())
            text += "Where sluice's packets went (its counters during each run; passed = handed to the kernel):\n\n"
                    "```\n" +
                    paths + "```\n";
    }
    return text;
}

}  // namespace

Benchmark throughput_benchmark() {
    auto o = std::make_shared<Options>();
    Benchmark b;
    b.name = "throughput";
    b.summary = "per-packet XDP cost vs a minimal redirect; iperf3 kernel vs sluice vs sluice + source NAT";
    b.doc = "docs/benchmarks.md";
    b.add_options = [o](CLI::App& app) {
        app.add_option("--passes", o->passes,
                       "iperf3 passes (default 3, --quick 1); each measures kernel, sluice and sluice + NAT, IPv4 "
                       "and IPv6, rotating which goes first")
            ->check(positive_number());
        app.add_option("--time", o->seconds, "iperf3 -t (default 5, --quick 2)")->check(positive_number());
        app.add_option("--streams", o->streams, "iperf3 -P")->capture_default_str()->check(positive_number());
        app.add_option("--xdp-passes", o->xdp_passes, "sluice_xdp_cost --passes (default 5, --quick 1)")
            ->check(positive_number());
        app.add_flag("--skip-xdp", o->skip_xdp, "leave out (a)");
        app.add_flag("--skip-iperf", o->skip_iperf, "leave out (b)");
    };
    b.run = [o](BenchRun& run) -> Status {
        if (auto s = check_machine(o->skip_iperf ? std::vector<std::string>{} : std::vector<std::string>{"iperf3"});
            !s)
            return s;
        if (!o->skip_xdp)
            if (auto s = run_xdp_cost(run, *o); !s) return s;
        if (!o->skip_iperf)
            if (auto s = run_iperf_part(run, *o); !s) return s;
        return {};
    };
    b.report = report;
    return b;
}

}  // namespace sluice::bench
