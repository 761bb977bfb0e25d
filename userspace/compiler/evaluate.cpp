#include "compiler/evaluate.h"

#include <cstring>

#include "compiler/bitset.h"
#include "compiler/resolved_rule.h"

namespace sluice::compiler {
namespace {

// The kernel LPM trie's answer: among entries whose first prefixlen bits equal
// the key's, the longest. Keys are compared as bytes after prefixlen
// (generation byte, then address), like the kernel does.
template <typename Key, size_t AddrBytes>
const PolicyBitset* lpm_lookup(const std::vector<std::pair<Key, PolicyBitset>>& table, uint8_t generation,
                               const std::array<uint8_t, 16>& addr) {
    uint8_t data[1 + AddrBytes];
    data[0] = generation;
    std::memcpy(data + 1, addr.data(), AddrBytes);
    const PolicyBitset* best = nullptr;
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
    return best;
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
    default: return {POLICY_PROTO_OTHER, 0};
    }
}

std::optional<uint32_t> classify_tables(const CompiledPolicyTables& tables, const PacketSpec& packet) {
    const PolicyBitset* zone_bits = nullptr;
    for (const auto& [key, value] : tables.zone_pairs)
        if (key.from_zone == packet.from_zone && key.to_zone == packet.to_zone &&
            key.generation == tables.generation)
            zone_bits = &value;
    if (!zone_bits) return std::nullopt;

    const bool v4 = packet.family == config::Family::ipv4;
    const PolicyBitset* src = v4 ? lpm_lookup<policy_lpm_key_v4, 4>(tables.src_v4, tables.generation, packet.src)
                                 : lpm_lookup<policy_lpm_key_v6, 16>(tables.src_v6, tables.generation, packet.src);
    const PolicyBitset* dst = v4 ? lpm_lookup<policy_lpm_key_v4, 4>(tables.dst_v4, tables.generation, packet.dst)
                                 : lpm_lookup<policy_lpm_key_v6, 16>(tables.dst_v6, tables.generation, packet.dst);
    if (!src || !dst) return std::nullopt;

    auto [slot, port] = proto_slot(packet.protocol, packet.port);
    uint32_t app_class = tables.port_class.at(static_cast<size_t>(slot) * POLICY_PORTS + port);
    const PolicyBitset* app = nullptr;
    for (const auto& [key, value] : tables.app_bits)
        if (key.app_class == app_class && key.generation == tables.generation) app = &value;
    if (!app) return std::nullopt;

    return first_common_bit(*zone_bits, *src, *dst, *app, tables.words);
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
