// `perf-test profile` refuses a profile sluice was not in (perftest/profiler.h,
// record_profile): on a scripted executor standing in for the cluster, with
// sluice detached, stopped (its counters unreadable), attached but not
// counting the traffic, or the background iperf3 failing, there is no
// profile and the error says why; with sluice in the path there is one, and
// the log shows the proof. No cluster, no root.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "perftest/iperf_result.h"
#include "perftest/profiler.h"

namespace sluice::perftest {
namespace {

using cluster::BackgroundProcess;
using cluster::CommandResult;

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(SLUICE_TEST_DATA_DIR "/perftest/") + name);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

constexpr const char* kAttached = R"([{"ifindex":1,"ifname":"lo"},
  {"ifindex":2,"ifname":"lan0","xdp":{"mode":2,"prog":{"id":41,"name":"xdp_main_prog"}}},
  {"ifindex":3,"ifname":"wan0","xdp":{"mode":2,"prog":{"id":41,"name":"xdp_main_prog"}}}])";
constexpr const char* kDetached = R"([{"ifindex":1,"ifname":"lo"},{"ifindex":2,"ifname":"lan0"},{"ifindex":3,"ifname":"wan0"}])";

// The cluster as the profile sees it: fw0 with or without sluice, a LAN
// host whose background iperf3 runs until the profile waits for its end,
// then has `iperf_json` in its log.
class ScriptedCluster : public cluster::Executor {
public:
    bool attached = true;
    bool sluice_running = true;
    uint64_t rx = 1000;
    uint64_t rx_per_run = 0;     // what the traffic adds to sluice's rx counter
    std::string iperf_json = fixture("iperf3_ipv4_multi.json");
    bool ends_at_once = false;   // the iperf3 client exits during the warm-up
    bool detach_during_traffic = false;
    std::vector<std::string> calls;
    int started = 0, stopped = 0;

    std::string kind() const override { return "scripted"; }

    Result<CommandResult> run(const std::string& node, const std::vector<std::string>& argv,
                              std::chrono::seconds) override {
        std::string line = node + ":";
        for (const auto& a : argv) line += " " + (a.find('\n') == std::string::npos ? a : std::string("<script>"));
        calls.push_back(line);
        CommandResult r;
        r.exit_status = 0;
        const std::string& cmd = argv.at(0);
        if (cmd == "perf" && argv.at(1) == "--version") {
            r.out = "perf version 6.1\n";
        } else if (cmd == "ip") {
            r.out = attached ? kAttached : kDetached;
        } else if (cmd == "sh") {  // node_commands::wait_gone PID SECONDS
            const bool poll = argv.back() == "0";
            if (poll) {
                r.exit_status = ends_at_once ? 0 : 1;  // 1: still running
            } else {
                rx += rx_per_run;  // the run ended: what it sent went through fw0
                if (detach_during_traffic) attached = false;
            }
        } else if (cmd == "cat") {
            r.out = iperf_json;
        } else if (cmd == "perf" && argv.at(1) == "report") {
            r.out = fixture("perf_report_ipv4.txt");
        }
        return r;
    }
    Result<BackgroundProcess> start(const std::string& node, const std::vector<std::string>& argv,
                                    const std::string& log_path) override {
        ++started;
        std::string line = node + ": &";
        for (const auto& a : argv) line += " " + a;
        calls.push_back(line);
        return BackgroundProcess{node, 4242, log_path};
    }
    Status stop(const BackgroundProcess&, std::chrono::seconds) override {
        ++stopped;
        return {};
    }
    // `sluice show stats --json` on fw0.
    Result<CommandResult> stats() {
        CommandResult r;
        if (!sluice_running) {
            r.exit_status = 1;
            r.err = "sluice: not running (no pinned state under /sys/fs/bpf/sluice)\n";
            return r;
        }
        r.exit_status = 0;
        r.out = R"({"counters":{"rx":)" + std::to_string(rx) + "}}";
        return r;
    }
    bool ran(const std::string& what) const {
        for (const auto& c : calls)
            if (c.find(what) != std::string::npos) return true;
        return false;
    }
};

class ProfilePath : public ::testing::Test {
protected:
    ProfilePath() : path_(cluster_, "fw0", [this] { return cluster_.stats(); }) {
        env_.name = "scripted";
        env_.kind = cluster::EnvironmentKind::incus;
        env_.lan_host = "lan-host";
        env_.fw0 = "fw0";
        env_.wan_host = "wan-host";
        env_.ipv4_target = "198.18.100.200";
        options_.record_seconds = 1;
        options_.warmup_seconds = 0;
        options_.traffic_seconds = 9;
        options_.streams = 4;
        auto bytes = parse_iperf_json(cluster_.iperf_json);
        EXPECT_TRUE(bytes);
        needed_ = minimum_packets(bytes->receiver_bytes);
        EXPECT_GT(needed_, 1000u);
    }
    Result<ProfileRun> profile() { return record_profile(cluster_, env_, Family::ipv4, options_, path_, log_); }

    ScriptedCluster cluster_;
    PathCheck path_;
    cluster::Environment env_;
    ProfileOptions options_;
    std::ostringstream log_;
    uint64_t needed_ = 0;
};

TEST_F(ProfilePath, SluiceInThePathGivesAProfileAndSaysSo) {
    cluster_.rx_per_run = needed_ + 10;
    auto run = profile();
    ASSERT_TRUE(run) << run.error().message;
    EXPECT_GT(run->profile.samples, 0);
    EXPECT_GT(run->traffic.receiver_bps, 0);
    EXPECT_NE(log_.str().find("in path: sluice attached on fw0 (lan0, wan0), rx +" + std::to_string(needed_ + 10) +
                              " packets (at least " + std::to_string(needed_) + " needed)"),
              std::string::npos)
        << log_.str();
    // The traffic is iperf3 -J, -t as asked, and it was left to end on its own.
    EXPECT_TRUE(cluster_.ran("lan-host: & iperf3 -c 198.18.100.200 -p 5201 -P 4 -t 9 -J")) << cluster_.calls[0];
    EXPECT_EQ(cluster_.stopped, 0);
}

TEST_F(ProfilePath, DetachedSluiceIsRefusedBeforeAnyTraffic) {
    cluster_.attached = false;
    auto run = profile();
    ASSERT_FALSE(run);
    EXPECT_EQ(run.error().message,
              "the IPv4 profile was not measured through sluice on fw0: before the run, sluice's pipeline "
              "(xdp_main_prog at XDP or tc_main_prog at TC ingress) is attached on no interface\n"
              "perf-test reports no profile of traffic sluice was not in.");
    EXPECT_EQ(cluster_.started, 0);
    EXPECT_FALSE(cluster_.ran("perf record"));
}

TEST_F(ProfilePath, StoppedSluiceIsRefused) {
    // `sluice down` detached it and `show stats` has nothing to read.
    cluster_.attached = false;
    cluster_.sluice_running = false;
    EXPECT_FALSE(profile());
    // Attached by something left behind, but not running: no counters.
    cluster_.attached = true;
    auto run = profile();
    ASSERT_FALSE(run);
    EXPECT_NE(run.error().message.find("its counters cannot be read (`sluice show stats` exited with status 1: "
                                       "sluice: not running"),
              std::string::npos)
        << run.error().message;
    EXPECT_EQ(cluster_.started, 0);
}

TEST_F(ProfilePath, TrafficThatBypassedSluiceIsRefused) {
    cluster_.rx_per_run = needed_ - 1;
    auto run = profile();
    ASSERT_FALSE(run);
    EXPECT_NE(run.error().message.find("the IPv4 profile was not measured through sluice on fw0: its rx counter moved by " +
                                       std::to_string(needed_ - 1) + " packets"),
              std::string::npos)
        << run.error().message;
    EXPECT_NE(run.error().message.find("perf-test reports no profile"), std::string::npos);
    EXPECT_FALSE(cluster_.ran("perf report")) << "no report of a profile that is refused";
    EXPECT_TRUE(cluster_.ran("fw0: rm -f /tmp/sluice-perftest-")) << "the perf data is removed";
}

TEST_F(ProfilePath, DetachedDuringTheTrafficIsRefused) {
    cluster_.rx_per_run = needed_ + 10;
    cluster_.detach_during_traffic = true;
    auto run = profile();
    ASSERT_FALSE(run);
    EXPECT_NE(run.error().message.find("after the run, sluice's pipeline (xdp_main_prog at XDP or tc_main_prog at TC ingress) is attached on no interface"),
              std::string::npos)
        << run.error().message;
}

TEST_F(ProfilePath, FailedBackgroundTrafficIsAnErrorNotAnIdleProfile) {
    cluster_.ends_at_once = true;
    cluster_.iperf_json = fixture("iperf3_error_refused.json");
    auto run = profile();
    ASSERT_FALSE(run);
    EXPECT_EQ(run.error().message,
              "background iperf3 on lan-host for the IPv4 profile: iperf3: unable to connect to server: Connection "
              "refused");
    EXPECT_FALSE(cluster_.ran("perf record"));
}

TEST_F(ProfilePath, BusyServerIsRetried) {
    cluster_.ends_at_once = true;
    cluster_.iperf_json = R"({"start":{},"intervals":[],"end":{},"error":"the server is busy running a test. try again later"})";
    auto run = profile();
    ASSERT_FALSE(run);
    EXPECT_EQ(cluster_.started, 4) << "retried like measure_throughput";
    EXPECT_NE(run.error().message.find("busy"), std::string::npos) << run.error().message;
}

}  // namespace
}  // namespace sluice::perftest
