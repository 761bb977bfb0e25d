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
    std::string warning;   // set when native attach failed and generic was used
};

// The kernel driver behind an interface ("veth", "mlx5_core", ...), or "".
std::string interface_driver(const std::string& name);

// `auto`: native for drivers with good native XDP, generic otherwise (veth:
// native disables GSO/GRO and costs TCP bulk ~8x on this kind of machine).
// `tc`: the pipeline's TC build at TC ingress, no XDP program.
XdpMode choose_xdp_mode(const std::string& requested, const std::string& driver);

// Attaches prog_fd as the interface's XDP program. If the interface already
// runs an earlier sluice's xdp_main_prog, swaps it atomically (no gap for
// established flows); another program there is an error. Native failures
// fall back to generic with a warning naming the interface and reason.
Result<AttachResult> attach_xdp(const std::string& name, uint32_t ifindex, int prog_fd, XdpMode mode);

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
