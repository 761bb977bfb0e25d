// `sluice bench scale` (userspace/bench/scale_*): the rules of every kind for
// every system, the path and probe checks on synthetic inputs, the schedule,
// and the report rendered from synthetic records.
#include <gtest/gtest.h>

#include <regex>

#include "bench/iperf_run.h"
#include "bench/scale_checks.h"
#include "bench/scale_report.h"
#include "bench/scale_rules.h"
#include "config/load_config.h"

using namespace sluice::bench;
using nlohmann::json;

namespace {

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

ScaleRules rules(const std::string& kind, int n, const std::string& proto = "tcp", int width = 1) {
    ScaleRules r;
    r.kind = kind;
    r.count = n;
    r.proto = proto;
    r.port_width = width;
    return r;
}

sluice::config::Config parsed(const std::string& text) {
    auto r = sluice::config::parse_config(text, "generated.yaml");
    EXPECT_TRUE(r.ok()) << (r.diagnostics.empty() ? "" : r.diagnostics.front().message) << "\n" << text;
    return r.config.value_or(sluice::config::Config{});
}

}  // namespace

// ------------------------------------------------------------------ rules

TEST(BenchScaleRules, AddressesAndPortsOfRuleI) {
    EXPECT_EQ(scale_src_addr(0).value(), "198.19.0.1");
    EXPECT_EQ(scale_src_addr(249).value(), "198.19.0.250");
    EXPECT_EQ(scale_src_addr(250).value(), "198.19.1.1");
    EXPECT_EQ(scale_src_addr(9999).value(), "198.19.39.250");
    EXPECT_FALSE(scale_src_addr(250 * 256));
    EXPECT_EQ(scale_port_range(0, 1).value(), (std::pair<int, int>(20000, 20000)));
    EXPECT_EQ(scale_port_range(3, 4).value(), (std::pair<int, int>(20012, 20015)));
    EXPECT_FALSE(scale_port_range(45536, 1));  // 65536
    EXPECT_EQ(scale_last_rule(rules("src", 512)).value(), "198.19.2.12");
    EXPECT_EQ(scale_last_rule(rules("port", 512, "udp", 2)).value(), "21022");
    EXPECT_FALSE(scale_last_rule(rules("src", 0)));
}

TEST(BenchScaleRules, SluiceFilterConfigsParseWithTheirRules) {
    auto zero = sluice_filter_config(rules("src", 0));
    ASSERT_TRUE(zero);
    EXPECT_NE(zero->find("bench-in: []"), std::string::npos);
    auto c0 = parsed(*zero);
    ASSERT_EQ(c0.filters.size(), 1u);
    EXPECT_TRUE(c0.filters[0].rules.empty());
    EXPECT_EQ(c0.policies.size(), 2u);

    auto src = sluice_filter_config(rules("src", 300));
    ASSERT_TRUE(src);
    auto cs = parsed(*src);
    ASSERT_EQ(cs.filters.size(), 1u);
    ASSERT_EQ(cs.filters[0].rules.size(), 300u);
    EXPECT_EQ(cs.filters[0].rules.back().action, sluice::config::FilterAction::drop);
    EXPECT_NE(src->find("source: [198.19.1.50], action: drop"), std::string::npos);

    auto port = sluice_filter_config(rules("port", 3, "udp", 2));
    ASSERT_TRUE(port);
    EXPECT_NE(port->find("protocol: udp, destination-port: 20004-20005"), std::string::npos);
    auto cp = parsed(*port);
    ASSERT_EQ(cp.filters[0].rules.size(), 3u);
    EXPECT_EQ(cp.filters[0].rules[2].destination_ports.size(), 1u);
    EXPECT_NE(port->find("timeouts: { tcp-time-wait: 10s }"), std::string::npos);
}

TEST(BenchScaleRules, SluicePolicyConfigsOfEveryKind) {
    auto src = sluice_policy_config(rules("src", 5));
    ASSERT_TRUE(src);
    auto cs = parsed(*src);
    ASSERT_EQ(cs.policies.size(), 5u + 2u);  // the N denies, the permit, nothing-in
    EXPECT_EQ(cs.policies[4].name, "deny-4");
    EXPECT_EQ(cs.policies[4].action, sluice::config::PolicyAction::deny);
    EXPECT_EQ(cs.policies[5].name, "permit-wan");
    EXPECT_TRUE(cs.filters.empty());
    EXPECT_EQ(count(*src, "source: [198.19."), 5u);

    auto port = sluice_policy_config(rules("port", 4));
    ASSERT_TRUE(port);
    auto cp = parsed(*port);
    EXPECT_EQ(cp.applications.size(), 4u);
    EXPECT_NE(port->find("p3: { protocol: tcp, destination-port: 20003 }"), std::string::npos);

    // mixed: source, destination, application in turn.
    auto mixed = sluice_policy_config(rules("mixed", 6));
    ASSERT_TRUE(mixed);
    auto cm = parsed(*mixed);
    EXPECT_EQ(cm.applications.size(), 2u);  // rules 2 and 5
    EXPECT_NE(mixed->find("name: deny-0, from: trust, to: untrust, source: [198.19.0.1]"), std::string::npos);
    EXPECT_NE(mixed->find("name: deny-1, from: trust, to: untrust, destination: [198.19.0.2]"), std::string::npos);
    EXPECT_NE(mixed->find("name: deny-2, from: trust, to: untrust, application: [p2]"), std::string::npos);
    // mixed is for sluice policies only.
    EXPECT_FALSE(sluice_filter_config(rules("mixed", 6)));
    EXPECT_FALSE(nft_scale_ruleset(rules("mixed", 6), NftLayout::Linear, true));
}

TEST(BenchScaleRules, NftRulesetsLinearAndSetStatelessAndStateful) {
    auto lin = nft_scale_ruleset(rules("src", 20), NftLayout::Linear, false);
    ASSERT_TRUE(lin);
    EXPECT_EQ(count(*lin, "    ip saddr 198.19."), 20u);
    EXPECT_NE(lin->find("notrack"), std::string::npos);
    EXPECT_NE(lin->find("iif \"wan0\" accept"), std::string::npos);
    EXPECT_EQ(lin->find("ct state"), std::string::npos);
    EXPECT_NE(lin->find("delete table ip sluice_scale"), std::string::npos);
    // The accept comes after the rules.
    EXPECT_LT(lin->rfind(" drop\n"), lin->find("iif \"lan0\" ip daddr 198.18.100.0/24 accept"));

    auto set = nft_scale_ruleset(rules("src", 20), NftLayout::Set, true);
    ASSERT_TRUE(set);
    EXPECT_NE(set->find("set srcs {\n    type ipv4_addr"), std::string::npos);
    EXPECT_NE(set->find("ip saddr @srcs drop"), std::string::npos);
    EXPECT_NE(set->find("ct state established,related accept"), std::string::npos);
    EXPECT_EQ(set->find("notrack"), std::string::npos);
    EXPECT_EQ(count(*set, "198.19."), 20u);
    // 16 elements a line, a comma after every line but the last.
    EXPECT_NE(set->find("198.19.0.16,\n      198.19.0.17"), std::string::npos);
    EXPECT_NE(set->find("198.19.0.20\n    }"), std::string::npos);

    auto ports = nft_scale_ruleset(rules("port", 3, "udp", 4), NftLayout::Set, false);
    ASSERT_TRUE(ports);
    EXPECT_NE(ports->find("type inet_service\n    flags interval"), std::string::npos);
    EXPECT_NE(ports->find("udp dport @ports drop"), std::string::npos);
    EXPECT_NE(ports->find("20008-20011"), std::string::npos);
    auto one = nft_scale_ruleset(rules("port", 3, "tcp"), NftLayout::Linear, true);
    ASSERT_TRUE(one);
    EXPECT_NE(one->find("    tcp dport 20002 drop"), std::string::npos);
    EXPECT_EQ(one->find("flags interval"), std::string::npos);
    // No rules: no set, the chain still there.
    auto none = nft_scale_ruleset(rules("port", 0), NftLayout::Set, false);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->find("set ports"), std::string::npos);
    EXPECT_NE(none->find("chain scale_fwd"), std::string::npos);
}

// ------------------------------------------------------------------ checks

TEST(BenchScaleChecks, SluiceCheckJsonIsRead) {
    auto ok = read_sluice_check(R"({"valid": true, "compile_ms": 12.3, "classifier": {"classifier_bytes": 10486548}})");
    EXPECT_TRUE(ok.ok);
    EXPECT_EQ(check_number_text(ok.compile_ms), "12.3");
    EXPECT_EQ(check_number_text(ok.classifier_bytes), "10486548");  // found nested
    auto old = read_sluice_check(R"({"valid": true})");  // a build that prints neither
    EXPECT_TRUE(old.ok);
    EXPECT_EQ(check_number_text(old.compile_ms), "–");
    auto bad = read_sluice_check(
        R"({"valid": false, "errors": [{"message": "too many\nrules"}, {"message": "second"}]})");
    EXPECT_FALSE(bad.ok);
    EXPECT_EQ(bad.why, "too many rules; second");
    auto garbage = read_sluice_check("Segmentation fault");
    EXPECT_FALSE(garbage.ok);
    EXPECT_EQ(garbage.why, "unreadable JSON from sluice check");
}

TEST(BenchScaleChecks, ASluiceRunMustBeForwardedByXdpWithoutDenies) {
    Counters good{{"rx", 1000}, {"forward", 990}, {"session-created", 1}, {"pass-larger-than-egress-mtu", 10},
                  {"drop-ttl", 0}, {"drop-bad-checksum", 2}};
    auto c = check_sluice_run(good);
    EXPECT_TRUE(c.bad.empty());
    EXPECT_EQ(c.summary,
              "rx=1000 forward=990 session-created=1 passed=10 (pass-larger-than-egress-mtu=10) drop-bad-checksum=2");

    Counters nothing{{"rx", 0}, {"forward", 0}};
    EXPECT_EQ(check_sluice_run(nothing).bad, std::vector<std::string>{"sluice's XDP program saw or forwarded nothing"});

    Counters denied = good;
    denied["drop-policy-deny"] = 5;
    denied["drop-filter"] = 3;
    denied["drop-session-table-full"] = 1;
    auto d = check_sluice_run(denied);
    EXPECT_EQ(d.bad, (std::vector<std::string>{"drop-filter = 3", "drop-policy-deny = 5",
                                               "drop-session-table-full = 1"}));
    EXPECT_NE(d.summary.find(" filter: drop-filter=3"), std::string::npos);
    // A counter with "filter" in its name that is not a drop is reported, not fatal.
    Counters counted = good;
    counted["filter-rule-count"] = 7;
    EXPECT_TRUE(check_sluice_run(counted).bad.empty());
}

TEST(BenchScaleChecks, ProbesAndWhatTheyMean) {
    ProbeCounts got{{"198.18.1.10:5999", 3}};
    auto blocked = udp_probe_verdict(got, "198.19.0.1", 5999, "198.18.1.10", 5999);
    EXPECT_EQ(blocked.verdict, "blocked");
    EXPECT_TRUE(blocked.error.empty());
    got["198.19.0.1:5999"] = 5;
    EXPECT_EQ(udp_probe_verdict(got, "198.19.0.1", 5999, "198.18.1.10", 5999).verdict, "passed");
    // The port probe comes from the control's own address, to another port.
    ProbeCounts port{{"198.18.1.10:5999", 3}, {"198.18.1.10:20511", 1}};
    EXPECT_EQ(udp_probe_verdict(port, "198.18.1.10", 20511, "198.18.1.10", 5999).verdict, "passed");
    // No control: the probe proves nothing.
    EXPECT_FALSE(udp_probe_verdict({}, "198.19.0.1", 5999, "198.18.1.10", 5999).error.empty());
    EXPECT_TRUE(tcp_probe_verdict("blocked", "passed").error.empty());
    EXPECT_FALSE(tcp_probe_verdict("blocked", "blocked").error.empty());

    EXPECT_EQ(probe_consequence("a", "nft-linear", "blocked"), ProbeConsequence::Fine);
    EXPECT_EQ(probe_consequence("a", "sluice", "passed"), ProbeConsequence::Warn);
    EXPECT_EQ(probe_consequence("b", "sluice", "passed"), ProbeConsequence::Fatal);
    EXPECT_EQ(probe_consequence("a", "nft-set", "passed"), ProbeConsequence::Fatal);
}

TEST(BenchScaleChecks, UdpThroughputIsWhatReachedTheWanHost) {
    // 100,000 datagrams of 1400 bytes sent in 2 s, 80,000 reached the WAN host.
    auto f = udp_figures(80000, 100000, 2.0, 0.56e9, 0.3e9, 1400);
    EXPECT_DOUBLE_EQ(f.gbps, 80000.0 * 1400 * 8 / 2 / 1e9);
    EXPECT_DOUBLE_EQ(f.mpps, 0.04);
    EXPECT_DOUBLE_EQ(f.loss_pct, 20.0);
    EXPECT_DOUBLE_EQ(f.sent_gbps, 0.56);
    EXPECT_DOUBLE_EQ(f.app_gbps, 0.3);
    // The interface also saw iperf3's control packets: never more than sent.
    auto all = udp_figures(100012, 100000, 2.0, 0.56e9, 0.3e9, 1400);
    EXPECT_DOUBLE_EQ(all.loss_pct, 0.0);
    EXPECT_DOUBLE_EQ(all.mpps, 0.05);
    EXPECT_DOUBLE_EQ(udp_figures(0, 0, 0, 0, 0, 1400).loss_pct, 100.0);
}

TEST(BenchScaleChecks, ToolOutputsForTheUdpRuns) {
    auto sent = parse_iperf_sent(
        R"({"end": {"sum_sent": {"packets": 12345, "seconds": 1.0002, "bits_per_second": 1e9}, "sum_received": {}}})");
    ASSERT_TRUE(sent) << sent.error().message;
    EXPECT_EQ(sent->first, 12345u);
    EXPECT_DOUBLE_EQ(sent->second, 1.0002);
    EXPECT_FALSE(parse_iperf_sent(R"({"error": "unable to connect"})"));
    auto rx = parse_rx_packets(R"([{"ifname": "eth0", "stats64": {"rx": {"bytes": 9, "packets": 777}}}])");
    ASSERT_TRUE(rx) << rx.error().message;
    EXPECT_EQ(*rx, 777u);
    EXPECT_FALSE(parse_rx_packets("[]"));
}

TEST(BenchScaleSchedule, CountsAndKindsAlternateProtocolsToo) {
    std::vector<std::string> kinds{"src", "port"};
    std::vector<int> counts{0, 64, 512};
    auto p1 = scale_points(kinds, counts, 1);
    ASSERT_EQ(p1.size(), 6u);
    EXPECT_EQ(p1.front(), (ScalePoint{"src", 0}));
    EXPECT_EQ(p1[2], (ScalePoint{"src", 512}));
    EXPECT_EQ(p1.back(), (ScalePoint{"port", 512}));
    auto p2 = scale_points(kinds, counts, 2);
    EXPECT_EQ(p2.front(), (ScalePoint{"port", 512}));
    EXPECT_EQ(p2.back(), (ScalePoint{"src", 0}));
    EXPECT_EQ(scale_protocols(1), (std::vector<std::string>{"udp", "tcp"}));
    EXPECT_EQ(scale_protocols(2), (std::vector<std::string>{"tcp", "udp"}));
    auto c = parse_counts("512 0 64 512");
    ASSERT_TRUE(c);
    EXPECT_EQ(*c, (std::vector<int>{0, 64, 512}));
    EXPECT_FALSE(parse_counts("0 1k"));
    EXPECT_FALSE(parse_counts("-1"));
}

// ------------------------------------------------------------------ report

namespace {

std::vector<json> synthetic_run() {
    std::vector<json> r;
    r.push_back({{"type", "setup"}, {"date", "2026-01-02 10:00 UTC"}, {"rev", "abc1234"}, {"machine", "6.18, 2 CPUs"},
                 {"load_start", "0.10 0.20 0.30"}, {"nft_version", "nftables v1.0.6"}, {"ct_max", "65536"},
                 {"passes", 2}, {"time", 1}, {"streams", 4}, {"udp_len", 1400}, {"udp_streams", 1},
                 {"port_width", 1}, {"conn_time", 1.0}, {"conn_threads", 2}, {"conn_concurrency", 32},
                 {"cost_passes", 1}, {"cost_calls", 300}, {"quick", true}, {"svg", "/tmp/x.svg"}});
    r.push_back({{"type", "check"}, {"part", "a"}, {"kind", "src"}, {"n", 0}, {"proto", "any"}, {"status", "ok"},
                 {"wall_s", 0.021}, {"compile_ms", 10.3}, {"classifier_bytes", 10486548}});
    r.push_back({{"type", "check"}, {"part", "a"}, {"kind", "src"}, {"n", 512}, {"proto", "any"}, {"status", "ok"},
                 {"wall_s", 0.05}, {"compile_ms", 14.0}, {"classifier_bytes", 10570616}});
    r.push_back({{"type", "load"}, {"system", "sluice"}, {"part", "a"}, {"kind", "src"}, {"n", 512},
                 {"proto", "any"}, {"seconds", 1.5}});
    r.push_back({{"type", "load"}, {"system", "nft-linear"}, {"part", "a"}, {"kind", "src"}, {"n", 512},
                 {"proto", "any"}, {"seconds", 0.04}});
    r.push_back({{"type", "probe"}, {"part", "a"}, {"system", "sluice"}, {"kind", "src"}, {"n", 512}, {"proto", "udp"},
                 {"verdict", "passed"}, {"detail", "probe a/sluice/src/512/udp: last rule (198.19.2.12) passed"}});
    r.push_back({{"type", "probe"}, {"part", "a"}, {"system", "nft-linear"}, {"kind", "src"}, {"n", 512},
                 {"proto", "udp"}, {"verdict", "blocked"}});
    // (a) UDP: sluice 2.0/2.2 at 0, 1.8/2.2 at 512; nft linear 1.0 at 0, 0.1 at 512.
    auto a = [&](const std::string& sys, int n, int pass, double gbps) {
        r.push_back({{"type", "a"}, {"system", sys}, {"kind", "src"}, {"n", n}, {"proto", "udp"}, {"pass", pass},
                     {"gbps", gbps}, {"sent_gbps", gbps}, {"mpps", gbps / 11.2}, {"loss_pct", 0.0},
                     {"app_gbps", gbps * 0.9},
                     {"detail", "a " + sys + " src " + std::to_string(n) + " udp pass " + std::to_string(pass) + ": x"}});
    };
    a("sluice", 0, 1, 2.0);
    a("sluice", 0, 2, 2.2);
    a("sluice", 512, 1, 1.8);
    a("sluice", 512, 2, 2.2);
    a("nft-linear", 0, 1, 1.0);
    a("nft-linear", 512, 1, 0.1);
    // (b): thousands grouped.
    for (int pass : {1, 2})
        for (int n : {0, 512})
            r.push_back({{"type", "b"}, {"system", "sluice"}, {"kind", "port"}, {"n", n}, {"pass", pass},
                         {"rate", 12000.0 + 100 * pass + n}, {"completed", 24000}, {"failed", n ? 3 : 0},
                         {"p50", 4800}, {"p99", 12000}});
    // (c): the tool's own lines.
    for (int n : {0, 8, 512}) {
        r.push_back({{"part", "c"}, {"type", "apply"}, {"pass", 1}, {"label", "src:" + std::to_string(n)},
                     {"compile_ms", 3.0 + n}, {"apply_ms", 1.0}});
        for (const auto& [m, v] : std::vector<std::pair<std::string, double>>{
                 {"first_packet", 2400.0 + n}, {"deny_miss", 900.0}, {"deny_hit", 100.0}, {"classify", 140.0}})
            r.push_back({{"part", "c"}, {"type", "cost"}, {"pass", 1}, {"label", "src:" + std::to_string(n)},
                         {"measure", m}, {"calls", 300}, {"iqm_ns", v}, {"mean_ns", v}});
    }
    r.push_back({{"type", "end"}, {"load_end", "0.5 0.4 0.3"}, {"elapsed_s", 125}});
    return r;
}

}  // namespace

TEST(BenchScaleReport, SectionsTablesAndRatiosFromRecords) {
    std::string md = scale_report_markdown(synthetic_run());
    EXPECT_EQ(md.rfind("## sluice policy-at-scale benchmark, 2026-01-02 10:00 UTC\n", 0), 0u);
    EXPECT_NE(md.find("Git revision abc1234."), std::string::npos);
    EXPECT_NE(md.find("the run took 2 min 5 s. nftables v1.0.6; nf_conntrack_max 65536."), std::string::npos);
    EXPECT_NE(md.find("**Quick run**"), std::string::npos);
    for (const char* heading :
         {"### (a) Throughput through a stateless filter", "#### (a) UDP through a stateless filter, source-address rules",
          "### (b) New connections per second through the stateful policy",
          "#### (b) New connections per second through the stateful policy, destination-port rules",
          "### (c) First-packet cost (sluice only)", "#### (c) sluice first-packet cost, source-address rules",
          "#### Configs: size, compile and load", "#### Probes", "#### Per-run counters"})
        EXPECT_NE(md.find(heading), std::string::npos) << heading;
    // No TCP records: no TCP table.
    EXPECT_EQ(md.find("#### (a) TCP"), std::string::npos);
    // (a): value columns, then per-pass ratios to the 0-rule run of the same pass.
    EXPECT_NE(md.find("| rules | sluice Gbit/s | nft linear Gbit/s | sluice / 0 rules | nft linear / 0 rules |"),
              std::string::npos);
    EXPECT_NE(md.find("| 512 | 2.00 (1.80–2.20) | 0.10 (0.10–0.10) | 0.95 (0.90–1.00) | 0.10 (0.10–0.10) |"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("| rules | sluice: Mpps · loss · sent · read | nft linear: Mpps · loss · sent · read |"),
              std::string::npos);
    // The sluice probe got through: the column is labelled.
    EXPECT_NE(md.find("**The sluice column does not measure a filter**: the probe of the last filter rule got "
                      "through sluice at 512 rules."),
              std::string::npos);
    // (b): grouped thousands, failures, latency; only the systems that were measured.
    EXPECT_NE(md.find("| 0 | 12 150 (12 100–12 200) | – | 1.00 (1.00–1.00) | – |"), std::string::npos) << md;
    EXPECT_NE(md.find("Failed connections (reset, timeout, short answer), summed over passes: sluice at 512 rules: 6."),
              std::string::npos);
    EXPECT_NE(md.find("| 512 | 4800 / 12000 | – |\n"), std::string::npos);
    // (c): ratios to the 8-rule config; miss − hit.
    EXPECT_NE(md.find("| 512 | 140.0 (140.0–140.0) | 1.00 (1.00–1.00) | 2912.0 (2912.0–2912.0) | 1.21 (1.21–1.21) | "
                      "800.0 (800.0–800.0) | 1.00 (1.00–1.00) | 515.0 |"),
              std::string::npos)
        << md;
    // Configs: the check and the loads of one row.
    EXPECT_NE(md.find("| a | src | 512 | any | ok | 0.05 | 14.0 | 10570616 | 1.50 | 0.04 | – |"), std::string::npos)
        << md;
    EXPECT_NE(md.find("2 probes, 1 blocked as they must be.\n Got through: (a) sluice src 512 udp."),
              std::string::npos);
    EXPECT_NE(md.find("Chart: `/tmp/x.svg`"), std::string::npos);
    EXPECT_NE(md.find("```\nprobe a/sluice/src/512/udp: last rule (198.19.2.12) passed\na sluice src 0 udp pass 1: x"),
              std::string::npos);
}

TEST(BenchScaleReport, ChartHasAPanelPerPartAndKind) {
    std::string svg = scale_report_svg(synthetic_run());
    ASSERT_FALSE(svg.empty());
    // Rows (a) UDP, (b), (c) x columns src, port: (a) has src only, (b) port
    // only, (c) src only. (a): 3 systems measured somewhere (sluice, nft linear) -> 2 series.
    EXPECT_NE(svg.find("(a) UDP -l 1400, stateless filter · source rules"), std::string::npos);
    EXPECT_EQ(svg.find("(a) UDP -l 1400, stateless filter · port rules"), std::string::npos);
    EXPECT_NE(svg.find("(b) new connections/s, stateful policy · port rules"), std::string::npos);
    EXPECT_NE(svg.find("(c) sluice, first packet (BPF_PROG_TEST_RUN) · source rules"), std::string::npos);
    EXPECT_NE(svg.find("sluice: filter not enforced by this build"), std::string::npos);
    EXPECT_NE(svg.find("QUICK RUN"), std::string::npos);
    // (a) src: sluice and nft linear; (b) port: sluice (nft linear has no points
    // there); (c) src: sluice.
    EXPECT_EQ(count(svg, "data-series=\"sluice\""), 3u);
    EXPECT_EQ(count(svg, "data-series=\"nft linear\""), 1u);
    EXPECT_EQ(count(svg, "<path "), 4u);
    EXPECT_TRUE(scale_report_svg({}).empty());
}
