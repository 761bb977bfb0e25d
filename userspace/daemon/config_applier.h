// Applies the config file to the node, at start and on every reload: the
// pipeline prepares it (pipeline/prepare.h) for the datapath's inactive
// generation, then the datapath flips to it and the interfaces, the
// inspection stage and NAT's interface addresses follow. A file refused
// while preparing changes nothing (docs/design.md "Applying a config").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "compiler/compiled_config.h"
#include "config/diagnostics.h"
#include "daemon/egress_host.h"
#include "daemon/inspection_host.h"
#include "daemon/interface_attachments.h"
#include "daemon/nat_address_sync.h"
#include "daemon/observability_host.h"
#include "loader/datapath.h"

namespace sluice {

class ConfigApplier {
public:
    ConfigApplier(std::string config_path, Datapath& dp, InterfaceAttachments& attachments,
                  InspectionHost& inspection, EgressHost& egress, NatAddressSync& nat, ObservabilityHost& observe)
        : config_path_(std::move(config_path)), dp_(dp), attachments_(attachments), inspection_(inspection),
          egress_(egress), nat_(nat), observe_(observe) {}

    // `initial`: at start, where an interface that does not attach or a stage
    // that does not start fails the whole start. On a reload they become
    // warnings() and the rest of the new config stays in force.
    Status apply(bool initial);

    const std::string& config_path() const { return config_path_; }
    const CompiledConfig& applied() const { return applied_; }
    // Of the last apply(): every problem of a refused file, and what did not
    // take of an applied one.
    const std::vector<config::Diagnostic>& problems() const { return problems_; }
    const std::vector<std::string>& warnings() const { return warnings_; }

private:
    std::string config_path_;
    Datapath& dp_;
    InterfaceAttachments& attachments_;
    InspectionHost& inspection_;
    EgressHost& egress_;
    NatAddressSync& nat_;
    ObservabilityHost& observe_;
    CompiledConfig applied_;
    std::optional<uint32_t> ha_hash_;  // the ha: section it started with (none: no section)
    std::vector<config::Diagnostic> problems_;
    std::vector<std::string> warnings_;
};

}  // namespace sluice
