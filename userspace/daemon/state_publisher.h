// What the daemon publishes about itself: state.json under the instance's
// state directory (read by `show`, `down`, and still there when the daemon
// is not) and the `status` reply of the control socket. One function builds
// it from the daemon's parts, so both say the same.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/compiled_config.h"
#include "daemon/egress_host.h"
#include "daemon/inspection_host.h"
#include "daemon/interface_attachments.h"
#include "daemon/nat_address_sync.h"
#include "daemon/published_state.h"
#include "loader/datapath.h"

namespace sluice {

struct StateSources {
    const std::string& instance;
    const std::string& config_path;
    const std::string& pin_dir;
    const Datapath& datapath;
    uint64_t reloads;
    const state::LastReload& last_reload;
    const CompiledConfig& applied;
    const InterfaceAttachments& attachments;
    const NatAddressSync& nat;
    const InspectionHost& inspection;
    const EgressHost& egress;
};

state::PublishedState published_state(const StateSources& sources);

}  // namespace sluice
