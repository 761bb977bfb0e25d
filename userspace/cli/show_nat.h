// `sluice show nat`: the running config's NAT rules and pools (state file),
// pool and interface-address usage (nat_ports), the interface addresses source
// NAT uses (nat_ifaddrs) and the translations of live flows (sessions).
// Building the report is pure, so its shape is testable from given entries.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "loader/instance_paths.h"
#include "loader/nat_ifaddrs.h"
#include "loader/nat_reservations.h"
#include "loader/session_table.h"
#include "daemon/published_state.h"

namespace sluice::cli {

struct NatReportInput {
    state::Nat nat;                                     // the state file's "nat"
    std::vector<SessionEntry> sessions;
    std::vector<NatReservation> reservations;
    std::vector<NatIfaddrEntry> ifaddrs;
    std::function<std::string(uint32_t)> ifname;       // ifindex → name ("" if unknown)
    uint64_t now_ns = 0;
};

// {"rules": [...], "pools": [...], "interfaces": [...], "translations": [...]}
nlohmann::json nat_report(const NatReportInput& in);
void print_nat_report(const nlohmann::json& report, std::ostream& out);

// What a session entry rewrites, for `show sessions`: {"src": "a:p"} when it
// translates the source, "dst" likewise; null when it translates nothing.
nlohmann::json session_nat_json(const SessionEntry& e);

int show_nat(const InstancePaths& paths, const state::PublishedState& state, bool json_out, std::ostream& out,
             std::ostream& err);

}  // namespace sluice::cli
