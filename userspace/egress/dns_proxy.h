// sluice's DNS proxy for the egress policy (docs/egress.md). The datapath
// steers DNS (UDP and TCP port 53, to any resolver) from the sources a scope
// governs to the proxy's transparent loopback listeners through the punt path
// (tc_punt_prog: bpf_sk_assign + the policy route), so a client talks to
// "its resolver" and the proxy answers in that resolver's name. The proxy
// decides the query name and every name of the answer's CNAME chain with the
// scope's rules, forwards allowed queries to the configured upstreams (the
// next one after an error or timeout; SERVFAIL when none answers), and hands
// each A/AAAA address of an allowed answer to the learn hook, which writes it
// into the datapath's learned-address map, before it releases the answer.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/result.h"
#include "config/egress_config.h"

namespace sluice::egress {

// The flow a query arrived on, as the client sent it: its source, and the
// resolver it addressed (the original destination). Addresses in network
// order (IPv4 in the first 4 bytes), ports in host order.
struct ClientFlow {
    int family = 0;                        // AF_INET or AF_INET6
    uint8_t protocol = 0;                  // IPPROTO_UDP or IPPROTO_TCP
    std::array<uint8_t, 16> client{};
    std::array<uint8_t, 16> resolver{};
    uint16_t client_port = 0;
    uint16_t resolver_port = 0;
};

// One address of an allowed answer. ttl is the record's TTL clamped to the
// policy's [minimum, maximum] (grace is the learner's to add).
struct LearnedAddress {
    int family = 0;
    std::array<uint8_t, 16> address{};
    std::chrono::seconds ttl{0};
    const config::EgressRule* rule = nullptr;  // the name rule that allowed it; nullptr: the scope's default
};

struct DnsProxyHooks {
    // The scope (its id, 1-based) that governs the client of this flow; 0
    // when none does (the query is then REFUSED).
    std::function<uint8_t(const ClientFlow&)> scope_of;
    // Called before the answer is released, with every address it carries.
    // An error (the map is full, the write failed) makes the answer SERVFAIL.
    std::function<Status(uint8_t scope_id, const std::vector<LearnedAddress>&)> learn;
};

struct DnsProxyOptions {
    uint16_t port = 0;                     // loopback listeners (TCP and UDP, both families); 0 = any free port
    bool transparent = true;               // IP_TRANSPARENT listeners, replies from the original destination
    std::chrono::milliseconds upstream_timeout{400};  // per attempt; then the next upstream
};

struct DnsProxyCounters {
    uint64_t queries = 0;                  // well-formed queries received (UDP and TCP)
    uint64_t tcp_queries = 0;
    uint64_t allowed = 0;                  // answered from an upstream
    uint64_t denied = 0;                   // the name (or a CNAME target) denied: NXDOMAIN/REFUSED
    uint64_t not_governed = 0;             // no scope for the client: REFUSED
    uint64_t malformed = 0;                // not a parseable query: FORMERR, or dropped when even the header is short
    uint64_t upstream_errors = 0;          // attempts that timed out or failed
    uint64_t servfail = 0;                 // no upstream answered (or the learn hook failed)
    uint64_t learned = 0;                  // addresses handed to the learn hook
    uint64_t learn_failures = 0;
};

class DnsProxy {
public:
    virtual ~DnsProxy() = default;
    // Starts the proxy's thread(s) with the policy; fails (nothing left
    // open) when a listener cannot be opened.
    static Result<std::unique_ptr<DnsProxy>> start(std::shared_ptr<const config::Egress> policy,
                                                   DnsProxyOptions options, DnsProxyHooks hooks);
    // A new policy (reload, rule change): queries received from now on use it.
    virtual void set_policy(std::shared_ptr<const config::Egress> policy) = 0;
    virtual uint16_t port() const = 0;     // host order; the same for TCP and UDP
    virtual DnsProxyCounters counters() const = 0;
    // Closes the listeners and joins the threads; pending queries are dropped.
    virtual void stop() = 0;
};

}  // namespace sluice::egress
