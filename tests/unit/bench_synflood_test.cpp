// `sluice bench synflood`'s own logic (userspace/bench/synflood_*): the
// trafgen packet it floods with, the in-path checks that fail a run, the CPU
// and packet-rate arithmetic, the parsers of the tools' JSON, the process
// group the flood runs in, and the report rendered from records alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "bench/benchmark.h"
#include "bench/synflood_checks.h"
#include "bench/synflood_trafgen.h"
#include "cluster/process.h"

using namespace sluice::bench;
using nlohmann::json;

TEST(BenchSynfloodTrafgen, ConfigIsTheSpoofedSynForTheGivenMacsAndAddress) {
    SynPacketSpec spec;
    spec.destination_mac = "AA:bb:cc:00:01:02";  // ip prints lower case; upper case is read the same
    spec.source_mac = "02:00:00:00:64:c8";
    spec.destination = "198.18.1.10";
    auto text = trafgen_syn_config(spec);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_EQ(*text,
              "{\n"
              "  0xaa, 0xbb, 0xcc, 0x00, 0x01, 0x02, 0x02, 0x00, 0x00, 0x00, 0x64, 0xc8, c16(0x0800),\n"
              "  0x45, 0x00, c16(40), drnd(2), c16(0x4000), 64, 6, csumip(14, 33),\n"
              "  198, 19, drnd(2),\n"
              "  198, 18, 1, 10,\n"
              "  drnd(2), c16(5301), drnd(4), c32(0), 0x50, 0x02, c16(64240), csumtcp(14, 34), c16(0),\n"
              "}\n");

    spec.source_net = {10, 7};
    spec.destination = "192.0.2.33";
    spec.port = 8080;
    auto other = trafgen_syn_config(spec);
    ASSERT_TRUE(other) << other.error().message;
    EXPECT_NE(other->find("  10, 7, drnd(2),\n  192, 0, 2, 33,\n"), std::string::npos) << *other;
    EXPECT_NE(other->find("c16(8080)"), std::string::npos) << *other;
}

TEST(BenchSynfloodTrafgen, BadMacsAndAddressesAreRefused) {
    SynPacketSpec spec;
    spec.destination_mac = "aa:bb:cc:dd:ee:ff";
    spec.source_mac = "02:00:00:00:64:c8";
    EXPECT_TRUE(trafgen_syn_config(spec));
    for (const char* bad : {"", "aa:bb:cc:dd:ee", "aa:bb:cc:dd:ee:ff:00", "aa-bb-cc-dd-ee-ff", "zz:bb:cc:dd:ee:ff"}) {
        SynPacketSpec b = spec;
        b.destination_mac = bad;
        EXPECT_FALSE(trafgen_syn_config(b)) << bad;
    }
    SynPacketSpec v6 = spec;
    v6.destination = "2001:2:0:1::10";
    EXPECT_FALSE(trafgen_syn_config(v6));
}

TEST(BenchSynfloodTrafgen, ArgvSendsFromOneCpuAndLeavesTheMachineAlone) {
    EXPECT_EQ(trafgen_argv("eth0", "/tmp/x/syn.cfg"),
              (std::vector<std::string>{"trafgen", "--dev", "eth0", "--conf", "/tmp/x/syn.cfg", "--cpus", "1",
                                        "--no-sock-mem", "--notouch-irq", "--no-cpu-stats"}));
}

// The flood's processes only stop when their group is signalled: a child
// that ignores SIGINT (as the shell's background job does) must be gone
// after stop() too, not only the process that was started.
TEST(BenchSynfloodTrafgen, StopEndsTheWholeProcessGroup) {
    char dir[] = "/tmp/sluice-synflood-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string log = std::string(dir) + "/group.log";
    auto flood = TrafgenFlood::start_argv({"sh", "-c", "trap '' INT; sleep 300 & echo $!; wait"}, log);
    ASSERT_TRUE(flood) << flood.error().message;
    EXPECT_EQ(getpgid((*flood)->pgid()), (*flood)->pgid()) << "not the leader of its own process group";
    EXPECT_EQ(getsid((*flood)->pgid()), (*flood)->pgid()) << "not in a session of its own";
    int child = 0;
    for (int i = 0; i < 100 && child == 0; ++i) {
        std::ifstream in(log);
        in >> child;
        if (child == 0) usleep(50 * 1000);
    }
    ASSERT_GT(child, 0) << "the background child's PID never reached the log";
    EXPECT_EQ(getpgid(child), (*flood)->pgid());
    EXPECT_TRUE((*flood)->running());
    auto s = (*flood)->stop();
    EXPECT_TRUE(s) << s.error().message;
    EXPECT_FALSE((*flood)->running());
    EXPECT_FALSE(sluice::cluster::pid_running(child)) << "the group's other process survived stop()";
    EXPECT_TRUE((*flood)->stop());  // idempotent
    std::remove(log.c_str());
    rmdir(dir);
}

TEST(BenchSynfloodTrafgen, AProgramThatCannotStartIsAnError) {
    auto flood = TrafgenFlood::start_argv({"/nonexistent/trafgen"}, "/dev/null");
    EXPECT_FALSE(flood);
}

TEST(BenchSynfloodSystems, NamesAreCheckedAndKeepTheirOrder) {
    auto all = parse_systems("none sluice sluice-proxy sluice-auto nft-ct nft-synproxy");
    ASSERT_TRUE(all) << all.error().message;
    EXPECT_EQ(*all, synflood_systems());
    auto some = parse_systems(" nft-ct,sluice-proxy  none ");
    ASSERT_TRUE(some) << some.error().message;
    EXPECT_EQ(*some, (std::vector<std::string>{"nft-ct", "sluice-proxy", "none"}));
    auto bad = parse_systems("none iptables");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("iptables"), std::string::npos);
    EXPECT_FALSE(parse_systems("  "));
    EXPECT_TRUE(is_sluice_system("sluice-auto"));
    EXPECT_FALSE(is_sluice_system("none"));
    EXPECT_TRUE(is_nft_system("nft-synproxy"));
    EXPECT_FALSE(is_nft_system("sluice"));
}

TEST(BenchSynfloodCpu, SharesComeFromTheCpuLineOfProcStat) {
    // user nice system idle iowait irq softirq steal guest guest_nice
    auto a = parse_cpu_sample("cpu  100 0 50 800 50 0 0 0 7 7\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 5\n");
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_EQ(a->total, 1000u);  // guest time is inside user already: not counted twice
    EXPECT_EQ(a->idle, 850u);
    EXPECT_EQ(a->softirq, 0u);
    auto b = parse_cpu_sample("cpu  400 0 150 900 50 0 300 0 7 7\n");
    ASSERT_TRUE(b) << b.error().message;
    // 800 ticks passed, 100 of them idle: 87.5 % busy, softirq 300 / 800.
    auto share = cpu_share(*a, *b);
    EXPECT_DOUBLE_EQ(share.busy_percent, 87.5);
    EXPECT_DOUBLE_EQ(share.softirq_percent, 37.5);
    // Rounded to 0.1: 1/3 idle.
    auto c = parse_cpu_sample("cpu  0 0 0 0 0 0 0 0\n");
    auto d = parse_cpu_sample("cpu  2 0 0 1 0 0 1 0\n");
    ASSERT_TRUE(c && d);
    EXPECT_DOUBLE_EQ(cpu_share(*c, *d).busy_percent, 75.0);
    auto e = parse_cpu_sample("cpu  1 0 0 2 0 0 0 0\n");
    ASSERT_TRUE(e);
    EXPECT_DOUBLE_EQ(cpu_share(*c, *e).busy_percent, 33.3);
    // No time passed: nothing, not a division by zero.
    auto none = cpu_share(*a, *a);
    EXPECT_EQ(none.busy_percent, 0);
    EXPECT_EQ(none.softirq_percent, 0);
    EXPECT_FALSE(parse_cpu_sample("cpu0 1 2 3\n"));
    EXPECT_FALSE(parse_cpu_sample("cpu  1 2 3\n"));
}

TEST(BenchSynfloodIp, RxPacketsAndMacAreReadFromIpJson) {
    const std::string link =
        R"([{"ifindex":3,"link_index":2,"ifname":"wan0","flags":["BROADCAST","UP"],"mtu":1500,"qdisc":"noqueue",
             "link_type":"ether","address":"6a:1f:00:aa:bb:cc","broadcast":"ff:ff:ff:ff:ff:ff",
             "stats64":{"rx":{"bytes":9000,"packets":150,"errors":0,"dropped":0},
                        "tx":{"bytes":100,"packets":2,"errors":0,"dropped":0}}}])";
    auto rx = rx_packets_of(link);
    ASSERT_TRUE(rx) << rx.error().message;
    EXPECT_EQ(*rx, 150u);
    auto mac = mac_of(link);
    ASSERT_TRUE(mac) << mac.error().message;
    EXPECT_EQ(*mac, "6a:1f:00:aa:bb:cc");
    EXPECT_FALSE(rx_packets_of(R"([{"ifname":"wan0","address":"6a:1f:00:aa:bb:cc"}])"));  // no -s
    EXPECT_FALSE(rx_packets_of("[]"));
    EXPECT_FALSE(mac_of("Device \"wan0\" does not exist."));
}

TEST(BenchSynfloodChecks, TheFloodMustReachTheFirewall) {
    PacketWindow without{20000, 2.0};   // 10,000/s from the connections alone
    PacketWindow flooded{300000, 2.0};  // 150,000/s
    EXPECT_TRUE(check_flood_reached("sluice", without, flooded));
    EXPECT_DOUBLE_EQ(syn_rate(without, flooded), 140000);
    // Only the connections' own packets, or less than the margin above them.
    EXPECT_FALSE(check_flood_reached("sluice", without, PacketWindow{20000, 2.0}));
    PacketWindow just_under{20000 + static_cast<uint64_t>(2 * kFloodMargin), 2.0};
    auto under = check_flood_reached("nft-ct", without, just_under);
    ASSERT_FALSE(under);
    EXPECT_NE(under.error().message.find("nft-ct: the flood did not reach the firewall"), std::string::npos);
    EXPECT_TRUE(check_flood_reached("nft-ct", without, PacketWindow{just_under.packets + 2, 2.0}));
    // Rates, not counts: a longer window with more packets is not more flood.
    EXPECT_FALSE(check_flood_reached("none", PacketWindow{10000, 1.0}, PacketWindow{50000, 2.0}));
    EXPECT_DOUBLE_EQ(PacketWindow{}.rate(), 0);
}

TEST(BenchSynfloodChecks, EverySystemMustBeInThePath) {
    InPathEvidence e;
    // sluice-proxy: cookies sent during the flood, not before it.
    e.cookies_before = 10;
    e.cookies_after = 10;
    e.session_hits = 5000;
    auto proxy = check_in_path("sluice-proxy", e);
    ASSERT_FALSE(proxy);
    EXPECT_NE(proxy.error().message.find("no SYN cookie"), std::string::npos);
    e.cookies_after = 11;
    EXPECT_TRUE(check_in_path("sluice-proxy", e));
    // sluice and sluice-auto: packets hit sessions.
    InPathEvidence hits;
    EXPECT_FALSE(check_in_path("sluice", hits));
    EXPECT_FALSE(check_in_path("sluice-auto", hits));
    hits.session_hits = 1;
    EXPECT_TRUE(check_in_path("sluice", hits));
    EXPECT_TRUE(check_in_path("sluice-auto", hits));
    EXPECT_FALSE(check_in_path("sluice-proxy", hits)) << "session hits do not prove the proxy answered";
    // nftables: the table's counters moved.
    InPathEvidence nft;
    EXPECT_FALSE(check_in_path("nft-ct", nft));
    EXPECT_FALSE(check_in_path("nft-synproxy", nft));
    nft.nft_packets = 3;
    EXPECT_TRUE(check_in_path("nft-ct", nft));
    EXPECT_TRUE(check_in_path("nft-synproxy", nft));
    EXPECT_TRUE(check_in_path("none", InPathEvidence{}));
}

TEST(BenchSynfloodChecks, TheSourceLimitMustRefuseSomething) {
    EXPECT_TRUE(check_source_limit(false, 0));
    EXPECT_TRUE(check_source_limit(true, 384));
    auto s = check_source_limit(true, 0);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("dropped nothing"), std::string::npos);
}

TEST(BenchSynfloodChecks, SessionTableCountsSpoofedSources) {
    json doc = {{"sessions",
                 {{{"source", "198.19.4.7"}, {"destination", "198.18.1.10"}},
                  {{"source", "198.18.100.200"}, {"destination", "198.18.1.10"}},
                  {{"source", "198.19.255.1"}, {"destination", "198.18.1.10"}},
                  {{"source", "198.191.0.1"}, {"destination", "198.18.1.10"}}}},
                {"table", {{"entries", 4}}}};
    auto t = sluice_table_size(doc);
    ASSERT_TRUE(t) << t.error().message;
    EXPECT_EQ(t->spoofed, 2u);  // 198.191.0.1 is not in 198.19.0.0/16
    EXPECT_EQ(t->all, 4u);
    auto empty = sluice_table_size(json{{"sessions", json::array()}});
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->all, 0u);
    EXPECT_FALSE(sluice_table_size(json{{"counters", json::object()}}));
}

namespace {

json part_a(int pass, const std::string& system, double base, double flood, double syn, double busy, double soft,
            int failures) {
    return {{"bench", "synflood"},
            {"part", "a"},
            {"pass", pass},
            {"system", system},
            {"base_per_second", base},
            {"flood_per_second", flood},
            {"syn_per_second", syn},
            {"cpu_busy_percent", busy},
            {"softirq_percent", soft},
            {"failures", failures}};
}

json part_b(int pass, const std::string& screen, double alone, double with, double flooder, int refused) {
    return {{"bench", "synflood"},
            {"part", "b"},
            {"pass", pass},
            {"screen", screen},
            {"legit_alone_per_second", alone},
            {"legit_with_flooder_per_second", with},
            {"flooder_per_second", flooder},
            {"refused", refused}};
}

std::vector<json> synthetic_records(bool with_b) {
    std::vector<json> r;
    r.push_back({{"bench", "synflood"},
                 {"event", "setup"},
                 {"passes", 2},
                 {"seconds", 5},
                 {"concurrency", 8},
                 {"machine", "6.18.0, 2 CPUs, Test CPU"},
                 {"date", "2026-01-02 03:04 UTC"}});
    r.push_back(part_a(1, "none", 1000, 900, 100000, 100, 60, 0));
    auto s1 = part_a(1, "sluice", 800, 0, 130000, 56, 28, 40);
    s1["spoofed_flows"] = 80000;
    s1["all_flows"] = 131072;
    r.push_back(s1);
    auto s2 = part_a(2, "sluice", 0, 0, 140000, 58, 28, 42);  // nothing got through, even without the flood
    s2["spoofed_flows"] = 82000;
    s2["all_flows"] = 131072;
    r.push_back(s2);
    r.push_back(part_a(2, "none", 1200, 1200, 110000, 99.6, 62, 0));
    if (with_b) {
        r.push_back(part_b(1, "no limit", 9000, 3600, 8000, 0));
        r.push_back(part_b(1, "source-limit: { new-sessions: 2000 }", 9000, 8100, 1700, 384));
    }
    r.push_back({{"bench", "synflood"}, {"event", "end"}});
    return r;
}

}  // namespace

TEST(BenchSynfloodReport, TablesAreRenderedFromTheRecordsAlone) {
    auto text = synflood_benchmark().report(synthetic_records(true));
    EXPECT_EQ(text.rfind("# SYN-flood benchmark\n\n2 pass(es), 5 s of connections per measurement, 8 in flight, 1 s "
                         "timeout; flows: the firewall's sessions (sluice) or conntrack entries (nft) after the flood, "
                         "the legitimate connections' closed flows included.\n\n",
                         0),
              0u)
        << text;
    EXPECT_NE(text.find("6.18.0, 2 CPUs, Test CPU"), std::string::npos);
    const std::string table =
        "| system | conn/s without flood | conn/s with flood | with / without | SYN/s at the firewall | flows from "
        "spoofed sources after | all flows after | CPU busy % (softirq %) | failed connections in the flood |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
        "| none | 1100 (1000–1200) | 1050 (900–1200) | 0.95 (0.90–1.00) | 105000 (100000–110000) | - | - | "
        "100 (100–100) (61 (60–62)) | 0 (0–0) |\n"
        "| sluice | 400 (0–800) | 0 (0–0) | 0.00 (0.00–0.00) | 135000 (130000–140000) | 81000 (80000–82000) | "
        "131072 (131072–131072) | 57 (56–58) (28 (28–28)) | 41 (40–42) |\n";
    EXPECT_NE(text.find(table), std::string::npos) << text;
    const std::string b =
        "\n## (b) One source flooding with real connections (64 in flight from 198.18.100.201; legitimate: 16 "
        "sources, 8 in flight)\n\n"
        "| sluice screen | legitimate conn/s alone | legitimate conn/s with the flooder | with / without | flooder "
        "conn/s | new sessions refused by the limit |\n"
        "|---|---|---|---|---|---|\n"
        "| no limit | 9000 (9000–9000) | 3600 (3600–3600) | 0.40 (0.40–0.40) | 8000 (8000–8000) | 0 (0–0) |\n"
        "| source-limit: { new-sessions: 2000 } | 9000 (9000–9000) | 8100 (8100–8100) | 0.90 (0.90–0.90) | "
        "1700 (1700–1700) | 384 (384–384) |\n";
    EXPECT_NE(text.find(b), std::string::npos) << text;
    EXPECT_EQ(text.substr(text.size() - b.size()), b) << "part (b) is the report's end";
}

TEST(BenchSynfloodReport, WithoutPartBThereIsNoSecondTable) {
    auto text = synflood_benchmark().report(synthetic_records(false));
    EXPECT_NE(text.find("| none | 1100 (1000–1200) |"), std::string::npos) << text;
    EXPECT_EQ(text.find("(b)"), std::string::npos) << text;
    // Rows follow the order systems first appear in the records.
    EXPECT_LT(text.find("| none |"), text.find("| sluice |"));
}

TEST(BenchSynfloodReport, TheConcurrencyOfTheRunIsTheOneReported) {
    auto records = synthetic_records(true);
    records[0]["concurrency"] = 16;
    auto text = synflood_benchmark().report(records);
    EXPECT_NE(text.find(", 16 in flight, 1 s timeout"), std::string::npos) << text;
    EXPECT_NE(text.find("legitimate: 16 sources, 16 in flight)"), std::string::npos) << text;
}

// A measurement whose table filled with the connections' own flows fails,
// and says what to change.
TEST(SynfloodChecks, TableFullFailsTheMeasurement) {
    EXPECT_TRUE(sluice::bench::check_table_not_full("sluice-proxy pass 1", 0));
    auto full = sluice::bench::check_table_not_full("sluice-proxy pass 1", 2585);
    ASSERT_FALSE(full);
    EXPECT_NE(full.error().message.find("sluice-proxy pass 1: the session table filled (drop-session-table-full +2585)"),
              std::string::npos)
        << full.error().message;
    EXPECT_NE(full.error().message.find("lower --time"), std::string::npos);
}
