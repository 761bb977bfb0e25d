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

// The policy under test: addresses only from 198.18.0.0/15 and 2001:2::/48.
extern const char* const kBenchConfigYaml;

// The second WAN-side host: flows to it are source-translated to wan0's address.
inline constexpr const char* kNatPeer4 = "198.18.100.201";
inline constexpr const char* kNatPeer6 = "2001:2:0:100::201";
inline constexpr const char* kNatPeerMac = "02:00:00:00:64:c9";

enum class Family { v4, v6 };
const char* family_name(Family f);

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
    static Result<std::unique_ptr<BenchEnv>> create();
    ~BenchEnv();
    BenchEnv(const BenchEnv&) = delete;
    BenchEnv& operator=(const BenchEnv&) = delete;

    int sluice_prog_fd() const;   // xdp_main_prog (entry of the tail-call chain)
    int baseline_prog_fd() const; // xdp_baseline_redirect
    int map_fd(const std::string& name) const;
    uint32_t lan_ifindex() const { return ns_->lan().ifindex; }

    // An ESTABLISHED flow (its data frame), the same to the NAT peer (source
    // NAT), and a flow whose SYN the benchmark replays with the session deleted
    // before each run.
    const FlowFrames& established(Family f) const { return f == Family::v4 ? est4_ : est6_; }
    const FlowFrames& established_nat(Family f) const { return f == Family::v4 ? nat4_ : nat6_; }
    const FlowFrames& first_packet(Family f) const { return f == Family::v4 ? first4_ : first6_; }

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

private:
    struct Impl;
    BenchEnv() = default;
    Status setup();
    Status load_datapath();
    Status load_baseline();
    Status add_nat_peer();
    Status write_nat_ifaddrs();
    Status handshake(Family f, FlowFrames& flow);

    std::unique_ptr<test::NetnsFixture> ns_;  // first: outlives the BPF objects
    std::unique_ptr<Impl> impl_;
    FlowFrames est4_, est6_, nat4_, nat6_, first4_, first6_;
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
