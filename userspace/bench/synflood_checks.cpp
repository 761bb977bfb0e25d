#include "bench/synflood_checks.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "bench/name_list.h"

namespace sluice::bench {
namespace {

// The first element of `ip -j ...` output, an object.
Result<nlohmann::json> first_link(const std::string& ip_json) {
    auto doc = nlohmann::json::parse(ip_json, nullptr, false);
    if (doc.is_discarded() || !doc.is_array() || doc.empty() || !doc[0].is_object())
        return make_error("`ip -j link show` printed no link: " + ip_json.substr(0, 200));
    return doc[0];
}

}  // namespace

const std::vector<std::string>& synflood_systems() {
    static const std::vector<std::string> systems{"none",        "sluice", "sluice-proxy",
                                                  "sluice-auto", "nft-ct", "nft-synproxy"};
    return systems;
}

bool is_sluice_system(const std::string& system) {
    return system.rfind("sluice", 0) == 0;
}

bool is_nft_system(const std::string& system) {
    return system.rfind("nft", 0) == 0;
}

Result<std::vector<std::string>> parse_systems(const std::string& text) {
    return parse_name_list(text, synflood_systems(), "system");
}

Result<uint64_t> rx_packets_of(const std::string& ip_json) {
    auto link = first_link(ip_json);
    if (!link) return link.error();
    const auto& l = *link;
    if (!l.contains("stats64") || !l["stats64"].contains("rx") || !l["stats64"]["rx"].contains("packets") ||
        !l["stats64"]["rx"]["packets"].is_number_unsigned())
        return make_error("`ip -j -s link show` has no stats64.rx.packets for " + l.value("ifname", "?"));
    return l["stats64"]["rx"]["packets"].get<uint64_t>();
}

Result<std::string> mac_of(const std::string& ip_json) {
    auto link = first_link(ip_json);
    if (!link) return link.error();
    if (!link->contains("address") || !(*link)["address"].is_string())
        return make_error("`ip -j link show` has no address for " + link->value("ifname", "?"));
    return (*link)["address"].get<std::string>();
}

double syn_rate(const PacketWindow& without_flood, const PacketWindow& with_flood) {
    return std::round(with_flood.rate() - without_flood.rate());
}

Status check_flood_reached(const std::string& system, const PacketWindow& without_flood,
                           const PacketWindow& with_flood) {
    if (with_flood.rate() > without_flood.rate() + kFloodMargin) return {};
    return make_error(system + ": the flood did not reach the firewall (rx " + std::to_string(with_flood.packets) +
                      " packets in the flood window, " + std::to_string(static_cast<uint64_t>(with_flood.rate())) +
                      "/s against " + std::to_string(static_cast<uint64_t>(without_flood.rate())) + "/s without it)");
}

Status check_in_path(const std::string& system, const InPathEvidence& e) {
    if (system == "sluice-proxy") {
        if (e.cookies_after <= e.cookies_before)
            return make_error("sluice-proxy: no SYN cookie was sent during the flood");
    } else if (system == "sluice" || system == "sluice-auto") {
        if (e.session_hits == 0) return make_error(system + ": no packet hit a session");
    } else if (is_nft_system(system)) {
        if (e.nft_packets == 0) return make_error(system + ": the nft counters did not move");
    }
    return {};
}

Result<TableSize> sluice_table_size(const nlohmann::json& doc, const std::string& spoofed_prefix) {
    if (!doc.is_object() || !doc.contains("sessions") || !doc["sessions"].is_array())
        return make_error("sluice show sessions --json has no \"sessions\" array");
    TableSize t;
    for (const auto& f : doc["sessions"]) {
        ++t.all;
        if (f.is_object() && f.contains("source") && f["source"].is_string() &&
            f["source"].get<std::string>().rfind(spoofed_prefix, 0) == 0)
            ++t.spoofed;
    }
    return t;
}

Status check_table_not_full(const std::string& what, uint64_t table_full_drops) {
    if (table_full_drops == 0) return {};
    return make_error(what + ": the session table filled (drop-session-table-full +" + std::to_string(table_full_drops) +
                      ") with the connections' own flows, so the result would measure the table, not the flood; the "
                      "configs keep closed flows for tcp-time-wait " + std::string(kBenchTimeWait) +
                      ": lower --time or --concurrency (docs/host-protection.md, \"Benchmark\")");
}

Status check_source_limit(bool limit_on, uint64_t refused) {
    if (limit_on && refused == 0) return make_error("part (b): the source limit dropped nothing");
    return {};
}

}  // namespace sluice::bench
