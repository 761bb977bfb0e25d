#include "daemon/interface_attachments.h"

#include "daemon/daemon_log.h"

extern "C" {
#include "map_names.h"
}

namespace sluice {

const char* xdp_mode_name(XdpMode mode) { return mode == XdpMode::Native ? "native" : "generic"; }

Status InterfaceAttachments::attach(const ResolvedInterface& itf) {
    const std::string device = device_of(itf.name);
    if (itf.vlan_id != 0 || attached_.count(device)) {
        if (!attached_.count(device)) {
            ResolvedInterface parent = itf;
            parent.name = device;
            parent.vlan_id = 0;
            if (auto s = attach(parent); !s) return s;
        }
        return {};
    }
    XdpMode mode = choose_xdp_mode(itf.xdp_mode, interface_driver(device));
    auto r = attach_xdp(device, itf.ifindex, dp_.prog_fd("xdp_main_prog"), mode);
    if (!r) return r.error();
    if (!r->warning.empty()) daemon_log("warning: " + r->warning);
    Status tc = attach_tc(device, itf.ifindex, dp_.prog_fd(SLUICE_PROG_TC_EGRESS), TcHook::Egress);
    if (tc) tc = attach_tc(device, itf.ifindex, dp_.prog_fd(SLUICE_PROG_TC_PUNT), TcHook::Ingress);
    if (!tc) {
        detach(device, itf.ifindex);
        return tc;
    }
    Attached a{.itf = itf, .mode = r->mode, .warning = r->warning};
    a.itf.name = device;
    attached_[device] = a;
    return {};
}

void InterfaceAttachments::detach(const std::string& device, uint32_t ifindex) {
    if (auto s = detach_xdp(device, ifindex); !s) daemon_log(s.error().message);
    for (TcHook hook : {TcHook::Egress, TcHook::Ingress})
        if (auto s = detach_tc(device, ifindex, hook); !s) daemon_log(s.error().message);
}

void InterfaceAttachments::detach_except(const std::set<std::string>& keep) {
    for (auto it = attached_.begin(); it != attached_.end();) {
        if (!keep.count(it->first)) {
            detach(it->first, it->second.itf.ifindex);
            it = attached_.erase(it);
        } else {
            ++it;
        }
    }
}

void InterfaceAttachments::detach_all() { detach_except({}); }

std::string InterfaceAttachments::summary() const {
    std::string text;
    for (const auto& [name, a] : attached_) text += (text.empty() ? "" : ", ") + name + " " + xdp_mode_name(a.mode);
    return text;
}

}  // namespace sluice
