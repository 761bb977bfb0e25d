// `check` errors: every bad file in tests/data/configs/ yields exactly the
// expected FILE:LINE:COLUMN: PATH: MESSAGE lines, all of them, in file order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/load_config.h"

extern "C" {
#include "policy.h"
}

using namespace sluice::config;

namespace {

struct BadConfig {
    const char* file;
    std::vector<std::string> errors;
};

// Diagnostics print FILE as given; the table uses the bare file name.
std::vector<std::string> errors_of(const std::string& name) {
    auto result = read_config_file(std::string(SLUICE_TEST_DATA_DIR "/configs/") + name);
    std::vector<std::string> lines;
    for (Diagnostic d : result.diagnostics) {
        d.file = name;
        lines.push_back(format_diagnostic(d));
    }
    EXPECT_FALSE(result.ok());
    return lines;
}

const std::vector<BadConfig> kBadConfigs = {
    {"bad-limits.yaml",
     {"bad-limits.yaml:6:13: limits.sessions: 100 sessions is out of range 1024-16777216 (flows per address family; "
      "each costs about 944 bytes of kernel memory)",
      "bad-limits.yaml:7:3: limits.session: unknown key \"session\" (did you mean \"sessions\"?)"}},
    {"bad-screen.yaml",
     {"bad-screen.yaml:5:33: zones.trust.screen.syn-proxy: invalid value \"sometimes\": expected off, always or "
      "{ above: N } (N: SYNs per second)",
      "bad-screen.yaml:6:44: zones.untrust.screen.syn-proxy.above: \"fast\" is not a rate (permitted SYNs per second "
      "into the zone, 1-100000000)",
      "bad-screen.yaml:7:20: zones.dmz.screen.synproxy: unknown key \"synproxy\" (did you mean \"syn-proxy\"?)",
      "bad-screen.yaml:8:40: zones.lab.screen.syn-proxy.above: \"0\" is not a rate (permitted SYNs per second into "
      "the zone, 1-100000000)"}},
    {"bad-scan.yaml",
     {"bad-scan.yaml:5:37: zones.trust.screen.scan.ports: \"1\" is not a number of distinct ports, 2-1000",
      "bad-scan.yaml:6:30: zones.untrust.screen.scan: a scan screen needs ports: N, hosts: N or both (distinct ones "
      "per window)",
      "bad-scan.yaml:7:47: zones.dmz.screen.scan.action: invalid value \"drop\": expected block or count",
      "bad-scan.yaml:8:65: zones.lab.screen.scan.hold-time: hold-time applies to action: block only",
      "bad-scan.yaml:9:50: zones.edge.screen.source-limit.udp-packets: \"0\" is not a whole number of UDP packets "
      "per second, 1-100000000",
      "bad-scan.yaml:9:76: zones.edge.screen.destination-limit.icmp-packet: unknown key \"icmp-packet\" (did you "
      "mean \"icmp-packets\"?)"}},
    {"bad-host-inbound.yaml",
     {"bad-host-inbound.yaml:7:9: zones.trust.host-inbound[0]: unknown service \"sssh\" (did you mean \"ssh\"?) "
      "(services: ping, ssh, dns, dhcp, ntp, bgp, http, https, traceroute, all; or { protocol, port })",
      "bad-host-inbound.yaml:8:9: zones.trust.host-inbound[1]: missing \"port\" (protocol tcp needs the ports to allow)",
      "bad-host-inbound.yaml:9:9: zones.trust.host-inbound[2]: missing \"type\" (the icmp type number to allow; "
      "`ping` allows echo requests)",
      "bad-host-inbound.yaml:9:33: zones.trust.host-inbound[2].port: port needs protocol tcp or udp, not icmp",
      "bad-host-inbound.yaml:10:32: zones.trust.host-inbound[3].port: port \"70000\" out of range 0-65535",
      "bad-host-inbound.yaml:11:35: zones.trust.host-inbound[4].type: an ICMP type is one number, 0-255",
      "bad-host-inbound.yaml:12:9: zones.trust.host-inbound[5]: expected a service name or a { protocol, port } entry",
      "bad-host-inbound.yaml:13:28: zones.untrust.host-inbound: expected a list of services (names such as ssh, or "
      "{ protocol, port } entries)"}},
    {"bad-unknown-application.yaml",
     {"bad-unknown-application.yaml:14:25: policies[0].application[1]: unknown application \"htp\" (did you mean \"http\"?)"}},
    {"bad-unknown-zone.yaml",
     {"bad-unknown-zone.yaml:3:17: interfaces.wan0.zone: unknown zone \"untrsut\" (did you mean \"untrust\"?)"}},
    {"bad-unknown-key.yaml",
     {"bad-unknown-key.yaml:11:5: policies[0].destnation: unknown key \"destnation\" (did you mean \"destination\"?)"}},
    {"bad-unknown-address.yaml",
     {"bad-unknown-address.yaml:13:14: policies[0].source[0]: unknown address-book entry \"lan-nett\" (did you mean \"lan-net\"?)"}},
    {"bad-duplicate-policy.yaml",
     {"bad-duplicate-policy.yaml:12:11: policies[1].name: duplicate policy name \"allow\""}},
    {"bad-duplicate-zone.yaml", {"bad-duplicate-zone.yaml:6:3: zones.trust: duplicate zone \"trust\""}},
    {"bad-prefix-length.yaml",
     {"bad-prefix-length.yaml:8:13: address-book.lan-net[0]: invalid prefix length in \"198.18.1.0/33\" (0-32)"}},
    {"bad-host-bits.yaml",
     {"bad-host-bits.yaml:8:32: address-book.lan-net[1]: prefix \"198.18.1.1/24\" has host bits set (did you mean \"198.18.1.0/24\"?)"}},
    {"bad-ipv6-address.yaml",
     {"bad-ipv6-address.yaml:11:18: policies[0].destination: invalid IPv6 address \"2001:2::zz\""}},
    {"bad-port-range.yaml",
     {"bad-port-range.yaml:8:50: applications.alt.destination-port[1]: port range \"9000-8000\" is reversed (low > high)"}},
    {"bad-port-value.yaml",
     {"bad-port-value.yaml:8:43: applications.big.destination-port: port \"70000\" out of range 0-65535"}},
    {"bad-protocol.yaml",
     {"bad-protocol.yaml:8:20: applications.web.protocol: invalid protocol \"tpc\" (expected tcp, udp, icmp, icmpv6 or a number 0-255)"}},
    {"bad-unsupported-protocol.yaml",
     {"bad-unsupported-protocol.yaml:8:20: applications.gre.protocol: protocol 47 is not supported in applications yet (use tcp, udp, icmp or icmpv6)"}},
    {"bad-icmp-port.yaml",
     {"bad-icmp-port.yaml:8:45: applications.ping.destination-port: destination-port needs protocol tcp or udp, not icmp"}},
    {"bad-action.yaml",
     {"bad-action.yaml:11:13: policies[0].action: invalid value \"allow\": expected permit, deny or reject"}},
    {"bad-default-action.yaml",
     {"bad-default-action.yaml:7:17: default-action: invalid value \"inspect\": expected permit, deny or reject"}},
    {"bad-inspect-ruleset.yaml",
     {"bad-inspect-ruleset.yaml:11:24: policies[0].action.inspect: unknown ruleset \"ctff\" (did you mean \"ctf\"?)"}},
    {"bad-inspect-pattern.yaml",
     {"bad-inspect-pattern.yaml:10:18: inspect.rulesets.ctf.fail-mode: invalid value \"shut\": expected closed or open",
      "bad-inspect-pattern.yaml:12:51: inspect.rulesets.ctf.patterns[0].direction: invalid value \"sideways\": expected client-to-server, server-to-client or both"}},
    {"bad-duration.yaml",
     {"bad-duration.yaml:7:22: timeouts.tcp-syn: invalid duration \"30x\" (expected a positive number with s, m or h, e.g. 30s, 5m, 2h)"}},
    {"bad-duration-zero.yaml",
     {"bad-duration-zero.yaml:8:8: timeouts.udp: invalid duration \"0s\" (expected a positive number with s, m or h, e.g. 30s, 5m, 2h)"}},
    {"bad-xdp-mode.yaml",
     {"bad-xdp-mode.yaml:2:34: interfaces.lan0.xdp-mode: invalid value \"nativ\": expected auto, native, generic or tc (did you mean \"native\"?)"}},
    {"bad-vlan-id.yaml",
     {"bad-vlan-id.yaml:2:3: interfaces.wan0.4095: invalid VLAN id \"4095\" in \"wan0.4095\" (a VLAN sub-interface is PARENT.VID with VID 1-4094)"}},
    {"bad-no-interfaces.yaml",
     {"bad-no-interfaces.yaml:1:1: interfaces: no interfaces: sluice needs at least one interface to attach to"}},
    {"bad-missing-from.yaml", {"bad-missing-from.yaml:8:5: policies[0]: missing \"from\""}},
    {"bad-yaml-syntax.yaml", {"bad-yaml-syntax.yaml:3:6: YAML syntax error: end of map flow not found"}},
    {"bad-wrong-type.yaml", {"bad-wrong-type.yaml:3:8: zones: expected a mapping, got a list"}},
    {"bad-unknown-filter.yaml",
     {"bad-unknown-filter.yaml:2:34: interfaces.wan0.filter: unknown filter \"wan-inn\" (did you mean \"wan-in\"?)"}},
    {"bad-nat.yaml",
     {"bad-nat.yaml:9:27: nat.pools.public.addresses[0]: invalid address range \"198.18.100.20-198.18.100.10\" (both ends of one family, low end first)",
      "bad-nat.yaml:11:65: nat.source[0].translate.pool: unknown pool \"publc\" (did you mean \"public\"?)"}},
    {"bad-nat-pools.yaml",
     {"bad-nat-pools.yaml:9:25: nat.pools.empty.addresses: a pool needs at least one address, prefix or range",
      "bad-nat-pools.yaml:10:25: nat.pools.wide.addresses[0]: \"2001:2::/64\" is too wide: IPv6 pool ranges must differ only in the last 32 bits",
      "bad-nat-pools.yaml:10:40: nat.pools.wide.addresses[1]: \"2001:2:0:1::-2001:2:0:1:0:1::\" is too wide: IPv6 pool ranges must differ only in the last 32 bits",
      "bad-nat-pools.yaml:11:44: nat.pools.zero.ports: pool ports must be within 1-65535, got \"0-1000\"",
      "bad-nat-pools.yaml:13:37: nat.pools.b.addresses[1]: overlaps nat.pools.a.addresses[0] (198.18.100.10-198.18.100.20)",
      "bad-nat-pools.yaml:14:24: nat.pools.many.addresses: too many IPv4 ranges: 9 (at most 8)",
      "bad-nat-pools.yaml:16:24: nat.pools.huge.addresses: too many IPv6 addresses: 4294967296 (at most 4294967295)"}},
    {"bad-nat-source.yaml",
     {"bad-nat-source.yaml:13:82: nat.source[0].translate.pool: pool \"public4\" has no IPv6 address, but rule \"v6-out\" matches only IPv6",
      "bad-nat-source.yaml:15:101: nat.source[2].translate.pool: pool \"public4\" has no IPv6 address, but rule \"to-v6\" matches only IPv6"}},
    {"bad-nat-destination.yaml",
     {"bad-nat-destination.yaml:13:7: nat.destination[1]: overlaps nat.destination[0] (web-in)",
      "bad-nat-destination.yaml:17:52: nat.destination[3].destination: destination 198.18.100.15 is an address of nat.pools.public.addresses (198.18.100.10-198.18.100.20)",
      "bad-nat-destination.yaml:18:54: nat.destination[4].destination: destination 198.18.100.50 is also translated by nat.static[0] (outside 198.18.100.50/32)"}},
    {"bad-nat-static.yaml",
     {"bad-nat-static.yaml:12:17: nat.static[1].inside: overlaps nat.static[0].inside (198.18.1.0/28)",
      "bad-nat-static.yaml:13:41: nat.static[2].outside: overlaps nat.static[0].outside (198.18.100.64/28)",
      "bad-nat-static.yaml:14:41: nat.static[3].outside: overlaps its own inside prefix (198.18.3.0/24)",
      "bad-nat-static.yaml:15:38: nat.static[4].outside: overlaps nat.pools.public.addresses (198.18.100.10-198.18.100.20)",
      "bad-nat-static.yaml:18:17: nat.nptv6[0].inside: NPTv6 prefixes must be /64 or shorter, got /80 (RFC 6296 adjusts a 16-bit word after the prefix to keep checksums valid)",
      "bad-nat-static.yaml:19:17: nat.nptv6[1].inside: overlaps nat.static[5].inside (2001:2:0:5::1/128)"}},
    {"bad-multiple-errors.yaml",
     {"bad-multiple-errors.yaml:9:28: address-book.lan-net[1]: invalid IPv4 address \"198.18.300.0\"",
      "bad-multiple-errors.yaml:15:9: policies[0].to: unknown zone \"untrsut\" (did you mean \"untrust\"?)",
      "bad-multiple-errors.yaml:17:18: policies[0].application: unknown application \"htp\" (did you mean \"http\"?)",
      "bad-multiple-errors.yaml:22:13: policies[1].action: invalid value \"drop\": expected permit, deny or reject",
      "bad-multiple-errors.yaml:23:5: policies[1].comment: unknown key \"comment\""}},
};

class BadConfigFile : public testing::TestWithParam<BadConfig> {};

std::string test_name(const testing::TestParamInfo<BadConfig>& info) {
    std::string name = info.param.file;
    name = name.substr(0, name.find('.'));
    for (char& c : name)
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
    return name;
}

std::string minimal_with_zones(size_t zones) {
    std::string text = "interfaces: { lan0: { zone: z1 } }\nzones:\n";
    for (size_t i = 1; i <= zones; ++i) text += "  z" + std::to_string(i) + ": {}\n";
    return text;
}

}  // namespace

TEST_P(BadConfigFile, ReportsExactlyTheExpectedErrors) {
    EXPECT_EQ(errors_of(GetParam().file), GetParam().errors);
}

INSTANTIATE_TEST_SUITE_P(ConfigErrors, BadConfigFile, testing::ValuesIn(kBadConfigs), test_name);

TEST(ConfigErrors, MissingFileIsOneClearMessage) {
    auto result = read_config_file("/nonexistent/fw.yaml");
    ASSERT_EQ(result.diagnostics.size(), 1u);
    EXPECT_EQ(format_diagnostic(result.diagnostics[0]),
              "/nonexistent/fw.yaml: cannot read config file: No such file or directory");
    auto as_result = load_config("/nonexistent/fw.yaml");
    ASSERT_FALSE(as_result.ok());
    EXPECT_EQ(as_result.error().message, "/nonexistent/fw.yaml: cannot read config file: No such file or directory");
}

TEST(ConfigErrors, EmptyFile) {
    auto result = parse_config("", "fw.yaml");
    ASSERT_EQ(result.diagnostics.size(), 1u);
    EXPECT_EQ(format_diagnostic(result.diagnostics[0]),
              "fw.yaml:1:1: the file is empty (expected interfaces, zones and policies)");
}

TEST(ConfigErrors, TooManyZones) {
    EXPECT_TRUE(parse_config(minimal_with_zones(255), "fw.yaml").ok());
    auto result = parse_config(minimal_with_zones(256), "fw.yaml");
    ASSERT_EQ(result.diagnostics.size(), 1u);
    EXPECT_EQ(format_diagnostic(result.diagnostics[0]), "fw.yaml:3:3: zones: too many zones: 256 (at most 255)");
}

TEST(ConfigErrors, TooManyPolicies) {
    std::string text = "interfaces: { lan0: { zone: z } }\nzones: { z: {} }\npolicies:\n";
    for (int i = 0; i <= POLICY_MAX_RULES; ++i)
        text += "  - { name: p" + std::to_string(i) + ", from: z, to: z, action: deny }\n";
    auto result = parse_config(text, "fw.yaml");
    ASSERT_EQ(result.diagnostics.size(), 1u);
    EXPECT_EQ(format_diagnostic(result.diagnostics[0]),
              "fw.yaml:4:3: policies: too many policies: 16385 (at most 16384)");
}

TEST(ConfigErrors, WrongScalarTypes) {
    auto result = parse_config(
        "interfaces: { lan0: { zone: [a, b] } }\nzones: { z: {} }\n"
        "timeouts: { udp: { s: 1 } }\n",
        "fw.yaml");
    std::vector<std::string> lines;
    for (const auto& d : result.diagnostics) lines.push_back(format_diagnostic(d));
    EXPECT_EQ(lines, (std::vector<std::string>{
                         "fw.yaml:1:29: interfaces.lan0.zone: expected a single value, got a list",
                         "fw.yaml:3:18: timeouts.udp: expected a single value, got a mapping"}));
}

TEST(ConfigErrors, ReservedAndMisleadingNames) {
    auto result = parse_config(
        "interfaces: { lan0: { zone: z } }\nzones: { z: {}, any: {} }\n"
        "address-book: { 198.18.1.1: [198.18.1.1] }\napplications: { any: { protocol: tcp } }\n",
        "fw.yaml");
    std::vector<std::string> lines;
    for (const auto& d : result.diagnostics) lines.push_back(format_diagnostic(d));
    EXPECT_EQ(lines, (std::vector<std::string>{
                         "fw.yaml:2:17: zones.any: \"any\" is reserved and cannot name a zone",
                         "fw.yaml:3:17: address-book.198.18.1.1: an address-book name must not look like an address",
                         "fw.yaml:4:17: applications.any: \"any\" is reserved and cannot name an application"}));
}

TEST(ConfigErrors, UnknownTopLevelSection) {
    auto result = parse_config("interfaces: { lan0: { zone: z } }\nzones: { z: {} }\npolicy: []\n", "fw.yaml");
    ASSERT_EQ(result.diagnostics.size(), 1u);
    EXPECT_EQ(format_diagnostic(result.diagnostics[0]),
              "fw.yaml:3:1: policy: unknown key \"policy\" (did you mean \"policies\"?)");
}

TEST(ConfigErrors, LimitsSessionsValues) {
    auto errors = [](const std::string& limits) {
        auto result = parse_config("interfaces: { lan0: { zone: z } }\nzones: { z: {} }\nlimits: " + limits + "\n",
                                   "fw.yaml");
        std::vector<std::string> lines;
        for (const auto& d : result.diagnostics) lines.push_back(format_diagnostic(d));
        return lines;
    };
    EXPECT_EQ(errors("{ sessions: lots }"),
              (std::vector<std::string>{"fw.yaml:3:21: limits.sessions: \"lots\" is not a whole number of sessions "
                                        "(flows per address family, 1024-16777216)"}));
    EXPECT_EQ(errors("{ sessions: -5 }"),
              (std::vector<std::string>{"fw.yaml:3:21: limits.sessions: \"-5\" is not a whole number of sessions "
                                        "(flows per address family, 1024-16777216)"}));
    EXPECT_EQ(errors("{ sessions: 16777217 }"),
              (std::vector<std::string>{"fw.yaml:3:21: limits.sessions: 16777217 sessions is out of range "
                                        "1024-16777216 (flows per address family; each costs about 944 bytes of "
                                        "kernel memory)"}));
    EXPECT_EQ(errors("{ sessions: [1024] }"),
              (std::vector<std::string>{"fw.yaml:3:21: limits.sessions: expected a single value, got a list"}));
    EXPECT_EQ(errors("[sessions]"), (std::vector<std::string>{"fw.yaml:3:9: limits: expected a mapping, got a list"}));
    EXPECT_TRUE(errors("{ sessions: 1024 }").empty());
    EXPECT_TRUE(errors("{ sessions: 16777216 }").empty());
}
