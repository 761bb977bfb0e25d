// What the per-packet benchmark measures against: a throwaway namespace
// (NetnsFixture: lan0/wan0, permanent neighbours), the sluice datapath loaded
// unpinned with a small config applied, TCP sessions driven to ESTABLISHED
// through xdp_main_prog, and the yardstick (bpf/baseline_redirect.bpf.c)
// loaded next to it with its devmap pointing at wan0.
//
// BenchEnv::create() fails with a readable reason when anything is off (no
// root, bpf_stats on, a handshake step not redirected, a session not
// ESTABLISHED): a benchmark of a datapath that does not forward means nothing.
#pragma once

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

enum class Family { v4, v6 };
const char* family_name(Family f);

// One TCP flow LAN host → WAN host :80, as frames the LAN host would send.
struct FlowFrames {
    Bytes syn;   // the first packet (policy, session create)
    Bytes data;  // a full-size established-flow segment (1500-byte IP packet)
    uint16_t client_port = 0;
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

    // An ESTABLISHED flow (its data frame) and a flow whose SYN the benchmark
    // replays with the session deleted before each run.
    const FlowFrames& established(Family f) const { return f == Family::v4 ? est4_ : est6_; }
    const FlowFrames& first_packet(Family f) const { return f == Family::v4 ? first4_ : first6_; }

    // The established flow's tcp_state in both directions is still ESTABLISHED.
    Status check_established(Family f) const;
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
    Status handshake(Family f);

    std::unique_ptr<test::NetnsFixture> ns_;  // first: outlives the BPF objects
    std::unique_ptr<Impl> impl_;
    FlowFrames est4_, est6_, first4_, first6_;
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
