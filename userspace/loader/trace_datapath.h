// The datapath `sluice trace` runs a packet through (docs/operations.md
// "Packet tracer"): the same programs as the live pipeline (the XDP build of
// bpf/pipeline.bpf.h), loaded once more, reading the running instance's
// configuration maps (zones, the classifier, NAT rules and pools, host
// services, screens, egress, policy log flags) by their pins, and writing
// into maps of its own for everything a packet changes (sessions, NAT port
// reservations, counters, flow cache, rate state, rings, scratch). So a
// traced packet meets the live rule base and the live flow it belongs to
// (its sessions are copied in), and nothing it does reaches the running
// firewall: no session, no port, no counter, no event, no packet sent.
#pragma once

#include <linux/bpf.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "loader/bpf_object.h"
#include "loader/session_table.h"

extern "C" {
#include "packet_ctx.h"
}

namespace sluice {

struct TraceRun {
    int action = 0;                    // XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT, XDP_ABORTED
    std::vector<uint8_t> frame_out;    // the frame as the programs left it
    std::vector<uint64_t> counted;     // stat reasons counted, by reason id (packets)
    packet_ctx pc{};                   // what the pipeline knew of the packet at the end
    bool policy_judged = false;        // a policy (or the default) decided a packet without a session
    uint32_t policy_id = 0;            // ... which (SESSION_POLICY_RELATED: the default)
    std::vector<uint32_t> filter_slots;   // filter rules (slots of the generation) that counted it
    std::vector<SessionEntry> sessions_created;   // entries the packet created
};

class TraceDatapath {
public:
    // pin_dir: the running instance's pins.
    static Result<std::unique_ptr<TraceDatapath>> open(const std::string& pin_dir);

    // Copies the live entries of the flow `key` belongs to (both directions),
    // so the packet meets its session as a live packet would.
    Status seed_flow(uint8_t family, const void* key);

    // Runs one frame arriving on ifindex through xdp_main_prog. Packets run
    // one after another share this datapath's state (a flow's first packet
    // opens the session its next one finds).
    Result<TraceRun> run(const std::vector<uint8_t>& frame, uint32_t ifindex);

private:
    TraceDatapath() = default;
    SkeletonPtr skel_;
    std::string pin_dir_;
    std::vector<int> pinned_fds_;
    uint8_t generation_ = 0;
};

}  // namespace sluice
