#include "cli/show_nat.h"

#include <net/if.h>

#include <cstring>
#include <iomanip>
#include <map>
#include <sstream>

#include "cli/nat_usage.h"
#include "cli/pinned_map.h"

namespace sluice::cli {
namespace {

using nlohmann::json;

std::string reservation_key_bytes(const nat_port_key& k) {
    return std::string(reinterpret_cast<const char*>(&k), sizeof(k));
}

json tuple_json(const SessionEntry& t) {
    return {{"source", endpoint_text(t.family, t.src_addr, t.src_port)},
            {"destination", endpoint_text(t.family, t.dst_addr, t.dst_port)}};
}

std::string rule_name(const state::Nat& nat, uint32_t index) {
    for (const auto& r : nat.rules)
        if (r.kind == "source" && r.index == index) return r.name;
    return "";
}

json interfaces_json(const NatReportInput& in) {
    json out = json::array();
    for (const auto& [ifindex, a] : in.ifaddrs) {
        uint32_t v4[4] = {a.v4, 0, 0, 0};
        json j = {{"name", in.ifname ? in.ifname(ifindex) : ""},
                  {"ifindex", ifindex},
                  {"ipv4", a.has_v4 ? json(address_text(SLUICE_FAMILY_IPV4, v4)) : json(nullptr)},
                  {"ipv6", a.has_v6 ? json(address_text(SLUICE_FAMILY_IPV6, a.v6)) : json(nullptr)},
                  {"port_first", a.port_first},
                  {"port_last", a.port_last}};
        j["in_use"] = count_by_protocol(in.reservations, [&](const nat_port_key& k) {
            if (k.family == SLUICE_FAMILY_IPV4) return a.has_v4 && k.addr[0] == a.v4;
            return a.has_v6 && std::memcmp(k.addr, a.v6, 16) == 0;
        });
        out.push_back(j);
    }
    return out;
}

json translations_json(const NatReportInput& in) {
    std::map<std::string, const nat_port_value*> reserved;
    for (const auto& [k, v] : in.reservations) reserved[reservation_key_bytes(k)] = &v;
    json out = json::array();
    for (const auto& e : in.sessions) {
        // One line per flow: its initiator entry carries the translation as the
        // flow was created (the reply entry holds its reverse).
        if ((e.value.flags & SESSION_F_REPLY) || !has_translation(e.value)) continue;
        const uint8_t f = e.value.nat.flags;
        json t = {{"family", e.family == SLUICE_FAMILY_IPV4 ? "ipv4" : "ipv6"},
                  {"protocol", protocol_name(e.protocol)},
                  {"type", (f & SESSION_NAT_SRC) && (f & SESSION_NAT_DST) ? "source+destination"
                           : (f & SESSION_NAT_SRC)                        ? "source"
                                                                          : "destination"},
                  {"original", tuple_json(e)},
                  {"translated", tuple_json(translated_tuple(e))},
                  {"age_seconds", in.now_ns > e.value.created_ns ? seconds(in.now_ns - e.value.created_ns) : 0.0}};
        if (auto key = held_reservation(e)) {
            json r = {{"address", endpoint_text(e.family, key->addr, key->port)}};
            if (auto it = reserved.find(reservation_key_bytes(*key)); it != reserved.end()) {
                const nat_port_value& v = *it->second;
                r["inside"] = endpoint_text(e.family, v.inside_addr, v.inside_port);
                r["rule_id"] = v.rule_id;
                r["rule"] = rule_name(in.nat, v.rule_id);
            } else {
                r["missing"] = true;  // the flow says it holds a port nat_ports lacks
            }
            t["reservation"] = r;
        }
        out.push_back(t);
    }
    return out;
}

std::string in_use_text(const json& counts) {
    return "tcp " + std::to_string(counts.value("tcp", 0)) + ", udp " + std::to_string(counts.value("udp", 0)) +
           ", icmp " + std::to_string(counts.value("icmp", 0) + counts.value("icmpv6", 0));
}

// Counts saturate at UINT64_MAX (nat_usage.h).
std::string count_text(uint64_t n) { return n == UINT64_MAX ? ">= 2^64" : std::to_string(n); }

}  // namespace

json session_nat_json(const SessionEntry& e) {
    if (!has_translation(e.value)) return nullptr;
    SessionEntry t = translated_tuple(e);
    json j = json::object();
    if (e.value.nat.flags & SESSION_NAT_SRC) j["src"] = endpoint_text(t.family, t.src_addr, t.src_port);
    if (e.value.nat.flags & SESSION_NAT_DST) j["dst"] = endpoint_text(t.family, t.dst_addr, t.dst_port);
    return j;
}

json nat_report(const NatReportInput& in) {
    json pools = json::array();
    for (const auto& p : in.nat.pools) pools.push_back(pool_usage_json(p, in.reservations));
    return {{"rules", in.nat.rules},
            {"pools", pools},
            {"interfaces", interfaces_json(in)},
            {"translations", translations_json(in)}};
}

void print_nat_report(const json& report, std::ostream& out) {
    out << "Rules:\n";
    for (const auto& r : report["rules"]) {
        std::string name = r.value("name", "");
        out << "  " << std::left << std::setw(12) << r.value("kind", "") << std::right << std::setw(3)
            << r.value("index", 0) << "  " << std::left << std::setw(18) << (name.empty() ? "-" : name)
            << r.value("match", "") << " => " << r.value("translation", "") << std::right << "\n";
    }
    if (report["rules"].empty()) out << "  (none)\n";

    out << "Pools:\n";
    for (const auto& p : report["pools"]) {
        std::string addresses;
        for (const auto& a : p["addresses"]) addresses += (addresses.empty() ? "" : ", ") + a.get<std::string>();
        out << "  " << p.value("name", "") << "  ports " << p.value("port_first", 0) << "-" << p.value("port_last", 0)
            << (p.value("persistent", false) ? "  persistent" : "") << "\n    addresses " << addresses << "\n";
        for (const auto& [family, u] : p["by_family"].items()) {
            const uint64_t n = u.value("address_count", uint64_t{0});
            out << "    " << family << ": " << count_text(n) << (n == 1 ? " address, " : " addresses, ")
                << count_text(u.value("capacity_per_protocol", uint64_t{0})) << " translations per protocol, in use "
                << in_use_text(u["in_use"]) << "\n";
        }
    }
    if (report["pools"].empty()) out << "  (none)\n";

    out << "Interface addresses:\n";
    for (const auto& i : report["interfaces"]) {
        auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : std::string("-"); };
        out << "  " << std::left << std::setw(16) << i.value("name", "") << std::setw(18) << text(i["ipv4"])
            << std::setw(40) << text(i["ipv6"]) << "in use " << in_use_text(i["in_use"]) << std::right << "\n";
    }
    if (report["interfaces"].empty()) out << "  (none)\n";

    out << "Translations:\n";
    for (const auto& t : report["translations"]) {
        std::ostringstream age;
        age << std::fixed << std::setprecision(1) << t.value("age_seconds", 0.0) << "s";
        out << "  " << std::left << std::setw(7) << t.value("protocol", "")
            << t["original"].value("source", "") << " > " << t["original"].value("destination", "") << "  =>  "
            << t["translated"].value("source", "") << " > " << t["translated"].value("destination", "")
            << "  age " << age.str();
        if (t.contains("reservation")) {
            const json& r = t["reservation"];
            out << "  port " << r.value("address", "")
                << (r.contains("inside") ? " held for " + r.value("inside", "") : " (reservation missing)");
        }
        out << std::right << "\n";
    }
    out << report["translations"].size() << " translation(s)\n";
}

int show_nat(const InstancePaths& paths, const state::PublishedState& state, bool json_out, std::ostream& out,
             std::ostream& err) {
    PinnedMap ports(paths.pin_dir + "/" SLUICE_MAP_NAT_PORTS), ifaddrs(paths.pin_dir + "/" SLUICE_MAP_NAT_IFADDRS);
    NatReportInput in;
    in.nat = state.nat;
    in.now_ns = coarse_now_ns();
    in.ifname = [](uint32_t ifindex) {
        char name[IF_NAMESIZE] = {};
        return std::string(if_indextoname(ifindex, name) ? name : "");
    };
    auto sessions = read_pinned_sessions(paths.pin_dir);
    if (!sessions) {
        err << "sluice: " << sessions.error().message << "\n";
        return 1;
    }
    in.sessions = std::move(sessions.value());
    // Pins from a sluice without NAT lack these maps: nothing reserved then.
    if (ports.fd() >= 0) {
        auto reservations = dump_reservations(ports.fd());
        if (!reservations) {
            err << "sluice: " << reservations.error().message << "\n";
            return 1;
        }
        in.reservations = std::move(reservations.value());
    }
    if (ifaddrs.fd() >= 0) in.ifaddrs = read_nat_ifaddrs(ifaddrs.fd());

    json report = nat_report(in);
    if (json_out) out << report.dump(2) << "\n";
    else print_nat_report(report, out);
    return 0;
}

}  // namespace sluice::cli
