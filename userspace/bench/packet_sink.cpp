#include "bench/packet_sink.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>

#include <cerrno>
#include <vector>

#include "bench/netns_thread.h"
#include "bench_sink.skel.h"

extern "C" {
#include "bench_sink_counts.h"
}

namespace sluice::bench {

Result<std::unique_ptr<PacketSink>> PacketSink::attach(const std::string& netns, const std::string& dev,
                                                       uint16_t flow_port) {
    std::unique_ptr<PacketSink> sink(new PacketSink());
    sink->netns_ = netns;
    sink->skel_ = bench_sink::open();
    if (!sink->skel_) return errno_error("opening bpf/bench_sink.bpf.c", errno);
    // .rodata is frozen at load: the port must be set before.
    sink->skel_->rodata->flow_port = flow_port;
    if (int err = bench_sink::load(sink->skel_); err != 0) return errno_error("loading bpf/bench_sink.bpf.c", -err);
    auto link = XdpLink::attach_native(netns, dev, bpf_program__fd(sink->skel_->progs.xdp_bench_sink));
    if (!link) return with_context("the receiver's counter", link.error());
    sink->xdp_ = std::make_unique<XdpLink>(std::move(*link));
    // TC ingress: a clsact qdisc of our own (the WAN host has none), removed
    // with its filter by the destructor, or with the namespace.
    auto tc = in_netns(netns, [&]() -> Status {
        const int ifindex = static_cast<int>(if_nametoindex(dev.c_str()));
        if (ifindex == 0) return errno_error("no interface " + dev + " in " + netns, errno);
        LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
        if (int rc = bpf_tc_hook_create(&hook); rc != 0)
            return errno_error("a clsact qdisc on " + dev + " in " + netns, -rc);
        sink->tc_ifindex_ = ifindex;
        LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = bpf_program__fd(sink->skel_->progs.tc_bench_sink));
        if (int rc = bpf_tc_attach(&hook, &opts); rc != 0)
            return errno_error("the receiver's counter at TC ingress of " + dev + " in " + netns, -rc);
        return {};
    });
    if (!tc) return tc.error();
    return sink;
}

PacketSink::~PacketSink() {
    if (tc_ifindex_ != 0)
        (void)in_netns(netns_, [&]() -> Status {
            LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = tc_ifindex_, .attach_point = BPF_TC_INGRESS);
            bpf_tc_hook_destroy(&hook);  // the clsact qdisc and its filter
            return {};
        });
    xdp_.reset();  // off the device before the program goes
    if (skel_) bench_sink::destroy(skel_);
}

Result<SinkCounts> PacketSink::read() const {
    const int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) return errno_error("counting the possible CPUs", -cpus);
    SinkCounts sum;
    for (uint32_t hook = 0; hook < BENCH_SINK_HOOKS; ++hook) {
        std::vector<bench_sink_counts> per_cpu(static_cast<size_t>(cpus));
        if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.sink_counts), &hook, per_cpu.data()) != 0)
            return errno_error("reading the receiver's counters", errno);
        for (const auto& c : per_cpu) {
            sum.frames += c.frames;
            sum.flow_frames += c.flow_frames;
            if (hook == BENCH_SINK_TC) sum.flow_frames_at_tc += c.flow_frames;
        }
    }
    return sum;
}

}  // namespace sluice::bench
