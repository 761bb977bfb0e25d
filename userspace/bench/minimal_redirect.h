// The least an XDP forwarder can do, live: bpf/baseline_redirect.bpf.c (the
// yardstick of `sluice bench throughput`'s per-packet cost: MAC swap and a
// devmap redirect) attached natively to the firewall's ingress device and
// redirecting every frame out of its egress device, for as long as this
// object lives. No lookup, no check: what any XDP datapath pays at least.
#pragma once

#include <memory>
#include <string>

#include "bench/xdp_link.h"
#include "common/result.h"

struct baseline_redirect;

namespace sluice::bench {

class MinimalRedirect {
public:
    static Result<std::unique_ptr<MinimalRedirect>> attach(const std::string& netns, const std::string& ingress,
                                                           const std::string& egress);
    ~MinimalRedirect();
    MinimalRedirect(const MinimalRedirect&) = delete;
    MinimalRedirect& operator=(const MinimalRedirect&) = delete;

    // The program's name as the kernel lists it.
    static const char* program_name() { return "xdp_baseline_redirect"; }

private:
    MinimalRedirect() = default;
    baseline_redirect* skel_ = nullptr;
    std::unique_ptr<XdpLink> link_;
};

}  // namespace sluice::bench
