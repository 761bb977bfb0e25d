// `sluice bench smallpkt`'s own logic (userspace/bench/smallpkt_*): the
// trafgen packets of the 256 flows, the CPU time per packet from /proc/stat,
// the parsers and checks that prove what is in the path, and the report
// rendered from records alone.
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <sstream>
#include <string>

#include "bench/benchmark.h"
#include "bench/name_list.h"
#include "bench/smallpkt_checks.h"
#include "bench/smallpkt_trafgen.h"
#include "bench/smallpkt_window.h"
#include "bench/synflood_trafgen.h"
#include "checksum_verify.h"

using namespace sluice::bench;
using nlohmann::json;

namespace {

UdpFlowsSpec lab_spec() {
    UdpFlowsSpec spec;
    spec.destination_mac = "AA:bb:cc:00:01:02";
    spec.source_mac = "02:00:00:00:01:10";
    return spec;
}

// The packets of a trafgen configuration of literal bytes ("{ 0x.., ... }").
std::vector<sluice::test::Bytes> packets_of(const std::string& config) {
    std::vector<sluice::test::Bytes> out;
    std::istringstream in(config);
    std::string token;
    for (char c; in.get(c);) {
        if (c == '{') {
            out.emplace_back();
        } else if (c == '}' || c == ',' || c == ' ' || c == '\n') {
            if (!token.empty()) out.back().push_back(static_cast<uint8_t>(std::stoul(token, nullptr, 16)));
            token.clear();
        } else {
            token += c;
        }
    }
    return out;
}

}  // namespace

TEST(BenchSmallpktTrafgen, TheConfigIs256FlowsOfValid64ByteUdpFrames) {
    auto config = trafgen_udp_flows_config(lab_spec());
    ASSERT_TRUE(config) << config.error().message;
    auto packets = packets_of(*config);
    ASSERT_EQ(packets.size(), 256u) << *config;
    std::set<uint16_t> ports;
    for (const auto& p : packets) {
        ASSERT_EQ(p.size(), 60u) << "60 bytes: 64 on a wire with the FCS";
        std::string error;
        auto f = sluice::test::parse_frame(p, &error);
        ASSERT_TRUE(f) << error;
        EXPECT_EQ(f->dst.str(), "aa:bb:cc:00:01:02");
        EXPECT_EQ(f->src.str(), "02:00:00:00:01:10");
        EXPECT_EQ(f->ip_version, 4);
        EXPECT_EQ(f->src_ip, "198.18.1.10");
        EXPECT_EQ(f->dst_ip, "198.18.100.200");
        EXPECT_EQ(f->l4_proto, 17);
        EXPECT_EQ(f->dport, 9);
        EXPECT_EQ(f->udp_length, 26);
        EXPECT_EQ(f->ttl, 64);
        auto sums = sluice::test::verify_checksums(p);
        EXPECT_TRUE(sums.ok()) << sums.describe();
        EXPECT_NE(std::find(sums.checked.begin(), sums.checked.end(), "udp"), sums.checked.end())
            << "the UDP checksum is set, not left out";
        ports.insert(f->sport);
    }
    ASSERT_EQ(ports.size(), 256u) << "every flow has its own source port";
    EXPECT_EQ(*ports.begin(), 10000);
    EXPECT_EQ(*ports.rbegin(), 10255);
    // Flows in order: trafgen sends the packets round robin.
    EXPECT_EQ(sluice::test::parse_frame(packets[1])->sport, 10001);
}

TEST(BenchSmallpktTrafgen, TheSpecShapesTheFrames) {
    UdpFlowsSpec spec = lab_spec();
    spec.flows = 4;
    spec.first_source_port = 40000;
    spec.destination_port = 5000;
    spec.source = "198.19.7.1";
    spec.frame_bytes = 128;
    auto config = trafgen_udp_flows_config(spec);
    ASSERT_TRUE(config) << config.error().message;
    auto packets = packets_of(*config);
    ASSERT_EQ(packets.size(), 4u);
    auto f = sluice::test::parse_frame(packets[3]);
    ASSERT_TRUE(f);
    EXPECT_EQ(packets[3].size(), 128u);
    EXPECT_EQ(f->sport, 40003);
    EXPECT_EQ(f->dport, 5000);
    EXPECT_EQ(f->src_ip, "198.19.7.1");
    EXPECT_EQ(f->udp_length, 128 - 14 - 20);
    EXPECT_TRUE(sluice::test::verify_checksums(packets[3]).ok());
}

TEST(BenchSmallpktTrafgen, ImpossibleSpecsAreRefused) {
    auto refused = [](auto change) {
        UdpFlowsSpec spec = lab_spec();
        change(spec);
        return !trafgen_udp_flows_config(spec);
    };
    EXPECT_TRUE(refused([](UdpFlowsSpec& s) { s.destination_mac = "aa:bb:cc:dd:ee"; }));
    EXPECT_TRUE(refused([](UdpFlowsSpec& s) { s.source_mac = "aa-bb-cc-dd-ee-ff"; }));
    EXPECT_TRUE(refused([](UdpFlowsSpec& s) { s.destination = "2001:2:0:100::200"; }));
    EXPECT_TRUE(refused([](UdpFlowsSpec& s) { s.first_source_port = 65400; }));  // 65400 + 255 > 65535
    EXPECT_TRUE(refused([](UdpFlowsSpec& s) { s.frame_bytes = 41; }));
    EXPECT_FALSE(refused([](UdpFlowsSpec& s) { s.first_source_port = 65280; }));  // up to 65535 exactly
    EXPECT_FALSE(udp_flow_frame(lab_spec(), 256));
    EXPECT_FALSE(udp_flow_frame(lab_spec(), -1));
}

TEST(BenchSmallpktTrafgen, MacsParseToTheirSixBytes) {
    auto mac = parse_mac("02:00:aB:0c:ff:10");
    ASSERT_TRUE(mac) << mac.error().message;
    EXPECT_EQ(*mac, (std::array<uint8_t, 6>{0x02, 0x00, 0xab, 0x0c, 0xff, 0x10}));
    EXPECT_FALSE(parse_mac("02:00:ab:0c:ff"));
    EXPECT_FALSE(parse_mac("02-00-ab-0c-ff-10"));
    EXPECT_FALSE(parse_mac("02:00:ab:0c:ff:1g"));
    EXPECT_FALSE(parse_mac("02:00:ab:0c:ff:100"));
}

TEST(BenchSmallpktTrafgen, ArgvAddsTheRateOnlyWhenOneIsGiven) {
    auto unlimited = trafgen_argv("eth0", "/tmp/x/udp.cfg");
    EXPECT_EQ(std::find(unlimited.begin(), unlimited.end(), "--rate"), unlimited.end());
    auto limited = trafgen_argv("eth0", "/tmp/x/udp.cfg", 150000);
    ASSERT_GE(limited.size(), 2u);
    EXPECT_EQ(std::vector<std::string>(limited.end() - 2, limited.end()),
              (std::vector<std::string>{"--rate", "150000pps"}));
    EXPECT_EQ(std::vector<std::string>(limited.begin(), limited.end() - 2), unlimited);
}

TEST(BenchSmallpktWindow, CpuTimePerPacketIsSoftirqTimeOverPacketsReceived) {
    // user nice system idle iowait irq softirq steal guest guest_nice; USER_HZ 100
    auto cpu0 = parse_cpu_sample("cpu  1000 0 500 8000 0 10 2000 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n");
    auto cpu1 = parse_cpu_sample("cpu  1100 0 700 9500 0 10 2150 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n");
    ASSERT_TRUE(cpu0 && cpu1);
    WindowReading before{.at_seconds = 100, .cpu = *cpu0, .offered = 5'000'000, .received = 4'000'000};
    WindowReading after{.at_seconds = 110, .cpu = *cpu1, .offered = 6'500'000, .received = 5'497'000};
    auto w = window_result(before, after, 100);
    ASSERT_TRUE(w) << w.error().message;
    EXPECT_DOUBLE_EQ(w->seconds, 10);
    EXPECT_EQ(w->offered_packets, 1'500'000u);
    EXPECT_EQ(w->received_packets, 1'497'000u);
    EXPECT_DOUBLE_EQ(w->offered_pps, 150'000);
    EXPECT_DOUBLE_EQ(w->received_pps, 149'700);
    EXPECT_DOUBLE_EQ(w->loss_percent, 0.2);
    // 150 softirq ticks of 10 ms: 1.5 s over 1,497,000 packets.
    EXPECT_DOUBLE_EQ(w->softirq_seconds, 1.5);
    EXPECT_NEAR(w->softirq_ns_per_packet, 1.5e9 / 1'497'000, 1e-9);
    // Busy: 1950 ticks passed, 1500 of them idle -> 4.5 s.
    EXPECT_DOUBLE_EQ(w->busy_seconds, 4.5);
    EXPECT_NEAR(w->busy_ns_per_packet, 4.5e9 / 1'497'000, 1e-9);
    // Another USER_HZ scales the time, not the packets.
    auto w250 = window_result(before, after, 250);
    ASSERT_TRUE(w250);
    EXPECT_DOUBLE_EQ(w250->softirq_seconds, 0.6);
    // One cpuN line: 10 s of wall time on one CPU, 15 s of it idle: more
    // idle than there was time (the samples disagree), so none clocked busy.
    EXPECT_EQ(cpu1->cpus, 1);
    EXPECT_DOUBLE_EQ(w->nonidle_seconds, 0);
}

TEST(BenchSmallpktWindow, ClockedBusyIsWallTimeOnEveryCpuLessIdle) {
    // Two CPUs over 2 s: 4 s of CPU time, idle 100 -> 250 ticks (1.5 s):
    // 2.5 s busy, whatever the sampled fields say (user 10 -> 90: 0.8 s).
    auto a = parse_cpu_sample("cpu  10 0 0 100 0 0 0 0 0 0\ncpu0 5 0 0 50 0 0 0 0 0 0\ncpu1 5 0 0 50 0 0 0 0 0 0\n"
                              "intr 1\n");
    auto b = parse_cpu_sample("cpu  90 0 0 240 10 0 0 0 0 0\ncpu0 45 0 0 120 5 0 0 0 0 0\n"
                              "cpu1 45 0 0 120 5 0 0 0 0 0\n");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->cpus, 2);
    EXPECT_EQ(b->cpus, 2);
    WindowReading before{.at_seconds = 10, .cpu = *a, .offered = 0, .received = 0};
    WindowReading after{.at_seconds = 12, .cpu = *b, .offered = 1000, .received = 1000};
    auto w = window_result(before, after, 100);
    ASSERT_TRUE(w) << w.error().message;
    EXPECT_DOUBLE_EQ(w->busy_seconds, 0.8) << "sampled: the ticks not idle";
    EXPECT_DOUBLE_EQ(w->nonidle_seconds, 2.5) << "clocked: 2 CPUs x 2 s - 1.5 s idle and iowait";
    EXPECT_NEAR(w->nonidle_ns_per_packet, 2.5e9 / 1000, 1e-6);
}

TEST(BenchSmallpktWindow, MoreArrivedThanCountedOutIsNoNegativeLoss) {
    WindowReading before{.at_seconds = 0, .cpu = {}, .offered = 0, .received = 0};
    WindowReading after{.at_seconds = 2, .cpu = {.total = 400, .idle = 100, .softirq = 100}, .offered = 1000,
                        .received = 1003};
    auto w = window_result(before, after, 100);
    ASSERT_TRUE(w) << w.error().message;
    EXPECT_EQ(w->loss_percent, 0);
    EXPECT_DOUBLE_EQ(w->softirq_ns_per_packet, 1e9 / 1003);
}

TEST(BenchSmallpktWindow, WindowsWithoutAPerPacketNumberAreErrors) {
    const WindowReading before{.at_seconds = 10, .cpu = {.total = 100, .idle = 50, .softirq = 10}, .offered = 100,
                               .received = 100};
    WindowReading after{.at_seconds = 20, .cpu = {.total = 300, .idle = 100, .softirq = 60}, .offered = 1100,
                        .received = 1000};
    ASSERT_TRUE(window_result(before, after, 100));
    auto broken = [&](auto change) {
        WindowReading a = after;
        change(a);
        return !window_result(before, a, 100);
    };
    EXPECT_TRUE(broken([](WindowReading& a) { a.received = 100; }));   // nothing arrived
    EXPECT_TRUE(broken([](WindowReading& a) { a.offered = 100; }));    // nothing sent
    EXPECT_TRUE(broken([](WindowReading& a) { a.at_seconds = 10; }));  // no time passed
    EXPECT_TRUE(broken([](WindowReading& a) { a.received = 50; }));    // a counter went backwards
    EXPECT_TRUE(broken([](WindowReading& a) { a.cpu.softirq = 5; }));
    EXPECT_FALSE(window_result(before, after, 0));
}

TEST(BenchSmallpktChecks, ConfigurationsAreCheckedAndKeepTheirOrder) {
    auto all = parse_configs("kernel nft-ct sluice-native sluice-tc sluice-generic xdp-redirect");
    ASSERT_TRUE(all) << all.error().message;
    EXPECT_EQ(*all, smallpkt_configs());
    auto some = parse_configs("xdp-redirect,kernel");
    ASSERT_TRUE(some);
    EXPECT_EQ(*some, (std::vector<std::string>{"xdp-redirect", "kernel"}));
    auto bad = parse_configs("kernel sluice-auto");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("sluice-auto"), std::string::npos);
    EXPECT_FALSE(parse_configs(""));
    EXPECT_EQ(sluice_mode_of("sluice-native"), "native");
    EXPECT_EQ(sluice_mode_of("sluice-tc"), "tc");
    EXPECT_EQ(sluice_mode_of("xdp-redirect"), "");
    EXPECT_EQ(sluice_mode_of("kernel"), "");
    EXPECT_EQ(smallpkt_config_label("nft-ct"), "nftables conntrack");
}

TEST(BenchSmallpktChecks, NameListsTakeCommasAndSpacesAndListTheKnownOnError) {
    const std::vector<std::string> known{"a", "b-c", "d"};
    auto mixed = parse_name_list(" d,a  b-c,", known, "thing");
    ASSERT_TRUE(mixed) << mixed.error().message;
    EXPECT_EQ(*mixed, (std::vector<std::string>{"d", "a", "b-c"}));
    auto unknown = parse_name_list("a,b", known, "thing");
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().message, "unknown thing 'b' (things: a b-c d)");
    auto none = parse_name_list(" , ", known, "thing");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().message, "no thing to measure (things: a b-c d)");
}

TEST(BenchSmallpktChecks, SluiceMustRunTheModeNamedOnEveryInterface) {
    const std::string zones = R"({"zones":[
        {"name":"trust","id":1,"interfaces":[{"name":"lan0","xdp_mode":"native","xdp_mode_why":"forced"}]},
        {"name":"untrust","id":2,"interfaces":[{"name":"wan0","xdp_mode":"generic","xdp_mode_why":"fell back"}]},
        {"name":"dmz","id":3,"interfaces":[{"name":"dmz0","xdp_mode_requested":"auto"}]}]})";
    auto modes = sluice_modes_of(zones);
    ASSERT_TRUE(modes) << modes.error().message;
    EXPECT_EQ(*modes, (std::map<std::string, std::string>{{"lan0", "native"}, {"wan0", "generic"}}));
    EXPECT_TRUE(check_sluice_modes("native", *modes, {"lan0"}));
    auto fell_back = check_sluice_modes("native", *modes, {"lan0", "wan0"});
    ASSERT_FALSE(fell_back);
    EXPECT_NE(fell_back.error().message.find("wan0"), std::string::npos);
    EXPECT_NE(fell_back.error().message.find("generic"), std::string::npos);
    EXPECT_FALSE(check_sluice_modes("native", *modes, {"dmz0"}));  // not attached
    EXPECT_FALSE(sluice_modes_of("[]"));
}

TEST(BenchSmallpktChecks, OnlyANativeXdpProgramCounts) {
    const std::string links = R"([
        {"ifindex":1,"ifname":"lo"},
        {"ifindex":2,"ifname":"lan0","xdp":{"mode":1,"prog":{"id":7,"name":"xdp_baseline_re","tag":"ab","jited":1}}},
        {"ifindex":3,"ifname":"wan0","xdp":{"mode":2,"prog":{"id":8,"name":"xdp_main_prog","tag":"cd","jited":1}}}])";
    auto lan = native_xdp_program(links, "lan0");
    ASSERT_TRUE(lan) << lan.error().message;
    EXPECT_EQ(*lan, "xdp_baseline_re");
    auto generic = native_xdp_program(links, "wan0");
    ASSERT_FALSE(generic);
    EXPECT_NE(generic.error().message.find("not attached natively"), std::string::npos);
    EXPECT_FALSE(native_xdp_program(links, "lo"));
    EXPECT_FALSE(native_xdp_program(links, "eth9"));
}

TEST(BenchSmallpktChecks, TheFirewallsCounterMustAccountForWhatArrived) {
    EXPECT_TRUE(check_forwarded("x", 1'000'000, 1'000'000));
    EXPECT_TRUE(check_forwarded("x", 1'200'000, 1'000'000));  // read just outside the window
    EXPECT_TRUE(check_forwarded("x", 990'000, 1'000'000));
    EXPECT_FALSE(check_forwarded("x", 989'999, 1'000'000));
    EXPECT_FALSE(check_forwarded("x", 0, 1'000'000));
    EXPECT_FALSE(check_forwarded("x", 0, 0));
    auto bypassed = check_forwarded("sluice's forward counter", 12, 1'000'000);
    ASSERT_FALSE(bypassed);
    EXPECT_NE(bypassed.error().message.find("moved by 12 while the receiver counted 1000000"), std::string::npos)
        << bypassed.error().message;
}

namespace {

json measurement(int pass, const std::string& config, const std::string& rate, double offered, double received,
                 double loss, double softirq_ns, double busy_ns) {
    return {{"bench", "smallpkt"},
            {"pass", pass},
            {"config", config},
            {"rate", rate},
            {"offered_pps", offered},
            {"received_pps", received},
            {"loss_percent", loss},
            {"softirq_ns_per_packet", softirq_ns},
            {"busy_ns_per_packet", busy_ns},
            {"in_path", config == "kernel" ? "nothing attached" : "sluice's forward counter +1500000"}};
}

std::vector<json> synthetic_records() {
    std::vector<json> r;
    r.push_back({{"bench", "smallpkt"},
                 {"event", "setup"},
                 {"passes", 3},
                 {"seconds", 10},
                 {"rate_pps", 150000},
                 {"configs", {"kernel", "sluice-native", "xdp-redirect"}},
                 {"flows", 256},
                 {"first_source_port", 10000},
                 {"frame_bytes", 60},
                 {"machine", "6.18.0, 2 CPUs, Test CPU"},
                 {"date", "2026-12-05 15:00 UTC"},
                 {"load_start", "0.10 0.20 0.30"}});
    // Three passes, each in its own order, as the run writes them.
    r.push_back(measurement(1, "kernel", "fixed", 150000, 150000, 0, 1000, 3000));
    r.push_back(measurement(1, "sluice-native", "fixed", 150000, 150000, 0, 300, 2000));
    r.push_back(measurement(1, "xdp-redirect", "fixed", 150000, 150000, 0, 200, 1900));
    r.push_back(measurement(1, "kernel", "unlimited", 400000, 380000, 5, 1100, 5000));
    r.push_back(measurement(1, "sluice-native", "unlimited", 500000, 500000, 0, 320, 4000));
    r.push_back(measurement(2, "sluice-native", "fixed", 150100, 149900, 0.13, 400, 2100));
    r.push_back(measurement(2, "xdp-redirect", "fixed", 150000, 150000, 0, 250, 1800));
    r.push_back(measurement(2, "kernel", "fixed", 149900, 149900, 0, 1200, 3100));
    r.push_back(measurement(2, "kernel", "unlimited", 420000, 400000, 4.76, 1000, 5100));
    r.push_back(measurement(2, "sluice-native", "unlimited", 520000, 520000, 0, 300, 3900));
    r.push_back(measurement(3, "xdp-redirect", "fixed", 150000, 150000, 0, 220, 1850));
    r.push_back(measurement(3, "kernel", "fixed", 150000, 150000, 0, 1100, 3050));
    r.push_back(measurement(3, "sluice-native", "fixed", 150000, 150000, 0, 330, 2050));
    r.push_back({{"bench", "smallpkt"}, {"event", "end"}});
    return r;
}

}  // namespace

TEST(BenchSmallpktReport, MediansAndPerPassRatiosFromTheRecordsAlone) {
    auto text = smallpkt_benchmark().report(synthetic_records());
    EXPECT_EQ(text.rfind("# Small-packet forwarding benchmark, 2026-12-05 15:00 UTC\n\n", 0), 0u) << text;
    EXPECT_NE(text.find("6.18.0, 2 CPUs, Test CPU"), std::string::npos);
    EXPECT_NE(text.find("64-byte frames"), std::string::npos);
    EXPECT_NE(text.find("256 flows (one source port each from 10000)"), std::string::npos) << text;
    // Fixed rate: kernel 1000/1200/1100 ns, sluice 300/400/330, redirect
    // 200/250/220; ratios per pass: sluice/kernel 0.30, 0.33, 0.30;
    // sluice/redirect 1.50, 1.60, 1.50.
    const std::string fixed =
        "## At a fixed rate: 150000 packets/s offered\n\n"
        "| configuration | offered Mpps | received Mpps | loss % | CPU ns/pkt (softirq) | CPU / kernel | CPU / "
        "minimal redirect | busy ns/pkt (all CPU time) |\n"
        "|---|---|---|---|---|---|---|---|\n"
        "| kernel forwarding | 0.150 (0.150–0.150) | 0.150 (0.150–0.150) | 0.00 (0.00–0.00) | 1100 (1000–1200) | "
        "1.00 (1.00–1.00) | 5.00 (4.80–5.00) | 3050 (3000–3100) |\n"
        "| sluice native XDP | 0.150 (0.150–0.150) | 0.150 (0.150–0.150) | 0.00 (0.00–0.13) | 330 (300–400) | "
        "0.30 (0.30–0.33) | 1.50 (1.50–1.60) | 2050 (2000–2100) |\n"
        "| minimal XDP redirect | 0.150 (0.150–0.150) | 0.150 (0.150–0.150) | 0.00 (0.00–0.00) | 220 (200–250) | "
        "0.20 (0.20–0.21) | 1.00 (1.00–1.00) | 1850 (1800–1900) |\n";
    EXPECT_NE(text.find(fixed), std::string::npos) << text;
    // Unlimited: two passes, no redirect measured: its ratio column is empty.
    const std::string unlimited =
        "| kernel forwarding | 0.410 (0.400–0.420) | 0.390 (0.380–0.400) | 4.88 (4.76–5.00) | 1050 (1000–1100) | "
        "1.00 (1.00–1.00) | - | 1.00 (1.00–1.00) |\n"
        "| sluice native XDP | 0.510 (0.500–0.520) | 0.510 (0.500–0.520) | 0.00 (0.00–0.00) | 310 (300–320) | "
        "0.30 (0.29–0.30) | - | 1.31 (1.30–1.32) |\n";
    EXPECT_NE(text.find(unlimited), std::string::npos) << text;
    EXPECT_EQ(text.find("| minimal XDP redirect | 0.150 (0.150–0.150) | 0.150 (0.150–0.150) | 0.00 (0.00–0.00) | "
                        "220 (200–250) | 0.20",
                        text.find("## Unlimited")),
              std::string::npos)
        << "the redirect has no unlimited row";
    EXPECT_NE(text.find("sluice-native fixed pass 2: sluice's forward counter +1500000"), std::string::npos);
}
