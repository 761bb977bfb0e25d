#include "daemon/inspection_host.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "daemon/daemon_log.h"

extern "C" {
#include "map_names.h"
#include "punt.h"
}

namespace sluice {

Result<std::map<std::string, uint16_t>> InspectionHost::stable_ruleset_ids(const config::Config& c) const {
    std::map<std::string, uint16_t> ids;
    std::set<uint16_t> taken;
    for (const auto& r : c.rulesets)
        if (auto it = ruleset_ids_.find(r.name); it != ruleset_ids_.end()) taken.insert(ids[r.name] = it->second);
    uint16_t fresh = next_ruleset_id_, reuse = 1;
    for (const auto& r : c.rulesets) {
        if (ids.count(r.name)) continue;
        uint16_t id = 0;
        if (fresh < SLUICE_MAX_RULESETS) {
            id = fresh++;
        } else {
            while (reuse < SLUICE_MAX_RULESETS && taken.count(reuse)) ++reuse;
            if (reuse >= SLUICE_MAX_RULESETS)
                return make_error("more than " + std::to_string(SLUICE_MAX_RULESETS - 1) + " inspect rulesets");
            id = reuse;
        }
        taken.insert(ids[r.name] = id);
    }
    return ids;
}

Status InspectionHost::adopt(const config::Config& applied, std::shared_ptr<const inspect::CompiledRulesets> rulesets) {
    ruleset_ids_ = applied.ruleset_ids;
    for (const auto& [name, id] : ruleset_ids_) next_ruleset_id_ = std::max<uint16_t>(next_ruleset_id_, id + 1);
    udp_idle_ = applied.timeouts.udp;
    rulesets_ = std::move(rulesets);
    ruleset_configs_ = applied.rulesets;
    return sync();
}

void InspectionHost::update_egress_policy(std::shared_ptr<const config::Egress> policy) {
    if (rulesets_ && rulesets_->egress_policy) rulesets_->egress_policy->policy.store(std::move(policy));
}

Status InspectionHost::hold(bool held) {
    held_ = held;
    ++changes_;
    return sync();
}

void InspectionHost::check_load() {
    if (stage_) stage_->check_load();
}

Status InspectionHost::sync() {
    if (!rulesets_ || (rulesets_->rulesets.empty() && rulesets_->sni_gates.empty()) || held_) {
        if (stage_)
            daemon_log(held_ ? "inspection stage stopped by the operator: punted flows get their ruleset's fail-mode"
                             : "inspection stage stopped: the config has no inspect rulesets or egress verify-sni");
        stage_.reset();
        return {};
    }
    if (stage_) {
        stage_->update_rulesets(rulesets_);
        return {};
    }
    inspect::StageOptions options;
    options.sessions_v4_fd = dp_.map_fd(SLUICE_MAP_SESSIONS_V4);
    options.sessions_v6_fd = dp_.map_fd(SLUICE_MAP_SESSIONS_V6);
    options.punt_cfg_fd = dp_.map_fd(SLUICE_MAP_PUNT_CFG);
    options.counters_path = paths_.inspect_counters_file();
    std::error_code ec;
    std::filesystem::create_directories(paths_.state_dir, ec);  // the counters file lives there
    options.udp_idle_ns = static_cast<uint64_t>(udp_idle_.count());
    auto stage = inspect::Stage::start(options, rulesets_);
    if (!stage) return stage.error();
    stage_ = std::move(stage.value());
    daemon_log("inspection stage running: " + std::to_string(stage_->worker_count()) + " workers, " +
               std::to_string(rulesets_->rulesets.size()) + " rulesets, " +
               std::to_string(std::count_if(rulesets_->sni_gates.begin(), rulesets_->sni_gates.end(),
                                            [](const auto& g) { return g != nullptr; })) +
               " egress SNI checks, " +
               std::to_string(rulesets_->pattern_count()) + " patterns");
    return {};
}

state::Inspect InspectionHost::published() const {
    state::Inspect out;
    out.running = stage_ != nullptr;
    out.held_by_operator = held_;
    out.changes = changes_;
    out.counters = paths_.inspect_counters_file();
    if (stage_) {
        out.workers = static_cast<uint32_t>(stage_->worker_count());
        out.tcp_port = stage_->ports().tcp;
        out.udp_port = stage_->ports().udp;
    }
    static const char* directions[] = {"client-to-server", "server-to-client", "both"};
    static const char* actions[] = {"reject", "drop", "alert"};
    for (const auto& r : ruleset_configs_) {
        auto id = ruleset_ids_.find(r.name);
        state::InspectRuleset rs;
        rs.name = r.name;
        rs.id = id == ruleset_ids_.end() ? uint16_t{0} : id->second;
        rs.fail_mode = r.fail_closed ? "closed" : "open";
        if (r.inspect_bytes) rs.inspect_bytes = *r.inspect_bytes;
        for (const auto& p : r.patterns)
            rs.patterns.push_back({p.name, p.regex, directions[static_cast<int>(p.direction)],
                                   actions[static_cast<int>(p.action)], p.caseless});
        out.rulesets.push_back(std::move(rs));
    }
    return out;
}

}  // namespace sluice
