// The control socket's protocol: what the CLI asks a running daemon and what
// it answers. One request per connection, a JSON object on one line; one
// reply, the same way. The only declaration of the schema: the daemon
// (control_server.h) and the CLI (cli/control_client.h) both use these types
// and their encoders, so a renamed field breaks the build, not the output.
//
// Version 1. A daemon answers a request of another version with ok=false and
// a message naming both versions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace sluice::control {

constexpr int kProtocolVersion = 1;

enum class Command {
    reload,         // read, check and apply the config file; reply when applied or refused
    status,         // the published state (state.json's content)
    inspect_stop,   // take the inspection stage down (punted flows get their fail-mode)
    inspect_start,  // bring it back
    ha_status,      // the HA agent's state (reply.state: JSON text)
    ha_failover,    // planned switchover of `argument` ("" = every group this node carries)
    egress_add,     // argument: {"scope", "rule" (YAML), "at" (1-based position, 0 = the end)}
    egress_delete,  // argument: {"scope", "rule"}: every rule equal to it; none is not an error
    egress_replace, // argument: {"scope", "index" (1-based), "rule"}
    metrics,        // reply.message: /metrics now, in the Prometheus text format
};

const char* command_name(Command command);

struct Request {
    int version = kProtocolVersion;
    Command command = Command::status;
    std::string argument;  // ha_failover: the group; egress_*: a JSON object (above); "" otherwise
};

// One problem of a refused config, as `sluice check --json` reports it.
struct Problem {
    std::string file;
    int line = 0;  // 0: no position
    int column = 0;
    std::string path;
    std::string message;
    std::string text;  // FILE:LINE:COLUMN: PATH: MESSAGE, as printed
};

struct Reply {
    int version = kProtocolVersion;
    bool ok = false;
    std::string message;            // what happened, or why not
    std::vector<Problem> problems;  // reload: every problem of a refused file
    uint64_t config_generation = 0; // reload: the generation now active
    std::string state;              // status: the published state; ha_status: the agent's; JSON text
};

std::string encode(const Request& request);
std::string encode(const Reply& reply);
Result<Request> decode_request(std::string_view line);
Result<Reply> decode_reply(std::string_view line);

// The socket of an instance: <state_dir>/control.sock, mode 0600.
std::string socket_path(const std::string& state_dir);

}  // namespace sluice::control
