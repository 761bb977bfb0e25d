// The receiver of `sluice bench smallpkt`: bpf/bench_sink.bpf.c on a device
// in one of the lab's namespaces, for as long as this object lives,
// counting (and dropping) every frame that arrives there — natively at XDP
// for frames that cross the veth pair, and at TC ingress for frames a
// bpf_redirect_peer hands to the device directly (they skip XDP; the BPF
// file says more).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "bench/xdp_link.h"
#include "common/result.h"

struct bench_sink;

namespace sluice::bench {

struct SinkCounts {
    uint64_t frames = 0;             // every frame, both hooks
    uint64_t flow_frames = 0;        // the benchmark's (IPv4 UDP to the flow port), both hooks
    uint64_t flow_frames_at_tc = 0;  // of those, the ones TC ingress counted
};

class PacketSink {
public:
    // Loads the counter for UDP destination port `flow_port`, attaches it
    // natively at XDP and at TC ingress of DEV in NETNS.
    static Result<std::unique_ptr<PacketSink>> attach(const std::string& netns, const std::string& dev,
                                                      uint16_t flow_port);
    ~PacketSink();
    PacketSink(const PacketSink&) = delete;
    PacketSink& operator=(const PacketSink&) = delete;

    // The counts since the program was loaded, summed over the CPUs.
    Result<SinkCounts> read() const;
    // The XDP program's name as the kernel lists it.
    static const char* xdp_program_name() { return "xdp_bench_sink"; }

private:
    PacketSink() = default;
    bench_sink* skel_ = nullptr;
    std::unique_ptr<XdpLink> xdp_;
    std::string netns_;
    int tc_ifindex_ = 0;  // the device whose clsact qdisc we made (0: none)
};

}  // namespace sluice::bench
