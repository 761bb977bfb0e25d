// The inspection benchmark's canary connection: one plain TCP exchange from
// inside a lab namespace, made by this process (a thread that enters the
// namespace with setns), so that no other tool or interpreter is needed.
#pragma once

#include <chrono>
#include <string>

#include "common/result.h"

namespace sluice::bench {

// The request the canary sends: "GET /?q=TEXT HTTP/1.1\r\nHost: wan-host\r\n"
// padded with 'x' to 120 bytes, then "\r\n" (longer than sluice_connrate's
// server waits for before it answers).
std::string canary_request(const std::string& text);

// In network namespace `netns` (/run/netns/NETNS): connects to
// address:port, sends canary_request(text), reads until `expect_bytes`
// arrived or the server closed. Ok when at least expect_bytes arrived; every
// step is bounded by `timeout`.
Status canary_exchange(const std::string& netns, const std::string& address, int port, const std::string& text,
                       size_t expect_bytes = 200, std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace sluice::bench
