#include "compiler/evaluate.h"

#include <algorithm>
#include <cstring>

#include "compiler/resolved_rule.h"

namespace sluice::compiler {
namespace {

// The kernel LPM trie's answer: among entries whose first prefixlen bits equal
// the key's, the longest. Keys are compared as bytes after prefixlen
// (generation byte, then address), like the kernel does.
template <typename Key, size_t AddrBytes, typename Value>
Value lpm_lookup(const std::vector<std::pair<Key, Value>>& table, uint8_t generation,
                 const std::array<uint8_t, 16>& addr, const Value& none) {
    uint8_t data[1 + AddrBytes];
    data[0] = generation;
    std::memcpy(data + 1, addr.data(), AddrBytes);
    const Value* best = nullptr;
    uint32_t best_len = 0;
    for (const auto& [key, value] : table) {
        uint8_t entry[1 + AddrBytes];
        entry[0] = key.generation;
        std::memcpy(entry + 1, key.addr, AddrBytes);
        bool match = true;
        for (uint32_t bit = 0; bit < key.prefixlen && match; ++bit) {
            int shift = 7 - static_cast<int>(bit % 8);
            match = ((entry[bit / 8] >> shift) & 1) == ((data[bit / 8] >> shift) & 1);
        }
        if (match && (!best || key.prefixlen > best_len)) {
            best = &value;
            best_len = key.prefixlen;
        }
    }
    return best ? *best : none;
}

bool addresses_match(const config::Config& config, const config::AddressMatch& match, config::Family family,
                     const std::array<uint8_t, 16>& addr) {
    if (match.any) return true;
    for (const auto& item : match.items) {
        if (item.prefix) {
            if (item.prefix->contains_address(family, addr)) return true;
            continue;
        }
        if (const auto* entry = config.find_address(item.text))
            for (const auto& prefix : entry->prefixes)
                if (prefix.contains_address(family, addr)) return true;
    }
    return false;
}

bool application_matches(const config::Application& app, uint8_t protocol, uint16_t port) {
    if (app.protocol == config::kProtoIcmp)  // echo, in ICMP and ICMPv6 alike
        return (protocol == config::kProtoIcmp && port == kIcmpEchoRequest) ||
               (protocol == config::kProtoIcmpv6 && port == kIcmpv6EchoRequest);
    if (app.protocol == config::kProtoIcmpv6)
        return protocol == config::kProtoIcmpv6 && port == kIcmpv6EchoRequest;
    if (app.protocol != protocol) return false;
    if (app.destination_ports.empty()) return true;
    for (const auto& range : app.destination_ports)
        if (range.lo <= port && port <= range.hi) return true;
    return false;
}

}  // namespace

std::pair<policy_proto_slot, uint16_t> proto_slot(uint8_t protocol, uint16_t port) {
    switch (protocol) {
    case config::kProtoTcp: return {POLICY_PROTO_TCP, port};
    case config::kProtoUdp: return {POLICY_PROTO_UDP, port};
    case config::kProtoIcmp: return {POLICY_PROTO_ICMP, port};
    case config::kProtoIcmpv6: return {POLICY_PROTO_ICMPV6, port};
    default: return {POLICY_PROTO_OTHER, protocol};
    }
}

std::optional<ClassifierMatch> classify_tables(const CompiledClassifier& t, classifier_scope_kind kind, uint16_t a,
                                               uint16_t b, const PacketSpec& packet) {
    const classifier_classes none{};
    const classifier_classes* scope = nullptr;
    for (const auto& [key, classes] : t.scopes)
        if (key.kind == kind && key.a == a && key.b == b && key.generation == t.generation) scope = &classes;
    if (!scope) return std::nullopt;

    const bool v4 = packet.family == config::Family::ipv4;
    const classifier_classes src = v4 ? lpm_lookup<policy_lpm_key_v4, 4>(t.src_v4, t.generation, packet.src, none)
                                      : lpm_lookup<policy_lpm_key_v6, 16>(t.src_v6, t.generation, packet.src, none);
    const classifier_classes dst = v4 ? lpm_lookup<policy_lpm_key_v4, 4>(t.dst_v4, t.generation, packet.dst, none)
                                      : lpm_lookup<policy_lpm_key_v6, 16>(t.dst_v6, t.generation, packet.dst, none);
    auto [slot, port] = proto_slot(packet.protocol, packet.port);
    const bool has_ports = packet.protocol == config::kProtoTcp || packet.protocol == config::kProtoUdp;
    const classifier_classes& dport = t.port_class.at(static_cast<size_t>(slot) * POLICY_PORTS + port);
    const classifier_classes& sport =
        t.sport_class.at(static_cast<size_t>(slot) * POLICY_PORTS + (has_ports ? packet.source_port : 0));

    std::vector<const classifier_result*> found;
    const classifier_result* winner = nullptr;
    for (uint32_t g = 0; g < t.layout.groups && g < CLASSIFIER_GROUPS; ++g) {
        auto cross = [&](int table, uint32_t left, uint32_t right) -> uint32_t {
            const classifier_table_layout& l = t.layout.table[g][table];
            if (!left || !right) return 0;
            if (!l.width) {
                const auto want = std::make_tuple(static_cast<uint8_t>(g), static_cast<uint8_t>(table), left, right);
                auto it = std::lower_bound(t.sparse.begin(), t.sparse.end(), want, [](const auto& e, const auto& w) {
                    return sparse_order(e.first) < w;
                });
                return it != t.sparse.end() && sparse_order(it->first) == want ? it->second : 0u;
            }
            if (right >= l.width) return 0;
            return t.cross.at(l.base - t.cross_first + left * l.width + right);
        };
        uint32_t x = cross(CLASSIFIER_T_SCOPE_APP, scope->group[g], dport.group[g]);
        x = cross(CLASSIFIER_T_SPORT, x, sport.group[g]);
        const uint32_t y = cross(CLASSIFIER_T_SRC_DST, src.group[g], dst.group[g]);
        const uint32_t r = cross(CLASSIFIER_T_FINAL, x, y);
        if (!r) continue;
        const classifier_result* res = &t.results.at(r);
        found.push_back(res);
        if (res->rule != CLASSIFIER_NO_RULE && (!winner || res->rule < winner->rule)) winner = res;
    }
    if (found.empty()) return std::nullopt;
    ClassifierMatch m;
    if (winner) {
        m.rule = winner->rule;
        m.action = winner->action;
        m.ruleset_id = winner->ruleset_id;
    }
    for (const classifier_result* res : found)
        for (uint32_t i = 0; i < res->counted_n; ++i)
            if (res->counted[i] <= m.rule) m.counted.push_back(res->counted[i]);
    std::sort(m.counted.begin(), m.counted.end());
    return m;
}

std::optional<uint32_t> classify_tables(const CompiledClassifier& tables, const PacketSpec& packet) {
    auto r = classify_tables(tables, CLASSIFIER_SCOPE_POLICY, packet.from_zone, packet.to_zone, packet);
    if (!r || r->rule == CLASSIFIER_NO_RULE) return std::nullopt;
    return r->rule;
}

std::optional<uint32_t> classify_linear(const config::Config& config, const PacketSpec& packet) {
    for (uint32_t i = 0; i < config.policies.size(); ++i) {
        const config::Policy& p = config.policies[i];
        if (zone_id(config, p.from.name) != packet.from_zone || zone_id(config, p.to.name) != packet.to_zone)
            continue;
        if (!addresses_match(config, p.source, packet.family, packet.src)) continue;
        if (!addresses_match(config, p.destination, packet.family, packet.dst)) continue;
        bool app_ok = p.any_application;
        for (const auto& ref : p.applications) {
            const config::Application* app = config.find_application(ref.name);
            if (app && application_matches(*app, packet.protocol, packet.port)) app_ok = true;
        }
        if (app_ok) return i;
    }
    return std::nullopt;
}

}  // namespace sluice::compiler
