// What `sluice cluster up --env <incus>` builds (cluster/incus_cluster.h),
// read from the plan and the incus arguments, without a daemon: the
// topology, the addresses, container vs VM firewalls, the remote; and the
// package check `up` makes before it creates anything.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster/incus_cluster.h"

namespace sluice::cluster {
namespace {

Environment incus_env(const std::string& fw_type, const std::string& remote = "") {
    Environment e;
    e.name = "t";
    e.kind = EnvironmentKind::incus;
    e.remote = remote;
    e.lan_host = "l";
    e.fw0 = "f0";
    e.fw1 = "f1";
    e.wan_host = "w";
    e.fw_instance_type = fw_type;
    e.host_instance_type = "container";
    e.image = "sluice/node";
    return e;
}

bool has(const std::vector<std::vector<std::string>>& cmds, const std::vector<std::string>& want) {
    return std::find(cmds.begin(), cmds.end(), want) != cmds.end();
}

TEST(IncusPlan, TopologyAndAddresses) {
    IncusPlan plan = plan_incus_cluster(incus_env("container"));
    EXPECT_EQ(plan.networks, (std::vector<std::string>{"sluice-lan", "sluice-wan", "sluice-fab"}));
    ASSERT_EQ(plan.nodes.size(), 4u);
    const IncusNodePlan& fw1 = plan.nodes[2];
    EXPECT_EQ(fw1.role, "fw1");
    EXPECT_TRUE(fw1.firewall);
    EXPECT_EQ(fw1.nics, (std::vector<std::pair<std::string, std::string>>{
                            {"lan0", "sluice-lan"}, {"wan0", "sluice-wan"}, {"fab0", "sluice-fab"}}));
    EXPECT_TRUE(has(fw1.configure, {"ip", "addr", "replace", "198.18.100.2/24", "dev", "wan0"}));
    EXPECT_TRUE(has(fw1.configure, {"ip", "-6", "addr", "replace", "2001:2:0:2::2/64", "dev", "fab0", "nodad"}));
    const IncusNodePlan& lan = plan.nodes[0];
    EXPECT_TRUE(has(lan.configure, {"ip", "route", "replace", "198.18.0.0/15", "via", "198.18.1.1"}));
    // Every address and route is in the benchmarking ranges.
    for (const auto& n : plan.nodes)
        for (const auto& c : n.configure)
            for (const auto& word : c) {
                if (word.find('/') == std::string::npos || word[0] == 'n') continue;
                EXPECT_TRUE(word.rfind("198.18.", 0) == 0 || word.rfind("2001:2:", 0) == 0 || word == "2001:2::/48")
                    << n.name << ": " << word;
            }
}

TEST(IncusPlan, ContainerFirewallsArePrivilegedAndNameTheirNics) {
    IncusPlan plan = plan_incus_cluster(incus_env("container"));
    auto cmds = incus_create_instance(plan, plan.nodes[1]);
    EXPECT_EQ(cmds[0], (std::vector<std::string>{"init", "sluice/node", "f0", "-c", "user.sluice.cluster=t", "-c",
                                                 "security.privileged=true"}));
    EXPECT_TRUE(has(cmds, {"config", "device", "add", "f0", "wan0", "nic", "network=sluice-wan", "name=wan0"}));
    // Hosts are not privileged.
    EXPECT_EQ(incus_create_instance(plan, plan.nodes[0])[0],
              (std::vector<std::string>{"init", "sluice/node", "l", "-c", "user.sluice.cluster=t"}));
}

TEST(IncusPlan, VmFirewallsGetMacsAndCloudInitNames) {
    IncusPlan plan = plan_incus_cluster(incus_env("vm", "loss"));
    EXPECT_EQ(plan.networks[0], "loss:sluice-lan");
    auto cmds = incus_create_instance(plan, plan.nodes[1]);
    EXPECT_EQ(cmds[0], (std::vector<std::string>{"init", "sluice/node", "loss:f0", "-c", "user.sluice.cluster=t", "--vm"}));
    EXPECT_TRUE(has(cmds, {"config", "device", "add", "loss:f0", "lan0", "nic", "network=sluice-lan",
                           "hwaddr=02:5c:00:10:01:00"}));
    const auto& last = cmds.back();
    ASSERT_EQ(last.size(), 4u);
    EXPECT_EQ(last[2], "loss:f0");
    EXPECT_NE(last[3].find("lan0: { match: { macaddress: \"02:5c:00:10:01:00\" }, set-name: lan0"), std::string::npos)
        << last[3];
    EXPECT_EQ(incus_create_network("loss:sluice-lan", "t")[0],
              (std::vector<std::string>{"network", "create", "loss:sluice-lan", "ipv4.address=none", "ipv6.address=none",
                                        "user.sluice.cluster=t"}));
}

TEST(IncusPlan, OneFirewallHasNoFabric) {
    Environment e = incus_env("vm");
    e.fw1.clear();
    e.lan_host.clear();
    e.wan_host.clear();
    IncusPlan plan = plan_incus_cluster(e);
    EXPECT_EQ(plan.networks, (std::vector<std::string>{"sluice-lan", "sluice-wan"}));
    ASSERT_EQ(plan.nodes.size(), 1u);
    EXPECT_EQ(plan.nodes[0].nics.size(), 2u);
}

// A runner standing in for dpkg-deb: its answer to `dpkg-deb --field FILE Package`.
CommandRunner dpkg_deb(int status, const std::string& out, const std::string& err = "") {
    return [=](const std::vector<std::string>& argv, std::chrono::milliseconds) -> Result<CommandResult> {
        EXPECT_EQ(argv.at(0), "dpkg-deb");
        EXPECT_EQ(argv.at(1), "--field");
        EXPECT_EQ(argv.back(), "Package");
        CommandResult r;
        r.exit_status = status;
        r.out = out;
        r.err = err;
        return r;
    };
}

class PackageFile : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("sluice-pkg-test-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        file_ = (dir_ / "not-a.deb").string();
        std::ofstream(file_) << "just text\n";
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::filesystem::path dir_;
    std::string file_;
};

TEST_F(PackageFile, OnlySluicesDebianPackagePasses) {
    EXPECT_TRUE(check_sluice_package(file_, dpkg_deb(0, "sluice\n")));
    auto other = check_sluice_package(file_, dpkg_deb(0, "iperf3\n"));
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().message, "--package " + file_ + " is the Debian package of 'iperf3', not of sluice");
    auto text = check_sluice_package(
        file_, dpkg_deb(2, "", "dpkg-deb: error: '" + file_ + "' is not a Debian format archive\n"));
    ASSERT_FALSE(text);
    EXPECT_EQ(text.error().message, "--package " + file_ + " is not a Debian package (dpkg-deb --field: dpkg-deb: error: '" +
                                        file_ + "' is not a Debian format archive); build sluice's with `cpack -G DEB` "
                                        "in the build directory (docs/packaging.md)");
    auto missing = check_sluice_package((dir_ / "absent.deb").string(), dpkg_deb(0, "sluice\n"));
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("absent.deb: no such file"), std::string::npos);
}

TEST_F(PackageFile, RealDpkgDebRefusesText) {
    if (!std::filesystem::exists("/usr/bin/dpkg-deb")) GTEST_SKIP() << "no dpkg-deb on this machine";
    auto s = check_sluice_package(file_);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("is not a Debian package"), std::string::npos) << s.error().message;
}

TEST_F(PackageFile, UpCreatesNothingForAFileThatIsNotSluicesPackage) {
    std::vector<std::vector<std::string>> calls;
    IncusCli incus([&](const std::vector<std::string>& argv, std::chrono::milliseconds) -> Result<CommandResult> {
        calls.push_back(argv);
        CommandResult r;
        r.exit_status = 0;
        r.out = "[]";
        return r;
    });
    std::ostringstream out;
    IncusUpOptions options;
    options.package = file_;
    auto s = incus_cluster_up(incus_env("container", "lab"), incus, options, out);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("--package " + file_), std::string::npos) << s.error().message;
    EXPECT_TRUE(calls.empty()) << "incus was called " << calls.size() << " times, first: " << calls[0][0];
    EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace sluice::cluster

// The default profile's NICs, read from `incus query`'s JSON: `up` refuses
// while there is one (every lab instance would get it).
TEST(IncusDefaultProfile, NicsAreListedAndOtherDevicesAreNot) {
    std::vector<std::string> asked;
    std::string answer;
    sluice::cluster::IncusCli incus([&](const std::vector<std::string>& argv, std::chrono::milliseconds) -> sluice::Result<sluice::cluster::CommandResult> {
        asked.assign(argv.begin(), argv.end());
        sluice::cluster::CommandResult r;
        r.exit_status = 0;
        r.out = answer;
        return r;
    });
    answer = R"({"name":"default","devices":{"root":{"type":"disk","path":"/","pool":"sluice"}}})";
    auto none = sluice::cluster::default_profile_nics(incus, "");
    ASSERT_TRUE(none) << none.error().message;
    EXPECT_TRUE(none->empty());
    EXPECT_EQ(asked, (std::vector<std::string>{"incus", "query", "/1.0/profiles/default"}));

    answer = R"({"devices":{"root":{"type":"disk"},"eth0":{"type":"nic","network":"incusbr0"},)"
             R"("eth1":{"type":"nic","nictype":"macvlan","parent":"eno1"},"eth2":{"type":"nic","nictype":"p2p"}}})";
    auto two = sluice::cluster::default_profile_nics(incus, "lab");
    ASSERT_TRUE(two) << two.error().message;
    EXPECT_EQ(*two, (std::vector<std::string>{"eth0 (network incusbr0)", "eth1 (parent eno1)", "eth2 (nictype p2p)"}));
    EXPECT_EQ(asked.back(), "lab:/1.0/profiles/default");

    answer = "Error: not JSON";
    auto bad = sluice::cluster::default_profile_nics(incus, "");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("printed no JSON"), std::string::npos);
}
