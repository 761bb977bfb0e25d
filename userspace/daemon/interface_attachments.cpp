#include "daemon/interface_attachments.h"

#include "daemon/daemon_log.h"

extern "C" {
#include "map_names.h"
}

namespace sluice {

const char* xdp_mode_name(XdpMode mode) {
    return mode == XdpMode::Native ? "native" : mode == XdpMode::Generic ? "generic" : "tc";
}

Result<AttachResult> InterfaceAttachments::attach_tc_pipeline(const std::string& device, uint32_t ifindex) {
    if (auto s = dp_.load_tc(); !s) return make_error("interface " + device + ": " + s.error().message);
    // The TC pipeline first, then sluice's XDP program of an earlier run
    // goes: no moment without a pipeline on the device.
    if (auto s = attach_tc(device, ifindex, dp_.prog_fd(SLUICE_PROG_TC_MAIN), TcHook::IngressPipeline); !s)
        return s.error();
    if (auto s = detach_xdp(device, ifindex); !s) return s.error();
    return AttachResult{.mode = XdpMode::Tc, .warning = ""};
}

Result<AttachResult> InterfaceAttachments::attach_pipeline(const std::string& device, uint32_t ifindex,
                                                           const ModeChoice& choice, bool chosen_by_auto) {
    if (choice.mode == XdpMode::Tc) return attach_tc_pipeline(device, ifindex);
    auto r = attach_xdp(device, ifindex, dp_.prog_fd(SLUICE_PROG_XDP_MAIN), choice.mode, !chosen_by_auto);
    if (!r && chosen_by_auto && r.error().code != ErrorCode::Busy) {
        auto tc = attach_tc_pipeline(device, ifindex);
        if (!tc) return make_error(r.error().message + "; tc: " + tc.error().message);
        tc->warning = r.error().message + "; using the tc mode";
        return tc;
    }
    if (r) {
        if (auto s = detach_tc(device, ifindex, TcHook::IngressPipeline); !s) return s.error();
    }
    return r;
}

std::vector<std::string> InterfaceAttachments::native_devices() const {
    std::vector<std::string> out;
    for (const auto& [name, a] : attached_)
        if (a.mode == XdpMode::Native) out.push_back(name);
    return out;
}

Status InterfaceAttachments::attach(const ResolvedInterface& itf, bool handoff_used) {
    const std::string device = device_of(itf.name);
    if (itf.vlan_id != 0 || attached_.count(device)) {
        if (!attached_.count(device)) {
            ResolvedInterface parent = itf;
            parent.name = device;
            parent.vlan_id = 0;
            if (auto s = attach(parent, handoff_used); !s) return s;
        }
        return {};
    }
    const ModeChoice choice =
        choose_xdp_mode(itf.xdp_mode, interface_driver(device), dp_.xdp_handoff_in_meta() || !handoff_used);
    // The two TC programs before the pipeline: the TC pipeline hands
    // punted packets on to tc_punt_prog, which must be there first.
    Status tc = attach_tc(device, itf.ifindex, dp_.prog_fd(SLUICE_PROG_TC_EGRESS), TcHook::Egress);
    if (tc) tc = attach_tc(device, itf.ifindex, dp_.prog_fd(SLUICE_PROG_TC_PUNT), TcHook::Ingress);
    if (!tc) {
        detach(device, itf.ifindex);
        return tc;
    }
    auto r = attach_pipeline(device, itf.ifindex, choice, itf.xdp_mode == "auto");
    if (!r) {
        detach(device, itf.ifindex);
        return r.error();
    }
    if (!choice.warning.empty() && r->warning.empty()) r->warning = "interface " + device + ": " + choice.warning;
    if (!r->warning.empty()) daemon_log("warning: " + r->warning);
    Attached a{.itf = itf, .mode = r->mode, .why = choice.why, .warning = r->warning};
    a.itf.name = device;
    attached_[device] = a;
    return {};
}

void InterfaceAttachments::detach(const std::string& device, uint32_t ifindex) {
    if (auto s = detach_xdp(device, ifindex); !s) daemon_log(s.error().message);
    for (TcHook hook : {TcHook::IngressPipeline, TcHook::Egress, TcHook::Ingress})
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
