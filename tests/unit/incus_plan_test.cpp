// What `sluice cluster up --env <incus>` builds (cluster/incus_cluster.h),
// read from the plan and the incus arguments, without a daemon: the
// topology, the addresses, container vs VM firewalls, the remote.
#include <gtest/gtest.h>

#include <algorithm>

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

}  // namespace
}  // namespace sluice::cluster
