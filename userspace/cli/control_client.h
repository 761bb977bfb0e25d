// The CLI's end of the control socket (daemon/control_protocol.h).
#pragma once

#include <chrono>
#include <string>

#include "common/result.h"
#include "daemon/control_protocol.h"

namespace sluice::cli {

// Sends `request` to the daemon listening at `socket` and returns its reply.
// No daemon there (no socket, or nobody accepting): an Error with code
// NotFound. A daemon that does not answer within `timeout`: code Timeout.
Result<control::Reply> call_daemon(const std::string& socket, const control::Request& request,
                                   std::chrono::milliseconds timeout);

}  // namespace sluice::cli
