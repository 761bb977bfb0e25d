#include "daemon/config_applier.h"

#include <set>

#include "config/handoff_features.h"
#include "daemon/daemon_log.h"
#include "daemon/session_size_change.h"
#include "ha/config_hash.h"
#include "loader/punt_tables.h"
#include "pipeline/prepare.h"

extern "C" {
#include "map_names.h"
}

namespace sluice {

Status ConfigApplier::apply(bool initial) {
    problems_.clear();
    warnings_.clear();
    pipeline::PrepareOptions options;
    options.generation = dp_.inactive_generation();
    options.ruleset_ids = [this](const config::Config& c) { return inspection_.stable_ruleset_ids(c); };
    pipeline::Prepared prepared = pipeline::prepare(config_path_, options);
    if (!prepared.ok()) {
        problems_ = prepared.problems;
        return prepared.error();
    }
    pipeline::PreparedConfig& loaded = *prepared.config;
    if (auto s = check_session_size_unchanged(loaded.parsed, dp_.session_capacity()); !s) return s;
    // The HA agent runs the section it started with: its sockets, groups and
    // virtual addresses. Changing it under a running pair is a restart.
    const std::optional<uint32_t> ha = loaded.parsed.ha.enabled ? std::optional(ha::config_hash(loaded.parsed.ha))
                                                                 : std::nullopt;
    if (!initial && ha != ha_hash_)
        return make_error(config_path_ + ": the ha: section differs from the one this node started with; a reload "
                          "cannot change it (restart the node: `sluice down`, then `sluice run`); the running config "
                          "stays");
    // Native XDP hands inspected and SYN-proxied packets to TC in the
    // metadata area; on a kernel that refuses it to XDP a config using them
    // cannot run where native XDP is attached (a restart moves the device).
    const std::string handoff_user = config::first_handoff_user(loaded.parsed);
    if (!handoff_user.empty() && !dp_.xdp_handoff_in_meta()) {
        std::string natives;
        for (const auto& d : attachments_.native_devices()) natives += (natives.empty() ? "" : ", ") + d;
        if (!natives.empty())
            return make_error(config_path_ + ": " + handoff_user + " hands packets from the pipeline to TC, which " +
                              "native XDP does in the metadata area, and this kernel refuses bpf_xdp_adjust_meta " +
                              "to XDP programs; " + natives + " run(s) native XDP: give them xdp-mode: tc (or " +
                              "generic) and restart sluice; the running config stays");
    }
    const CompiledConfig& compiled = loaded.compiled;
    auto resolved = Datapath::resolve(compiled);
    if (!resolved) return resolved.error();
    // The metrics listener and the flow log's output open before the flip.
    if (auto s = observe_.prepare(loaded.parsed); !s) return s;
    if (auto s = dp_.apply(compiled, resolved.value()); !s) {
        observe_.abandon();
        return s;
    }
    // Interfaces the new config adds get attached; ones it dropped, detached.
    std::set<std::string> wanted;
    for (const auto& itf : resolved.value()) {
        wanted.insert(InterfaceAttachments::device_of(itf.name));
        if (auto s = attachments_.attach(itf, !handoff_user.empty()); !s) {
            if (initial) return s;
            warnings_.push_back(s.error().message);
            daemon_log("reload: " + s.error().message);
        }
    }
    attachments_.detach_except(wanted);
    if (auto s = write_punt_rulesets(dp_.map_fd(SLUICE_MAP_PUNT_RULESETS), loaded.parsed); !s) return s;
    if (auto s = inspection_.adopt(loaded.parsed, loaded.rulesets); !s) {
        if (initial) return s;
        warnings_.push_back("inspection stage: " + s.error().message);
        daemon_log("reload: inspection stage: " + s.error().message);
    }
    if (auto s = egress_.adopt(loaded.parsed); !s) {
        if (initial) return s;
        warnings_.push_back(s.error().message);
        daemon_log("reload: " + s.error().message);
    }
    observe_.adopt(loaded.parsed, loaded.compiled);
    applied_ = std::move(loaded.compiled);
    ha_hash_ = ha;
    nat_.adopt(std::move(loaded.parsed.nat), std::move(resolved.value()));
    return {};
}

}  // namespace sluice
