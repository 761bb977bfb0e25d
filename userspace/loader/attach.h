// Attaching the datapath to interfaces, per interface, with the mode chosen
// per docs/design.md "Attach modes": the pipeline as XDP (libxdp) or as a TC
// ingress filter (the `tc` mode), and the TC egress and punt programs.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace sluice {

enum class XdpMode { Native, Generic, Tc };

struct AttachResult {
    XdpMode mode = XdpMode::Generic;
    std::string warning;   // set when native attach failed and another mode was used
};

// The kernel driver behind an interface ("veth", "mlx5_core", ...), or "".
std::string interface_driver(const std::string& name);

// Whether this kernel lets XDP programs call bpf_xdp_adjust_meta (asked of
// the kernel with a probe program; some kernels refuse it).
bool kernel_allows_xdp_meta();

// A mode and, in words an operator reads in `show zones` and `check`, why.
struct ModeChoice {
    XdpMode mode = XdpMode::Tc;
    std::string why;
    std::string warning;  // the mode asked for cannot be used here
};

// `auto`: native XDP for drivers whose native XDP keeps line rate (mlx5,
// i40e, ice, ixgbe, virtio_net), the TC build for every other device: on
// veth native XDP turns GSO/GRO off, and generic XDP must linearize a GRO
// aggregate and cannot redirect it, while at TC ingress it is forwarded
// whole. `native`, `generic`, `tc`: forced. Without native_handoff (the
// kernel refuses bpf_xdp_adjust_meta, Datapath::xdp_handoff_in_meta, and the
// config inspects or SYN-proxies: config/handoff_features.h) native XDP is
// not used: `auto` takes TC, `native` generic with a warning.
ModeChoice choose_xdp_mode(const std::string& requested, const std::string& driver, bool native_handoff = true);

// Attaches prog_fd as the interface's XDP program. If the interface already
// runs an earlier sluice's xdp_main_prog, swaps it atomically (no gap for
// established flows); another program there is an error. With
// generic_fallback, a native failure falls back to generic with a warning
// naming the interface and reason.
Result<AttachResult> attach_xdp(const std::string& name, uint32_t ifindex, int prog_fd, XdpMode mode,
                                bool generic_fallback = true);

// Removes sluice's XDP program from the interface (leaves others alone).
Status detach_xdp(const std::string& name, uint32_t ifindex);

// A clsact filter: tc_egress_prog at egress, tc_punt_prog at ingress, and in
// the `tc` mode the pipeline (tc_main_prog) at ingress ahead of tc_punt_prog,
// which it hands punted packets on to; replaces an earlier one at the same place.
enum class TcHook { Ingress, Egress, IngressPipeline };
Status attach_tc(const std::string& name, uint32_t ifindex, int prog_fd, TcHook hook);
Status detach_tc(const std::string& name, uint32_t ifindex, TcHook hook);

// Name of the XDP program attached to ifindex, or "" when none.
std::string attached_xdp_program(uint32_t ifindex, uint32_t* prog_id = nullptr);

}  // namespace sluice
