#include "bench/minimal_redirect.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <cerrno>

#include "baseline_redirect.skel.h"
#include "bench/netns_thread.h"

namespace sluice::bench {

Result<std::unique_ptr<MinimalRedirect>> MinimalRedirect::attach(const std::string& netns, const std::string& ingress,
                                                                 const std::string& egress) {
    auto egress_ifindex = ifindex_in(netns, egress);
    if (!egress_ifindex) return egress_ifindex.error();
    std::unique_ptr<MinimalRedirect> r(new MinimalRedirect());
    r->skel_ = baseline_redirect::open();
    if (!r->skel_) return errno_error("opening bpf/baseline_redirect.bpf.c", errno);
    // .rodata is frozen at load: the egress port must be set before.
    r->skel_->rodata->egress_ifindex = *egress_ifindex;
    if (int err = baseline_redirect::load(r->skel_); err != 0)
        return errno_error("loading bpf/baseline_redirect.bpf.c", -err);
    // The kernel resolves a devmap entry's ifindex in the namespace of the
    // thread that writes it.
    auto entry = in_netns(netns, [&]() -> Status {
        uint32_t key = *egress_ifindex;
        bpf_devmap_val value{};
        value.ifindex = *egress_ifindex;
        if (bpf_map_update_elem(bpf_map__fd(r->skel_->maps.baseline_ports), &key, &value, BPF_ANY) != 0)
            return errno_error("the minimal redirect's devmap entry for " + egress, errno);
        return {};
    });
    if (!entry) return entry.error();
    auto link = XdpLink::attach_native(netns, ingress, bpf_program__fd(r->skel_->progs.xdp_baseline_redirect));
    if (!link) return with_context("the minimal redirect", link.error());
    r->link_ = std::make_unique<XdpLink>(std::move(*link));
    return r;
}

MinimalRedirect::~MinimalRedirect() {
    link_.reset();  // off the device before the program goes
    if (skel_) baseline_redirect::destroy(skel_);
}

}  // namespace sluice::bench
