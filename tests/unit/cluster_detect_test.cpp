// --env auto: the seed's order (remote cluster, local cluster, standalone,
// then namespaces), an environment counting when its firewall instance is
// RUNNING per `incus info`, the `sg incus-admin -c` retry on a permission
// error, and the netns fallback. Driven by the stand-in `incus` and `sg`
// executables (tests/integration/fake-incus/, first on PATH) and by an
// injected runner.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cluster/environment.h"
#include "cluster/incus_cli.h"

using namespace sluice::cluster;
namespace fs = std::filesystem;

namespace {

const std::string kShipped = std::string(SLUICE_TEST_DATA_DIR) + "/../../cluster/environments.yaml";
const std::string kStandIns = std::string(SLUICE_TEST_DATA_DIR) + "/../integration/fake-incus";

// PATH with the stand-ins first, plus a scenario file; restored afterwards.
class StandInIncus : public ::testing::Test {
protected:
    void SetUp() override {
        const char* path = std::getenv("PATH");
        old_path_ = path ? path : "";
        dir_ = fs::temp_directory_path() / ("sluice-fake-incus-" + std::to_string(getpid()));
        fs::create_directories(dir_);
        scenario_ = (dir_ / "scenario").string();
        log_ = (dir_ / "calls.log").string();
        setenv("PATH", (kStandIns + ":" + old_path_).c_str(), 1);
        setenv("FAKE_INCUS_SCENARIO", scenario_.c_str(), 1);
        setenv("FAKE_INCUS_LOG", log_.c_str(), 1);
        unsetenv("FAKE_INCUS_DENY");
        auto envs = load_environments(kShipped);
        ASSERT_TRUE(envs) << envs.error().message;
        envs_ = *envs;
    }
    void TearDown() override {
        setenv("PATH", old_path_.c_str(), 1);
        unsetenv("FAKE_INCUS_SCENARIO");
        unsetenv("FAKE_INCUS_LOG");
        unsetenv("FAKE_INCUS_DENY");
        fs::remove_all(dir_);
    }
    void scenario(const std::string& lines) { std::ofstream(scenario_) << lines; }
    std::string calls() {
        std::ifstream in(log_);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    std::string detect(std::vector<std::string>* notes = nullptr) {
        IncusCli incus;
        auto env = detect_environment(envs_, incus, notes);
        return env ? env->name : "error: " + env.error().message;
    }

    std::string old_path_;
    fs::path dir_;
    std::string scenario_, log_;
    Environments envs_;
};

}  // namespace

TEST_F(StandInIncus, PrefersTheRemoteCluster) {
    scenario("loss:bpfrx-fw0 RUNNING\nbpfrx-fw0 RUNNING\nbpfrx-fw RUNNING\n");
    EXPECT_EQ(detect(), "loss-cluster");
    EXPECT_EQ(calls(), "incus info loss:bpfrx-fw0 [group=]\n");
}

TEST_F(StandInIncus, ThenTheLocalCluster) {
    scenario("loss:bpfrx-fw0 STOPPED\nbpfrx-fw0 RUNNING\nbpfrx-fw RUNNING\n");
    std::vector<std::string> notes;
    EXPECT_EQ(detect(&notes), "local-cluster");
    ASSERT_EQ(notes.size(), 2u);
    EXPECT_EQ(notes[0], "loss-cluster: loss:bpfrx-fw0 is STOPPED");
    EXPECT_EQ(notes[1], "local-cluster: bpfrx-fw0 is RUNNING");
}

TEST_F(StandInIncus, ThenStandalone) {
    scenario("bpfrx-fw RUNNING\n");  // the others are unknown to incus
    std::vector<std::string> notes;
    EXPECT_EQ(detect(&notes), "standalone");
    ASSERT_EQ(notes.size(), 3u);
    EXPECT_NE(notes[0].find("Instance not found"), std::string::npos) << notes[0];
}

TEST_F(StandInIncus, FallsBackToNamespacesWhenNothingRuns) {
    scenario("loss:bpfrx-fw0 STOPPED\nbpfrx-fw0 FROZEN\nbpfrx-fw STOPPED\n");
    EXPECT_EQ(detect(), "netns");
}

TEST_F(StandInIncus, FallsBackToNamespacesWhenIncusIsNotInstalled) {
    fs::path empty = dir_ / "empty-bin";
    fs::create_directories(empty);
    setenv("PATH", empty.c_str(), 1);  // no incus anywhere
    std::vector<std::string> notes;
    EXPECT_EQ(detect(&notes), "netns");
    ASSERT_GE(notes.size(), 3u);
    EXPECT_EQ(notes[0], "loss-cluster: skipped (incus is not installed)");
    EXPECT_EQ(notes[1], "local-cluster: skipped (incus is not installed)");
}

TEST_F(StandInIncus, RetriesThroughSgIncusAdminOnPermissionErrorAndRemembers) {
    scenario("loss:bpfrx-fw0 STOPPED\nbpfrx-fw0 RUNNING\n");
    setenv("FAKE_INCUS_DENY", "1", 1);
    IncusCli incus;
    auto env = detect_environment(envs_, incus);
    ASSERT_TRUE(env) << env.error().message;
    EXPECT_EQ(env->name, "local-cluster");
    EXPECT_TRUE(incus.using_sg());
    // First call: denied, retried through sg; second call: straight through sg.
    EXPECT_EQ(calls(),
              "incus info loss:bpfrx-fw0 [group=]\n"
              "sg incus-admin -c incus info loss:bpfrx-fw0\n"
              "incus info loss:bpfrx-fw0 [group=incus-admin]\n"
              "sg incus-admin -c incus info bpfrx-fw0\n"
              "incus info bpfrx-fw0 [group=incus-admin]\n");
}

TEST(ClusterDetect, InjectedRunnerSeesQuotedSgCommand) {
    std::vector<std::vector<std::string>> seen;
    IncusCli incus(
        [&](const std::vector<std::string>& argv, std::chrono::milliseconds) -> sluice::Result<CommandResult> {
            seen.push_back(argv);
            CommandResult r;
            if (argv[0] == "incus") {
                r.exit_status = 1;
                r.err = "Error: not authorized";
            } else {
                r.exit_status = 0;
                r.out = "Name: x\nStatus: Running\n";
            }
            return r;
        });
    auto status = incus.instance_status("my remote:it's");
    ASSERT_TRUE(status) << status.error().message;
    EXPECT_EQ(*status, "RUNNING");
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[1], (std::vector<std::string>{"sg", "incus-admin", "-c", "incus info 'my remote:it'\\''s'"}));
}

TEST(ClusterDetect, ParsesIncusInfo) {
    EXPECT_EQ(parse_incus_status("Name: bpfrx-fw0\nStatus: RUNNING\nType: virtual-machine\n"), "RUNNING");
    EXPECT_EQ(parse_incus_status("Name: x\n  Status:   Stopped  \n"), "STOPPED");
    EXPECT_EQ(parse_incus_status("Name: x\n"), "");
    EXPECT_TRUE(is_permission_error("connect: Permission denied"));
    EXPECT_TRUE(is_permission_error("Error: not authorized"));
    // What incus 6.0.4 prints to a user outside incus-admin (seen here).
    EXPECT_TRUE(is_permission_error("Error: You don't have the needed permissions to talk to the incus daemon "
                                    "(socket path: /var/lib/incus/unix.socket)"));
    EXPECT_FALSE(is_permission_error("Error: Instance not found"));
}

// incus 6.0.4's first-run notice, printed before its error to a user who has
// never run incus (no ~/.config/incus), as it appears in /usr/bin/incus.
constexpr const char* kFirstRunNotice =
    "If this is your first time running Incus on this machine, you should also run: incus admin init\n"
    "To start your first container, try: incus launch images:ubuntu/22.04\n"
    "Or for a virtual machine: incus launch images:ubuntu/22.04 --vm\n"
    "\n";
constexpr const char* kNoPermission =
    "Error: You don't have the needed permissions to talk to the incus daemon (socket path: "
    "/var/lib/incus/unix.socket)\n";

TEST(IncusStderr, FirstRunNoticeIsDropped) {
    EXPECT_EQ(without_first_run_notice(std::string(kFirstRunNotice) + kNoPermission), kNoPermission);
    EXPECT_EQ(without_first_run_notice(kNoPermission), kNoPermission);
    EXPECT_EQ(without_first_run_notice("Error: Instance not found\n"), "Error: Instance not found\n");
    EXPECT_EQ(without_first_run_notice(""), "");
    // The notice alone (incus succeeded after printing it): nothing left.
    EXPECT_EQ(without_first_run_notice(kFirstRunNotice), "");
}

TEST(IncusStderr, DaemonNotStartedSaysHowToStartIt) {
    const std::string stopped =
        "Error: The incus daemon doesn't appear to be started (socket path: /var/lib/incus/unix.socket)\n";
    EXPECT_TRUE(is_daemon_not_started(stopped));
    EXPECT_FALSE(is_daemon_not_started(kNoPermission));
    EXPECT_EQ(explain_incus_stderr(std::string(kFirstRunNotice) + stopped),
              "Error: The incus daemon doesn't appear to be started (socket path: /var/lib/incus/unix.socket): start "
              "it with scripts/incus-setup.sh up (or your distribution's service, e.g. systemctl start incus)\n");
    EXPECT_EQ(explain_incus_stderr(kNoPermission), kNoPermission);
    // Through IncusCli::run, every caller sees the advice.
    IncusCli incus([&](const std::vector<std::string>&, std::chrono::milliseconds) -> sluice::Result<CommandResult> {
        CommandResult r;
        r.exit_status = 1;
        r.err = stopped;
        return r;
    });
    auto status = incus.instance_status("sluice-fw0");
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().message,
              "incus info sluice-fw0 failed: Error: The incus daemon doesn't appear to be started (socket path: "
              "/var/lib/incus/unix.socket): start it with scripts/incus-setup.sh up (or your distribution's service, "
              "e.g. systemctl start incus)");
}

TEST(IncusStderr, PermissionMessageKeepsIncusErrorAndAdviceNotTheNotice) {
    // A user outside incus-admin, in a non-login shell: incus prints its
    // notice and the permission error; sg cannot switch either.
    std::vector<std::vector<std::string>> seen;
    IncusCli incus([&](const std::vector<std::string>& argv, std::chrono::milliseconds) -> sluice::Result<CommandResult> {
        seen.push_back(argv);
        CommandResult r;
        r.exit_status = 1;
        r.err = argv[0] == "incus" ? std::string(kFirstRunNotice) + kNoPermission : "Password: Invalid password.\n";
        return r;
    });
    auto status = incus.instance_status("sluice-fw0");
    ASSERT_FALSE(status);
    ASSERT_EQ(seen.size(), 2u);
    const std::string& m = status.error().message;
    EXPECT_EQ(m.find("first time"), std::string::npos) << m;
    EXPECT_EQ(m.find("incus launch"), std::string::npos) << m;
    EXPECT_EQ(m,
              "incus info sluice-fw0 failed: Error: You don't have the needed permissions to talk to the incus daemon "
              "(socket path: /var/lib/incus/unix.socket) (retried as `sg incus-admin -c`: Password: Invalid "
              "password.). Add this user to the incus-admin group (usermod -aG incus-admin USER) or run as root.");
}

TEST(IncusStderr, NotFoundIsRecognised) {
    EXPECT_TRUE(is_incus_not_found("Error: Instance not found\n"));
    EXPECT_TRUE(is_incus_not_found("Error: Failed to fetch instance \"x\" in project \"default\": Instance not found"));
    EXPECT_TRUE(is_incus_not_found("Error: Not Found\n"));
    EXPECT_FALSE(is_incus_not_found(kNoPermission));
}
