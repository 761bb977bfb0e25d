// The rule sets of `sluice bench scale` (docs/scale.md). One generator for
// every system, so the N rules of a point are the same rules whichever
// system runs them:
//
//   rule i of kind "src":  source 198.19.<i / 250>.<i % 250 + 1>/32
//                          (198.19.0.0/16: inside the benchmarking range,
//                          never the traffic's source, which is 198.18.1.x)
//   rule i of kind "port": destination port 20000 + i*W .. 20000 + i*W + W-1
//                          of one protocol (W = --port-width, default 1; the
//                          traffic uses 5201 (iperf3) and 5301-5316
//                          (sluice_connrate), far below)
//   rule i of kind "mixed" (sluice policies only, part (c)): i % 3 == 0 a
//                          "src" rule, 1 a destination 198.19.x.y (never the
//                          traffic's destination, 198.18.100.x), 2 a "port"
//                          rule: three shapes whose classes multiply, so that
//                          from a few thousand rules on the classifier splits
//                          them into groups (maps/policy.h)
//
// Every rule drops (filter), denies (policy) or drops (nftables) what it
// matches; none matches the benchmark's traffic. After the N rules comes what
// lets the traffic through: LAN -> WAN network 198.18.100.0/24, any source;
// the WAN side opens nothing new.
#pragma once

#include <string>
#include <utility>

#include "common/result.h"

namespace sluice::bench {

struct ScaleRules {
    std::string kind = "src";  // src | port | mixed
    int count = 0;
    std::string proto = "tcp";  // udp | tcp: the port rules' protocol
    int port_width = 1;
};

inline constexpr const char* kScaleWanNet = "198.18.100.0/24";
inline constexpr int kScalePortBase = 20000;
inline constexpr const char* kScaleTable = "ip sluice_scale";  // the nftables table, as nft names it

// Rule i's source address (kind src), 198.19.x.y.
Result<std::string> scale_src_addr(int i);
// Rule i's port range (kind port).
Result<std::pair<int, int>> scale_port_range(int i, int width);

// sluice config for part (a): a stateless filter `bench-in` with the N rules
// on lan0 (attached with no rules when N is 0), then one permit policy.
Result<std::string> sluice_filter_config(const ScaleRules& r);
// sluice config for parts (b) and (c): N `deny` policies, then the permit.
Result<std::string> sluice_policy_config(const ScaleRules& r);

enum class NftLayout { Linear, Set };
// An `nft -f` script for the firewall namespace: table ip sluice_scale,
// replacing any earlier one. Stateless (part a): a raw prerouting chain marks
// every packet notrack, WAN-side packets are accepted first. Stateful (part
// b): `ct state established,related accept` first.
Result<std::string> nft_scale_ruleset(const ScaleRules& r, NftLayout layout, bool stateful);

// The last rule's source address or first port: what a probe sends from / to
// to prove that all N rules are in force (N >= 1).
Result<std::string> scale_last_rule(const ScaleRules& r);

}  // namespace sluice::bench
