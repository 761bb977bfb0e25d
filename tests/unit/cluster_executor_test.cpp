// The executors: run (exit status, stdout/stderr, timeout), background start
// returning the PID and stop by PID. NetnsExecutor on a namespace made here;
// IncusExecutor through the stand-in `incus` (tests/integration/fake-incus/,
// first on PATH) that runs the command in that same namespace. Namespace
// tests need root and are skipped otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "netns_fixture.h"
#include "cluster/incus_executor.h"
#include "cluster/netns_executor.h"
#include "cluster/process.h"

using namespace sluice::cluster;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::string kStandIns = std::string(SLUICE_TEST_DATA_DIR) + "/../integration/fake-incus";

// A network namespace of our own: "clx-<pid>-node".
class NodeNamespace : public ::testing::Test {
protected:
    void SetUp() override {
        SLUICE_SKIP_WITHOUT_BPF();  // root and namespaces
        prefix_ = "clx-" + std::to_string(getpid());
        ns_ = prefix_ + "-node";
        auto r = run_local({"ip", "netns", "add", ns_}, 10s);
        if (!r || r->exit_status != 0) {
            if (sluice::test::bpf_required()) FAIL() << "SLUICE_REQUIRE_BPF=1, but a network namespace cannot be created";
            GTEST_SKIP() << "cannot create a network namespace";
        }
        log_dir_ = fs::temp_directory_path() / ns_;
        fs::create_directories(log_dir_);
        const char* path = std::getenv("PATH");
        old_path_ = path ? path : "";
    }
    void TearDown() override {
        setenv("PATH", old_path_.c_str(), 1);
        if (!ns_.empty()) (void)run_local({"ip", "netns", "del", ns_}, 10s);
        fs::remove_all(log_dir_);
    }
    void use_stand_in() { setenv("PATH", (kStandIns + ":" + old_path_).c_str(), 1); }

    // Runs argv on the node and checks the run itself worked.
    CommandResult run(Executor& e, const std::vector<std::string>& argv, std::chrono::seconds t = 10s) {
        auto r = e.run("node", argv, t);
        EXPECT_TRUE(r) << (r ? "" : r.error().message);
        return r ? *r : CommandResult{};
    }

    void run_contract(Executor& e) {
        // In the namespace: only lo exists.
        CommandResult links = run(e, {"ip", "-o", "link", "show"});
        EXPECT_EQ(links.exit_status, 0);
        EXPECT_NE(links.out.find("lo:"), std::string::npos) << links.out;
        EXPECT_EQ(links.out.find("eth0"), std::string::npos) << links.out;

        CommandResult both = run(e, {"sh", "-c", "echo to-out; echo to-err >&2; exit 3"});
        EXPECT_EQ(both.exit_status, 3);
        EXPECT_EQ(both.out, "to-out\n");
        EXPECT_EQ(both.err, "to-err\n");
        EXPECT_FALSE(both.timed_out);

        // argv is passed as is: no shell word splitting or expansion.
        CommandResult literal = run(e, {"printf", "%s|", "a b", "$HOME", "it's"});
        EXPECT_EQ(literal.out, "a b|$HOME|it's|");

        // Timeout: the whole process group goes, including a grandchild.
        auto before = std::chrono::steady_clock::now();
        CommandResult slow = run(e, {"sh", "-c", "sleep 30 & sleep 30"}, 1s);
        EXPECT_TRUE(slow.timed_out);
        EXPECT_EQ(slow.exit_status, 128 + 9);
        EXPECT_LT(std::chrono::steady_clock::now() - before, 20s);

        auto missing = e.run("nonode", {"true"}, 10s);
        EXPECT_TRUE(!missing || missing->exit_status != 0);
    }

    void background_contract(Executor& e) {
        std::string log = (log_dir_ / "bg.log").string();
        auto bg = e.start("node", {"sh", "-c", "echo started 'quoted arg'; exec sleep 300"}, log);
        ASSERT_TRUE(bg) << bg.error().message;
        EXPECT_GT(bg->pid, 0);
        EXPECT_EQ(bg->node, "node");
        EXPECT_TRUE(pid_running(bg->pid));
        // It runs in the node's namespace.
        std::string ns_link = fs::read_symlink("/proc/" + std::to_string(bg->pid) + "/ns/net").string();
        auto probe = e.run("node", {"readlink", "/proc/self/ns/net"}, 10s);
        ASSERT_TRUE(probe);
        EXPECT_EQ(ns_link + "\n", probe->out);
        for (int i = 0; i < 50 && !fs::exists(log); ++i) std::this_thread::sleep_for(50ms);
        std::this_thread::sleep_for(100ms);
        std::ifstream in(log);
        std::string first;
        std::getline(in, first);
        EXPECT_EQ(first, "started quoted arg");

        auto stopped = e.stop(*bg, 5s);
        EXPECT_TRUE(stopped) << stopped.error().message;
        EXPECT_FALSE(pid_running(bg->pid));
        // Stopping what is gone is fine.
        EXPECT_TRUE(e.stop(*bg, 1s));

        // A process that ignores SIGTERM gets SIGKILL after the grace.
        auto stubborn = e.start("node", {"sh", "-c", "trap '' TERM; while :; do sleep 1; done"}, log);
        ASSERT_TRUE(stubborn) << stubborn.error().message;
        std::this_thread::sleep_for(200ms);
        auto killed = e.stop(*stubborn, 1s);
        EXPECT_TRUE(killed) << killed.error().message;
        EXPECT_FALSE(pid_running(stubborn->pid));
    }

    std::string prefix_, ns_, old_path_;
    fs::path log_dir_;
};

}  // namespace

TEST(ClusterProcess, RunLocalCapturesAndReportsMissingPrograms) {
    auto r = run_local({"sh", "-c", "printf out; printf err >&2; exit 7"}, 10s);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->exit_status, 7);
    EXPECT_EQ(r->out, "out");
    EXPECT_EQ(r->err, "err");
    auto big = run_local({"head", "-c", "1000000", "/dev/zero"}, 10s);
    ASSERT_TRUE(big);
    EXPECT_EQ(big->out.size(), 1000000u);
    auto missing = run_local({"sluice-no-such-program"}, 10s);
    ASSERT_FALSE(missing);
    EXPECT_TRUE(is_not_found(missing.error())) << missing.error().message;
    auto signalled = run_local({"sh", "-c", "kill -TERM $$"}, 10s);
    ASSERT_TRUE(signalled);
    EXPECT_EQ(signalled->exit_status, 128 + 15);
}

TEST(ClusterProcess, ShellQuoting) {
    EXPECT_EQ(shell_quote("plain-word_1.2:/x"), "plain-word_1.2:/x");
    EXPECT_EQ(shell_quote(""), "''");
    EXPECT_EQ(shell_quote("a b"), "'a b'");
    EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(shell_quote("$(reboot)"), "'$(reboot)'");
    // Round trip through a real shell.
    std::vector<std::string> words{"a b", "it's", "$HOME", "*", "\"q\"", "back\\slash", ""};
    auto r = run_local({"sh", "-c", "printf '%s|' " + shell_join(words)}, 10s);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->out, "a b|it's|$HOME|*|\"q\"|back\\slash||");
}

TEST(ClusterProcess, SpawnDetachedAndStopByPid) {
    std::string log = (fs::temp_directory_path() / ("sluice-spawn-" + std::to_string(getpid()) + ".log")).string();
    auto pid = spawn_detached({"sh", "-c", "echo hello; exec sleep 300"}, log);
    ASSERT_TRUE(pid) << pid.error().message;
    EXPECT_TRUE(pid_running(*pid));
    EXPECT_NE(getpgid(*pid), getpgid(0));  // its own session, not ours
    // Wait for the child's first line before stopping it: a loaded 2-CPU
    // machine has taken over 2 s to start a shell (the bound only keeps a
    // broken spawn from hanging the suite).
    for (int i = 0; i < 1500 && fs::file_size(log) == 0; ++i) std::this_thread::sleep_for(20ms);
    EXPECT_TRUE(stop_local_pid(*pid, 5s));
    EXPECT_FALSE(pid_running(*pid));
    std::ifstream in(log);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "hello");
    fs::remove(log);
    auto missing = spawn_detached({"sluice-no-such-program"}, "/dev/null");
    ASSERT_FALSE(missing);
    EXPECT_TRUE(is_not_found(missing.error()));
}

TEST_F(NodeNamespace, NetnsExecutorRuns) {
    NetnsExecutor e(prefix_);
    EXPECT_EQ(e.kind(), "netns");
    EXPECT_EQ(e.namespace_of("node"), ns_);
    run_contract(e);
}

TEST_F(NodeNamespace, NetnsExecutorStartsAndStopsByPid) {
    NetnsExecutor e(prefix_);
    background_contract(e);
}

TEST_F(NodeNamespace, IncusExecutorRunsThroughTheStandIn) {
    use_stand_in();
    // The stand-in maps instance "loss:<ns>" to namespace <ns>; node "node"
    // reaches it through the scenario's exec mapping.
    std::string scenario = (log_dir_ / "scenario").string();
    std::ofstream(scenario) << "exec loss:node " << ns_ << "\nexec loss:nonode " << prefix_ << "-absent\n";
    setenv("FAKE_INCUS_SCENARIO", scenario.c_str(), 1);
    IncusExecutor e("loss");
    EXPECT_EQ(e.kind(), "incus");
    EXPECT_EQ(e.qualified("node"), "loss:node");
    EXPECT_EQ(e.qualified("other:node"), "other:node");
    run_contract(e);
    unsetenv("FAKE_INCUS_SCENARIO");
}

TEST_F(NodeNamespace, IncusExecutorStartsAndStopsByPidThroughTheStandIn) {
    use_stand_in();
    std::string scenario = (log_dir_ / "scenario").string();
    std::ofstream(scenario) << "exec loss:node " << ns_ << "\n";
    setenv("FAKE_INCUS_SCENARIO", scenario.c_str(), 1);
    setenv("FAKE_INCUS_DENY", "1", 1);  // every call must go through sg incus-admin
    auto incus = std::make_shared<IncusCli>();
    IncusExecutor e("loss", incus);
    background_contract(e);
    EXPECT_TRUE(incus->using_sg());
    unsetenv("FAKE_INCUS_DENY");
    unsetenv("FAKE_INCUS_SCENARIO");
}
