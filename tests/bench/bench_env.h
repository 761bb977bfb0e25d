// What the per-packet benchmark measures against: a throwaway namespace
// (NetnsFixture: lan0/wan0, permanent neighbours), the sluice datapath loaded
// unpinned with a small config applied, TCP sessions driven to ESTABLISHED
// through xdp_main_prog, and the yardstick (bpf/baseline_redirect.bpf.c)
// loaded next to it with its devmap pointing at wan0.
//
// Two established flows per family differ only by NAT: LAN host → WAN host
// (kWanHost*, not translated) and LAN host → the NAT peer (kNatPeer*, a second
// address behind wan0 with a permanent neighbour), which the config's
// nat.source rule translates to wan0's address (nat_ifaddrs written here the
// way the daemon writes it, loader/nat_ifaddrs.h).
//
// With observability (create(true)), the config also logs flows (the
// policy and the default action log open, close and deny; no rate limit; an
// output nobody opens, there is no daemon) and drop capture is set up as
// `sluice capture` sets it (every drop reason, every packet, its reader
// open); set_observability() turns both on and off between measurements on
// the same datapath, maps and sessions: off is the datapath state of a
// config without `log:` and no capture running. drain_flow_events() and
// drain_captures() read what was logged and captured, as the daemon and
// `sluice capture` would.
//
// BenchEnv::create() fails with a readable reason when anything is off (no
// root, bpf_stats on, a handshake step not redirected, a session not
// ESTABLISHED): a benchmark of a datapath that does not forward means nothing.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "netns_fixture.h"
#include "packet_builder.h"

namespace sluice::bench {

using test::Bytes;

// The policy under test: addresses only from 198.18.0.0/15 and 2001:2::/48;
// `observed` adds flow logging (log: on the policy, default-log, flow-log).
std::string bench_config_yaml(bool observed);

// The second WAN-side host: flows to it are source-translated to wan0's address.
inline constexpr const char* kNatPeer4 = "198.18.100.201";
inline constexpr const char* kNatPeer6 = "2001:2:0:100::201";
inline constexpr const char* kNatPeerMac = "02:00:00:00:64:c9";

enum class Family { v4, v6 };
const char* family_name(Family f);

// Records read off the observed datapath's flow_events ring, by type.
struct FlowEventCounts {
    uint64_t open = 0, close = 0, deny = 0, other = 0;
    uint64_t total() const { return open + close + deny + other; }
};

// One TCP flow LAN host → a WAN-side host :80, as frames the LAN host would
// send, and the tuple its replies carry.
struct FlowFrames {
    Bytes syn;   // the first packet (policy, session create)
    Bytes data;  // a full-size established-flow segment (1500-byte IP packet)
    uint16_t client_port = 0;
    bool nat = false;                  // to the NAT peer: source NAT to wan0's address
    std::array<uint8_t, 16> server{};  // the WAN-side host (IPv4 in the first 4 bytes)
    // The client as the server sees it: the LAN host and client_port, or,
    // for a NAT flow after its SYN, wan0's address and the reserved port.
    std::array<uint8_t, 16> seen_addr{};
    uint16_t seen_port = 0;
};

class BenchEnv {
public:
    static Result<std::unique_ptr<BenchEnv>> create(bool observability = false);
    ~BenchEnv();
    BenchEnv(const BenchEnv&) = delete;
    BenchEnv& operator=(const BenchEnv&) = delete;

    int sluice_prog_fd() const;   // xdp_main_prog (entry of the tail-call chain)
    // tc_main_prog, the same pipeline built for TC ingress (the `tc` mode,
    // what `auto` picks on veth), on the same maps: create(true) loads it.
    int sluice_tc_prog_fd() const;
    int baseline_prog_fd() const; // xdp_baseline_redirect
    int map_fd(const std::string& name) const;
    uint32_t lan_ifindex() const { return ns_->lan().ifindex; }

    // An ESTABLISHED flow (its data frame), the same to the NAT peer (source
    // NAT), and a flow whose SYN the benchmark replays with the session deleted
    // before each run.
    const FlowFrames& established(Family f) const { return f == Family::v4 ? est4_ : est6_; }
    const FlowFrames& established_nat(Family f) const { return f == Family::v4 ? nat4_ : nat6_; }
    const FlowFrames& first_packet(Family f) const { return f == Family::v4 ? first4_ : first6_; }
    // A SYN from the LAN host to the WAN host's port 81: no policy permits
    // it, the default action drops it (drop-policy-default).
    const Bytes& denied(Family f) const { return f == Family::v4 ? denied4_ : denied6_; }

    // The established flow's tcp_state in both directions is still ESTABLISHED.
    Status check_established(Family f) const { return check_established(f, established(f)); }
    // Same for any flow (both session entries found by its seen_addr/seen_port).
    Status check_established(Family f, const FlowFrames& flow) const;
    // "" when `out` (what sluice made of flow.data) left with the tuple the
    // server should see (seen_addr:seen_port → server:80) and valid checksums.
    std::string check_output(Family f, const FlowFrames& flow, const Bytes& out) const;
    // Deletes both session entries of `flow` (missing entries are fine).
    void delete_sessions(Family f, const FlowFrames& flow) const;
    // Whether the forward session entry of `flow` exists.
    bool session_exists(Family f, const FlowFrames& flow) const;

    // Observability (create(true) only): flow logging (runtime_cfg's
    // flow_log) and drop capture (capture_cfg) both on or both off.
    Status set_observability(bool on);
    // Reads every record waiting on the flow_events ring (the daemon's part,
    // without the writing): the ring never fills, and a case can check it
    // logged what it should have.
    Result<FlowEventCounts> drain_flow_events();
    // Reads every record waiting on capture_events (what `sluice capture`
    // reads, the same reader): how many, and how many the kernel lost.
    struct CaptureCounts {
        uint64_t records = 0, lost = 0;
    };
    Result<CaptureCounts> drain_captures();

private:
    struct Impl;
    BenchEnv() = default;
    Status setup(bool observability);
    Status load_datapath(bool observability);
    Status open_observability_readers();
    Status load_baseline();
    Status add_nat_peer();
    Status write_nat_ifaddrs();
    Status handshake(Family f, FlowFrames& flow);

    std::unique_ptr<test::NetnsFixture> ns_;  // first: outlives the BPF objects
    std::unique_ptr<Impl> impl_;
    FlowFrames est4_, est6_, nat4_, nat6_, first4_, first6_;
    Bytes denied4_, denied6_;
};

// The IP packet size of the established-flow data frame (Ethernet adds 14).
inline constexpr size_t kDataIpPacketSize = 1500;
// The frames carry TTL / hop limit 255: BPF_PROG_TEST_RUN runs `repeat` times
// on the same buffer, so each run sees the previous run's TTL decrement; 255
// leaves 254 forwarded runs per call before the TTL-expiry path would start.
inline constexpr uint8_t kBenchTtl = 255;
inline constexpr int kMaxRepeatPerCall = 254;

// "" when kernel.bpf_stats_enabled is 0, else why the run must not go on.
std::string bpf_stats_problem();

}  // namespace sluice::bench
