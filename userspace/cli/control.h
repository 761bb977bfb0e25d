// `sluice reload` and `sluice down`: act on a running (or dead) instance.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "daemon/control_protocol.h"

namespace sluice::cli {

// Asks the daemon, through its control socket, to apply its config file
// again, and prints its answer: the new generation, or every problem of the
// file (the running config stays in force) and exit status 1.
int reload(const std::string& instance, std::ostream& out, std::ostream& err);

// Stops the daemon if it runs, detaches what is still attached, removes pins
// and state.
int down(const std::string& instance, std::ostream& out, std::ostream& err);

// `sluice inspect stop|start`: takes the running instance's inspection stage
// down (punted flows get their ruleset's fail-mode) or back up; the daemon's
// reply says whether it did.
int inspect_stage(const std::string& instance, bool start, std::ostream& out, std::ostream& err);

// `sluice ha status [--json]`: the HA agent's role per group, the peer, the
// sync counters (docs/ha.md). `sluice ha failover [GROUP]`: a planned
// switchover of GROUP (default: every group this node carries) to the peer.
int ha_status(const std::string& instance, bool json, std::ostream& out, std::ostream& err);
int ha_failover(const std::string& instance, const std::string& group, std::ostream& out, std::ostream& err);

// Sends one request to the instance's daemon through its control socket: the
// reply, or nullopt with the reason printed to err.
std::optional<control::Reply> ask_daemon_request(const std::string& instance, const control::Request& request,
                                                 std::chrono::seconds timeout, std::ostream& err);

// The running daemon's published state, asked now (not the state file);
// nullopt (the reason printed to err) when it does not answer.
std::optional<nlohmann::json> daemon_status(const std::string& instance, std::ostream& err);

}  // namespace sluice::cli
