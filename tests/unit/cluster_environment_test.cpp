// cluster/environments.yaml: the shipped file parses with the seed's values,
// and bad files get errors naming file, line and field.
#include <gtest/gtest.h>

#include "cluster/environment.h"

using namespace sluice::cluster;

namespace {

const std::string kShipped = std::string(SLUICE_TEST_DATA_DIR) + "/../../cluster/environments.yaml";

const char* kMinimal = R"(
environments:
  netns:
    kind: netns
    nodes: { lan-host: lan-host, fw0: fw0, fw1: fw1, wan-host: wan-host }
    targets: { ipv4: 198.18.100.200, ipv6: "2001:2:0:100::200" }
    baseline: { ipv4: "4-7", ipv6: "4-6" }
)";

std::string error_of(const std::string& yaml) {
    auto r = parse_environments(yaml, "envs.yaml");
    return r ? "(parsed)" : r.error().message;
}

// kMinimal with one line replaced.
std::string with(const std::string& from, const std::string& to) {
    std::string s = kMinimal;
    auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
}

}  // namespace

TEST(ClusterEnvironments, ShippedFileHasTheSeedsEnvironments) {
    auto envs = load_environments(kShipped);
    ASSERT_TRUE(envs) << envs.error().message;
    EXPECT_EQ(envs->detection_order,
              (std::vector<std::string>{"loss-cluster", "local-cluster", "standalone", "incus", "netns"}));

    // This machine's Incus cluster: container firewalls from the offline image.
    const Environment* incus = envs->find("incus");
    ASSERT_NE(incus, nullptr);
    EXPECT_EQ(incus->fw0, "sluice-fw0");
    EXPECT_EQ(incus->fw_instance_type, "container");
    EXPECT_EQ(incus->image, "sluice/node");

    const Environment* loss = envs->find("loss-cluster");
    ASSERT_NE(loss, nullptr);
    EXPECT_EQ(loss->kind, EnvironmentKind::incus);
    EXPECT_EQ(loss->remote, "loss");
    EXPECT_EQ(loss->fw0, "bpfrx-fw0");
    EXPECT_EQ(loss->fw1, "bpfrx-fw1");
    EXPECT_EQ(loss->lan_host, "cluster-lan-host");
    EXPECT_EQ(loss->qualified(loss->fw0), "loss:bpfrx-fw0");
    EXPECT_EQ(loss->baseline.ipv4.describe(), "22+ Gbps");
    EXPECT_EQ(loss->baseline.ipv6.describe(), "19+ Gbps");
    EXPECT_EQ(loss->baseline.xdp_mode, "native");
    EXPECT_EQ(loss->fw_instance_type, "vm");
    EXPECT_EQ(loss->host_instance_type, "container");
    EXPECT_EQ(loss->image, "images:debian/12/cloud");
    EXPECT_EQ(loss->normal.streams, 4);
    EXPECT_EQ(loss->normal.seconds, 10);
    EXPECT_EQ(loss->normal.timeout_seconds, 0);
    EXPECT_EQ(loss->quick.streams, 1);
    EXPECT_EQ(loss->quick.seconds, 3);
    EXPECT_EQ(loss->quick.timeout_seconds, 8);

    const Environment* local = envs->find("local-cluster");
    ASSERT_NE(local, nullptr);
    EXPECT_EQ(local->remote, "");
    EXPECT_EQ(local->qualified(local->fw0), "bpfrx-fw0");
    EXPECT_EQ(local->baseline.ipv4.describe(), "8-9 Gbps");
    EXPECT_EQ(local->baseline.ipv6.describe(), "7-8 Gbps");

    const Environment* standalone = envs->find("standalone");
    ASSERT_NE(standalone, nullptr);
    EXPECT_EQ(standalone->fw0, "bpfrx-fw");
    EXPECT_EQ(standalone->lan_host, "");
    EXPECT_EQ(standalone->traffic_source(), "bpfrx-fw");  // traffic from the firewall itself
    EXPECT_FALSE(standalone->has_ipv6());
    EXPECT_EQ(standalone->baseline.ipv4.describe(), "15+ Gbps");
    EXPECT_EQ(standalone->baseline.ipv6.describe(), "N/A");

    const Environment* netns = envs->find("netns");
    ASSERT_NE(netns, nullptr);
    EXPECT_EQ(netns->kind, EnvironmentKind::netns);
    EXPECT_EQ(netns->traffic_source(), "lan-host");
    EXPECT_EQ(netns->ipv4_target, "198.18.100.200");
    EXPECT_EQ(netns->ipv6_target, "2001:2:0:100::200");
    EXPECT_TRUE(netns->baseline.ipv4.min_gbps.has_value());
}

TEST(ClusterEnvironments, EveryTargetInTheShippedFileIsInTheBenchmarkingRanges) {
    auto envs = load_environments(kShipped);
    ASSERT_TRUE(envs) << envs.error().message;
    for (const auto& e : envs->environments) {
        EXPECT_EQ(e.ipv4_target.rfind("198.18.", 0) == 0 || e.ipv4_target.rfind("198.19.", 0) == 0, true)
            << e.name << " " << e.ipv4_target;
        if (e.has_ipv6()) {
            EXPECT_EQ(e.ipv6_target.rfind("2001:2:", 0), 0u) << e.name << " " << e.ipv6_target;
        }
    }
}

TEST(ClusterEnvironments, MinimalFileUsesTheSeedsIperfDefaults) {
    auto envs = parse_environments(kMinimal, "envs.yaml");
    ASSERT_TRUE(envs) << envs.error().message;
    EXPECT_EQ(envs->detection_order, (std::vector<std::string>{"netns"}));
    const Environment& e = envs->environments.at(0);
    EXPECT_EQ(e.normal.streams, 4);
    EXPECT_EQ(e.normal.seconds, 10);
    EXPECT_EQ(e.quick.streams, 1);
    EXPECT_EQ(e.quick.seconds, 3);
    EXPECT_EQ(e.quick.timeout_seconds, 8);
    EXPECT_EQ(e.baseline.ipv4.describe(), "4-7 Gbps");
}

TEST(ClusterEnvironments, ErrorsNameFileLineAndField) {
    EXPECT_EQ(error_of(with("kind: netns", "kind: lxd")),
              "envs.yaml:4: environments.netns.kind: 'lxd' is not a kind (expected incus or netns)");
    EXPECT_EQ(error_of(with("fw0: fw0, ", "")), "envs.yaml:5: environments.netns.nodes.fw0: is required");
    EXPECT_EQ(error_of(with("ipv4: \"4-7\"", "ipv4: fast")),
              "envs.yaml:7: environments.netns.baseline.ipv4: 'fast' is not a range like \"22+\", \"8-9\" or "
              "\"N/A\" (Gbit/s)");
    EXPECT_EQ(error_of(with("ipv4: \"4-7\"", "ipv4: \"9-4\"")),
              "envs.yaml:7: environments.netns.baseline.ipv4: '9-4': the upper bound is below the lower");
    EXPECT_EQ(error_of(with("    kind: netns\n", "    kind: netns\n    remtoe: x\n")),
              "envs.yaml:5: environments.netns.remtoe: unknown key (expected one of: baseline, description, image, "
              "instance-types, iperf3, kind, network-prefix, nodes, remote, targets)");
    EXPECT_EQ(error_of(with("    kind: netns\n", "    kind: netns\n    remote: loss\n")),
              "envs.yaml:5: environments.netns.remote: only incus environments have a remote");
    EXPECT_EQ(error_of(with("ipv4: 198.18.100.200", "ipv4: \"2001:2::1\"")),
              "envs.yaml:6: environments.netns.targets.ipv4: '2001:2::1' is not an IPv4 address");
    EXPECT_EQ(error_of(with("ipv6: \"2001:2:0:100::200\" }", "}")),
              "envs.yaml:7: environments.netns.baseline.ipv6: must be N/A when there is no IPv6 target");
    EXPECT_EQ(error_of(std::string("detection-order: [netns, nope]\n") + kMinimal),
              "envs.yaml:1: detection-order: 'nope' is not an environment in this file");
    EXPECT_EQ(
        error_of(with("    baseline:", "    iperf3: { quick: { streams: 1, seconds: 3, timeout: 2 } }\n    baseline:")),
        "envs.yaml:7: environments.netns.iperf3.quick.timeout: must be longer than seconds (3) or 0 for none");
    EXPECT_EQ(error_of(with("    baseline:", "    iperf3: { normal: { streams: many } }\n    baseline:")),
              "envs.yaml:7: environments.netns.iperf3.normal.streams: must be a whole number");
    // YAML syntax errors keep yaml-cpp's message with the line.
    std::string syntax = error_of("environments:\n  netns: [unclosed\n");
    EXPECT_EQ(syntax.rfind("envs.yaml:", 0), 0u) << syntax;
    EXPECT_EQ(error_of("environments: {}\n"),
              "envs.yaml:1: environments: must be a non-empty mapping of name -> environment");
    auto missing = load_environments("/nonexistent/environments.yaml");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message, "cannot read environments file /nonexistent/environments.yaml");
}

TEST(ClusterEnvironments, InstanceTypesAndImageAreIncusOnly) {
    EXPECT_EQ(error_of(with("    kind: netns\n", "    kind: netns\n    image: sluice/node\n")),
              "envs.yaml:5: environments.netns.image: only incus environments have an image");
    const std::string incus = "    kind: incus\n";
    EXPECT_EQ(error_of(with("    kind: netns\n", incus + "    instance-types: { firewalls: lxc }\n")),
              "envs.yaml:5: environments.netns.instance-types.firewalls: 'lxc' is not an instance type (vm or "
              "container)");
    EXPECT_EQ(error_of(with("    kind: netns\n", incus + "    instance-types: { firewall: vm }\n")),
              "envs.yaml:5: environments.netns.instance-types.firewall: unknown key (expected one of: firewalls, "
              "hosts)");
    auto r = parse_environments(with("    kind: netns\n", incus + "    instance-types: { firewalls: container }\n"),
                                "envs.yaml");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->environments[0].fw_instance_type, "container");
    EXPECT_EQ(r->environments[0].host_instance_type, "container");
}

TEST(ClusterEnvironments, NetworkPrefixStaysInsideTheHostGuard) {
    const std::string incus = "    kind: incus\n";
    EXPECT_EQ(error_of(with("    kind: netns\n", incus + "    network-prefix: sluicerv\n")),
              "envs.yaml:5: environments.netns.network-prefix: 'sluicerv' must be sluice or start with sluice- (the "
              "host guard matches sluice-*), at most 11 of a-z, 0-9, -");
    auto r = parse_environments(with("    kind: netns\n", incus + "    network-prefix: sluice-rv\n"), "envs.yaml");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->environments[0].network_prefix, "sluice-rv");
}

TEST(ClusterEnvironments, SelectByNameOrListTheKnownOnes) {
    auto envs = load_environments(kShipped);
    ASSERT_TRUE(envs) << envs.error().message;
    IncusCli incus([](const std::vector<std::string>&, std::chrono::milliseconds) -> sluice::Result<CommandResult> {
        ADD_FAILURE() << "no incus call expected";
        return sluice::make_error("unexpected");
    });
    auto env = select_environment(*envs, "standalone", incus);
    ASSERT_TRUE(env);
    EXPECT_EQ(env->name, "standalone");
    auto bad = select_environment(*envs, "mars", incus);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("unknown environment 'mars'"), std::string::npos);
    EXPECT_NE(bad.error().message.find("loss-cluster, local-cluster, standalone, netns, or auto"), std::string::npos)
        << bad.error().message;
}
