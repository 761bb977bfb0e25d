#include "daemon/nat_state.h"

#include <array>
#include <string>

namespace sluice {
namespace {

using nlohmann::json;

// A bare address for a host prefix (how the config writes one), else CIDR.
std::string prefix_text(const config::Prefix& p) {
    std::string s = p.to_string();
    return p.length == p.max_length() ? s.substr(0, s.find('/')) : s;
}

// How a pool range reads best: one address, a prefix when it covers exactly
// one (the config said so, most likely), else "first-last".
std::string range_text(const config::AddressRange& r) {
    std::string first = prefix_text(r.first), last = prefix_text(r.last);
    if (first == last) return first;
    for (int len = 0; len < r.first.max_length(); ++len) {
        if (config::mask_address(r.first.addr, len) != r.first.addr) continue;
        std::array<uint8_t, 16> top = r.first.addr;
        for (int bit = len; bit < r.first.max_length(); ++bit) top[bit / 8] |= static_cast<uint8_t>(0x80 >> (bit % 8));
        if (top != r.last.addr) continue;
        config::Prefix p = r.first;
        p.length = static_cast<uint8_t>(len);
        return p.to_string();
    }
    return first + "-" + last;
}

json match_json(const config::AddressMatch& m) {
    if (m.any) return "any";
    json items = json::array();
    for (const auto& item : m.items) items.push_back(item.text);
    return items;
}

std::string match_text(const json& m) {
    if (m.is_string()) return m.get<std::string>();
    std::string joined;
    for (const auto& item : m) joined += (joined.empty() ? "" : ",") + item.get<std::string>();
    return joined;
}

state::NatRule source_rule(const config::SourceNatRule& r, size_t index) {
    state::NatRule rule;
    rule.kind = "source";
    rule.index = static_cast<uint32_t>(index);
    rule.name = r.name;
    json& d = rule.details;
    d = {{"from", r.from.name}, {"to", r.to.name}, {"source", match_json(r.source)},
         {"destination", match_json(r.destination)}};
    if (r.pool) d["pool"] = r.pool->name;
    rule.match = r.from.name + " -> " + r.to.name + ", source " + match_text(d["source"]) + ", destination " +
                 match_text(d["destination"]);
    rule.translation = r.pool ? "pool " + r.pool->name : std::string("interface");
    return rule;
}

state::NatRule destination_rule(const config::DestinationNatRule& r, size_t index) {
    const std::string dest = prefix_text(r.destination), to = prefix_text(r.translate_address);
    const bool v6 = r.destination.family == config::Family::ipv6;
    auto with_port = [&](const std::string& a, uint16_t port) {
        return (v6 ? "[" + a + "]" : a) + ":" + std::to_string(port);
    };
    state::NatRule rule;
    rule.kind = "destination";
    rule.index = static_cast<uint32_t>(index);
    rule.name = r.name;
    json& d = rule.details;
    d = {{"from", r.from.name}, {"destination", dest}, {"translate_address", to}};
    if (r.protocol) d["protocol"] = config::protocol_name(*r.protocol);
    if (r.port) d["port"] = *r.port;
    if (r.translate_port) d["translate_port"] = *r.translate_port;
    rule.match = "from " + r.from.name + ", " + (r.protocol ? config::protocol_name(*r.protocol) + " " : "") +
                 (r.port ? with_port(dest, *r.port) : dest);
    rule.translation = r.translate_port ? with_port(to, *r.translate_port) : to;
    return rule;
}

// static and nptv6 entries have no name in the config.
template <typename Rule>
state::NatRule prefix_rule(const char* kind, const Rule& r, size_t index) {
    state::NatRule rule;
    rule.kind = kind;
    rule.index = static_cast<uint32_t>(index);
    rule.details = {{"inside", prefix_text(r.inside)}, {"outside", prefix_text(r.outside)}};
    rule.match = "inside " + prefix_text(r.inside);
    rule.translation = "outside " + prefix_text(r.outside);
    return rule;
}

state::NatPool pool_state(const config::NatPool& p, size_t index) {
    state::NatPool pool;
    pool.name = p.name;
    pool.index = static_cast<uint32_t>(index);
    for (const auto& r : p.addresses) {
        pool.ranges.push_back({r.first.family == config::Family::ipv4 ? "ipv4" : "ipv6", prefix_text(r.first),
                               prefix_text(r.last)});
        pool.addresses.push_back(range_text(r));
    }
    pool.port_first = p.ports.lo;
    pool.port_last = p.ports.hi;
    pool.persistent = p.persistent;
    return pool;
}

}  // namespace

state::Nat nat_state(const config::Nat& nat) {
    state::Nat out;
    for (size_t i = 0; i < nat.source.size(); ++i) out.rules.push_back(source_rule(nat.source[i], i));
    for (size_t i = 0; i < nat.destination.size(); ++i) out.rules.push_back(destination_rule(nat.destination[i], i));
    for (size_t i = 0; i < nat.static_rules.size(); ++i)
        out.rules.push_back(prefix_rule("static", nat.static_rules[i], i));
    for (size_t i = 0; i < nat.nptv6.size(); ++i) out.rules.push_back(prefix_rule("nptv6", nat.nptv6[i], i));
    for (size_t i = 0; i < nat.pools.size(); ++i) out.pools.push_back(pool_state(nat.pools[i], i));
    return out;
}

}  // namespace sluice
