// The datapath's programs on the config's interfaces: the pipeline at each
// device's XDP hook (xdp_main_prog, native or generic) or, in the `tc` mode,
// at its TC ingress (tc_main_prog), as loader/attach.h chooses, and the two
// TC programs. A VLAN sub-interface shares its parent's programs, so
// attachments are kept per device.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "loader/attach.h"
#include "loader/datapath.h"

namespace sluice {

class InterfaceAttachments {
public:
    struct Attached {
        ResolvedInterface itf;  // itf.name is the device
        XdpMode mode = XdpMode::Generic;
        std::string why;        // why this mode (loader/attach.h choose_xdp_mode)
        std::string warning;    // why native XDP was not used, if it was asked for
    };

    explicit InterfaceAttachments(Datapath& dp) : dp_(dp) {}

    // Attaches the interface's device (its parent for a VLAN) unless it is
    // attached already. On error nothing of this device stays attached.
    // handoff_used: the config hands packets to tc_punt_prog (inspect, the
    // SYN proxy), which native XDP can do only where the kernel lets XDP
    // use the metadata area (Datapath::xdp_handoff_in_meta).
    Status attach(const ResolvedInterface& itf, bool handoff_used = true);
    // Devices attached in native XDP mode.
    std::vector<std::string> native_devices() const;
    // Detaches every device not in `keep`.
    void detach_except(const std::set<std::string>& keep);
    void detach_all();

    const std::map<std::string, Attached>& devices() const { return attached_; }
    // "lan0 native, wan0 generic"
    std::string summary() const;

    static std::string device_of(const std::string& interface) { return interface.substr(0, interface.find('.')); }

private:
    void detach(const std::string& device, uint32_t ifindex);
    // The pipeline's hook on the device: XDP (and no TC pipeline left from
    // an earlier run in `tc` mode) or TC ingress (and no XDP program). A
    // native attach that `auto` chose and the driver refuses goes to TC.
    Result<AttachResult> attach_pipeline(const std::string& device, uint32_t ifindex, const ModeChoice& choice,
                                         bool chosen_by_auto);
    Result<AttachResult> attach_tc_pipeline(const std::string& device, uint32_t ifindex);

    Datapath& dp_;
    std::map<std::string, Attached> attached_;  // by device
};

const char* xdp_mode_name(XdpMode mode);

}  // namespace sluice
