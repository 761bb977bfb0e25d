#include "loader/datapath.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "loader/attach.h"
#include "loader/instance_paths.h"
#include "loader/map_io.h"
#include "loader/policy_observation.h"
#include "loader/peer_ports.h"
#include "loader/egress_tables.h"
#include "loader/host_inbound_tables.h"
#include "loader/nat_tables.h"
#include "loader/pin_abi.h"
#include "loader/session_maps_size.h"

namespace sluice {

Result<std::unique_ptr<Datapath>> Datapath::open(const DatapathOptions& options) {
    std::unique_ptr<Datapath> dp(new Datapath());
    dp->pin_dir_ = options.pin_dir;
    if (!options.pin_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(options.pin_dir, ec);
        if (ec) return make_error("cannot create pin directory " + options.pin_dir + ": " + ec.message());
        if (auto s = check_pin_abi(options.pin_dir); !s) return s.error();
    }

    LIBBPF_OPTS(bpf_object_open_opts, open_opts);
    if (!options.pin_dir.empty()) open_opts.pin_root_path = dp->pin_dir_.c_str();
    sluice_bpf* raw = sluice_bpf::open(&open_opts);
    if (!raw) return errno_error("cannot open the BPF object", errno);
    dp->skel_.reset(raw);

    if (options.pin_dir.empty()) {
        bpf_map* map;
        bpf_object__for_each_map(map, dp->skel_->obj) {
            if (bpf_map__set_pin_path(map, nullptr) != 0)
                return make_error(std::string("cannot unpin map ") + bpf_map__name(map));
        }
    }
    // Some kernels refuse bpf_xdp_adjust_meta to XDP programs (a program
    // calling it does not load): the pipeline then hands punted packets to
    // TC through a per-CPU slot (bpf/hook.bpf.h), which only generic XDP and
    // the tc mode can use.
    dp->xdp_handoff_in_meta_ = kernel_allows_xdp_meta();
    dp->skel_->rodata->xdp_handoff_in_meta = dp->xdp_handoff_in_meta_ ? 1 : 0;
    // Before load: libbpf creates (or reuses the pins of) the maps at load.
    if (auto s = size_session_maps(dp->skel_->obj, options.sessions, options.pin_dir, options.sessions_origin); !s) return s.error();
    if (auto s = cap_state_maps(dp->skel_->obj, options.state_map_cap, options.pin_dir); !s) return s.error();
    int err = sluice_bpf::load(dp->skel_.get());
    if (err != 0) {
        std::string hint = options.pin_dir.empty()
                               ? ""
                               : " (if maps pinned under " + options.pin_dir +
                                     " come from an incompatible sluice version, run `sluice down`)";
        Error e = errno_error("cannot load the BPF programs", err);
        e.message += hint;
        return e;
    }
    if (!options.pin_dir.empty()) {
        if (auto s = record_pin_abi(options.pin_dir); !s) return s.error();
    }

    // First load: a runtime config that is valid before any policy is applied.
    runtime_config cfg{};
    if (auto r = read_runtime_config(dp->map_fd("runtime_cfg"), cfg); !r) return r.error();
    if (cfg.fib_generation == 0) {
        cfg.fib_generation = 1;
        cfg.default_action = POLICY_ACTION_DENY;
        if (auto w = write_runtime_config(dp->map_fd("runtime_cfg"), cfg); !w) return w.error();
    }
    return dp;
}

int Datapath::map_fd(std::string_view name) const {
    bpf_map* map = bpf_object__find_map_by_name(skel_->obj, std::string(name).c_str());
    return map ? bpf_map__fd(map) : -1;
}

uint32_t Datapath::session_capacity() const {
    return bpf_map__max_entries(skel_->maps.sessions_v4) / 2;
}

int Datapath::prog_fd(std::string_view name) const {
    bpf_program* prog = bpf_object__find_program_by_name(skel_->obj, std::string(name).c_str());
    if (!prog && tc_skel_) prog = bpf_object__find_program_by_name(tc_skel_->obj, std::string(name).c_str());
    return prog ? bpf_program__fd(prog) : -1;
}

std::vector<std::string> Datapath::program_names() const {
    std::vector<std::string> names;
    bpf_program* prog;
    bpf_object__for_each_program(prog, skel_->obj) names.emplace_back(bpf_program__name(prog));
    if (tc_skel_) bpf_object__for_each_program(prog, tc_skel_->obj) names.emplace_back(bpf_program__name(prog));
    return names;
}

Status Datapath::load_tc() {
    if (tc_skel_) return {};
    TcSkeletonPtr tc(sluice_tc::open());
    if (!tc) return errno_error("cannot open the TC build of the BPF object", errno);
    // Every map but its tail-call table (a program array holds one program
    // type) and its own globals is this object's: reused by fd, pinned or not.
    bpf_map* map;
    bpf_object__for_each_map(map, tc->obj) {
        const std::string name = bpf_map__name(map);
        if (bpf_map__set_pin_path(map, nullptr) != 0) return make_error("cannot unpin TC map " + name);
        if (map == tc->maps.tc_jump_table) {
            // Pinned like the XDP build's jump_table: the kernel empties a
            // program array when no process or pin holds it, so without the
            // pin the attached pipeline would lose its stages when the daemon
            // dies (kill -9) — and a restart rewires the same table.
            if (!pin_dir_.empty() && bpf_map__set_pin_path(map, (pin_dir_ + "/" + name).c_str()) != 0)
                return make_error("cannot pin TC map " + name);
            continue;
        }
        if (bpf_map__is_internal(map)) continue;
        bpf_map* ours = bpf_object__find_map_by_name(skel_->obj, name.c_str());
        if (!ours) return make_error("internal: the TC build has a map the XDP build does not: " + name);
        if (int err = bpf_map__reuse_fd(map, bpf_map__fd(ours)); err != 0)
            return errno_error("cannot hand map " + name + " to the TC build", err);
    }
    if (int err = sluice_tc::load(tc.get()); err != 0) return errno_error("cannot load the TC build of the BPF programs", err);
    tc_skel_ = std::move(tc);
    return wire_tc_jump_table();
}

Status Datapath::wire_jump_table() {
    struct Slot {
        uint32_t slot;
        bpf_program* prog;
    } slots[] = {
        {SLUICE_JUMP_ZONE, skel_->progs.xdp_zone_prog},
        {SLUICE_JUMP_POLICY, skel_->progs.xdp_policy_prog},
        {SLUICE_JUMP_NAT, skel_->progs.xdp_nat_prog},
        {SLUICE_JUMP_FORWARD, skel_->progs.xdp_forward_prog},
        {SLUICE_JUMP_SPLICE, skel_->progs.xdp_splice_prog},
        {SLUICE_JUMP_HOST, skel_->progs.xdp_host_prog},
        {SLUICE_JUMP_SYNPROXY, skel_->progs.xdp_synproxy_prog},
    };
    int fd = bpf_map__fd(skel_->maps.jump_table);
    for (const auto& s : slots) {
        int prog = bpf_program__fd(s.prog);
        if (bpf_map_update_elem(fd, &s.slot, &prog, BPF_ANY) != 0)
            return errno_error("cannot fill jump_table slot " + std::to_string(s.slot), errno);
    }
    return tc_skel_ ? wire_tc_jump_table() : Status{};
}

Status Datapath::wire_tc_jump_table() {
    const auto& p = tc_skel_->progs;
    const std::pair<uint32_t, bpf_program*> slots[] = {
        {SLUICE_JUMP_ZONE, p.tc_zone_prog},     {SLUICE_JUMP_POLICY, p.tc_policy_prog},
        {SLUICE_JUMP_NAT, p.tc_nat_prog},       {SLUICE_JUMP_FORWARD, p.tc_forward_prog},
        {SLUICE_JUMP_SPLICE, p.tc_splice_prog}, {SLUICE_JUMP_HOST, p.tc_host_prog},
        {SLUICE_JUMP_SYNPROXY, p.tc_synproxy_prog},
    };
    int fd = bpf_map__fd(tc_skel_->maps.tc_jump_table);
    for (const auto& [slot, prog] : slots) {
        int prog_fd = bpf_program__fd(prog);
        if (bpf_map_update_elem(fd, &slot, &prog_fd, BPF_ANY) != 0)
            return errno_error("cannot fill tc_jump_table slot " + std::to_string(slot), errno);
    }
    return {};
}

uint8_t Datapath::inactive_generation() const {
    runtime_config cfg{};
    if (!read_runtime_config(map_fd("runtime_cfg"), cfg)) return 0;
    if (cfg.config_generation == 0) return 0;
    return static_cast<uint8_t>((cfg.policy_generation & 1) ^ 1);
}

Result<std::vector<ResolvedInterface>> Datapath::resolve(const CompiledConfig& config) {
    std::vector<ResolvedInterface> out;
    std::string missing;
    for (const auto& itf : config.interfaces) {
        ResolvedInterface r{.name = itf.name, .vlan_id = itf.vlan_id, .zone_id = itf.zone_id,
                            .filter_id = itf.filter_id, .xdp_mode = itf.xdp_mode, .ha_group = itf.ha_group};
        const std::string& attach_name = itf.parent.empty() ? itf.name : itf.parent;
        r.ifindex = if_nametoindex(attach_name.c_str());
        if (r.ifindex == 0) {
            missing += (missing.empty() ? "" : "\n") + (itf.where.empty() ? "" : itf.where + ": ") +
                       "interface " + attach_name + " does not exist in this network namespace";
            continue;
        }
        if (!itf.parent.empty()) r.vlan_ifindex = if_nametoindex(itf.name.c_str());
        out.push_back(r);
    }
    if (!missing.empty()) return make_error(missing);
    return out;
}

Status Datapath::apply(const CompiledConfig& config, const std::vector<ResolvedInterface>& interfaces) {
    const auto& t = config.tables;
    const uint8_t gen = t.generation;
    runtime_config cfg{};
    if (auto r = read_runtime_config(map_fd("runtime_cfg"), cfg); !r) return r;
    if (cfg.config_generation != 0 && gen == (cfg.policy_generation & 1))
        return make_error("internal: config compiled for the active generation");

    // 1. The inactive generation: clear, then fill (classifier, then NAT).
    for (const char* name :
         {"pol_scopes", "pol_src_v4", "pol_dst_v4", "pol_src_v6", "pol_dst_v6", "pol_cross_sparse"}) {
        if (auto s = delete_generation(map_fd(name), name, gen); !s) return s;
    }
    if (auto s = write_entries(map_fd("pol_scopes"), "pol_scopes", t.scopes); !s) return s;
    if (auto s = write_entries(map_fd("pol_src_v4"), "pol_src_v4", t.src_v4); !s) return s;
    if (auto s = write_entries(map_fd("pol_dst_v4"), "pol_dst_v4", t.dst_v4); !s) return s;
    if (auto s = write_entries(map_fd("pol_src_v6"), "pol_src_v6", t.src_v6); !s) return s;
    if (auto s = write_entries(map_fd("pol_dst_v6"), "pol_dst_v6", t.dst_v6); !s) return s;
    const uint32_t port_base = uint32_t(gen) * POLICY_PROTO_SLOTS * POLICY_PORTS;
    if (auto s = write_array(map_fd("pol_port_class"), "pol_port_class", port_base, t.port_class); !s) return s;
    if (auto s = write_array(map_fd("pol_sport_class"), "pol_sport_class", port_base, t.sport_class); !s) return s;
    if (auto s = write_array(map_fd("pol_cross"), "pol_cross", t.cross_first, t.cross); !s) return s;
    if (auto s = write_entries(map_fd("pol_cross_sparse"), "pol_cross_sparse", t.sparse); !s) return s;
    if (auto s = write_array(map_fd("pol_results"), "pol_results", uint32_t(gen) * CLASSIFIER_MAX_RESULTS, t.results);
        !s)
        return s;
    uint32_t filter_rules = 0;
    for (const auto& f : config.filters) filter_rules += static_cast<uint32_t>(f.rules.size());
    if (auto s = zero_percpu(map_fd("filter_hits"), "filter_hits", uint32_t(gen) * FILTER_MAX_RULES, filter_rules,
                             sizeof(filter_rule_counter));
        !s)
        return s;
    if (config.nat.generation != gen) return make_error("internal: NAT tables compiled for another generation");
    if (auto s = write_nat_generation(*this, config.nat); !s) return s;
    if (auto s = write_host_inbound_generation(*this, config.host_inbound, gen); !s) return s;
    if (config.screens.size() != SLUICE_MAX_ZONES) return make_error("internal: zone screens not compiled");
    if (auto s = write_array(map_fd(SLUICE_MAP_ZONE_SCREENS), SLUICE_MAP_ZONE_SCREENS, uint32_t(gen) * SLUICE_MAX_ZONES,
                             config.screens);
        !s)
        return s;
    if (auto s = zero_percpu(map_fd(SLUICE_MAP_SCREEN_HITS), SLUICE_MAP_SCREEN_HITS, uint32_t(gen) * SLUICE_MAX_ZONES,
                             SLUICE_MAX_ZONES, sizeof(screen_counter));
        !s)
        return s;
    if (auto s = write_egress_tables(*this, config.egress); !s) return s;
    if (auto s = write_policy_observation(*this, config, gen); !s) return s;

    // 2. Interfaces: zone bindings and redirect targets (added before the
    //    flip, stale ones removed after it).
    std::vector<std::pair<zone_key, zone_value>> bindings;
    std::vector<uint32_t> ports;
    for (const auto& itf : interfaces) {
        zone_value zv{.zone_id = itf.zone_id, .filter_id = itf.filter_id, .ha_group = itf.ha_group, .pad = {}};
        bindings.push_back({zone_key{.ifindex = itf.ifindex, .vlan_id = itf.vlan_id, .pad = 0}, zv});
        if (itf.vlan_ifindex)
            bindings.push_back({zone_key{.ifindex = itf.vlan_ifindex, .vlan_id = 0, .pad = 0}, zv});
        if (itf.vlan_id == 0) ports.push_back(itf.ifindex);
    }
    if (auto s = write_entries(map_fd("zones"), "zones", bindings); !s) return s;
    if (auto s = write_devmap(map_fd("tx_ports"), ports); !s) return s;
    auto peers = veth_ports_with_remote_peer(ports);
    if (!peers) return peers.error();
    if (auto s = write_peer_ports(map_fd(SLUICE_MAP_PEER_PORTS), peers.value()); !s) return s;

    // 3. The flip: one write of runtime_cfg makes everything above active.
    cfg.policy_generation = gen;
    cfg.classifier[gen] = t.layout;
    cfg.default_action = static_cast<uint8_t>(config.default_action);
    cfg.flow_log = config.flow_log ? 1 : 0;
    cfg.flow_log_interval_ns = config.flow_log_interval_ns;
    cfg.flow_log_tolerance_ns = config.flow_log_tolerance_ns;
    for (int i = 0; i < TIMEOUT_CLASS_COUNT; ++i) cfg.timeout_ns[i] = config.timeout_ns[i];
    cfg.config_generation += 1;
    cfg.fib_generation += 1;  // zone bindings may have moved: recheck egress
    if (cfg.fib_generation == 0) cfg.fib_generation = 1;
    if (auto s = write_runtime_config(map_fd("runtime_cfg"), cfg); !s) return s;

    // 4. Bindings and ports the new config no longer has.
    if (auto s = prune_zones(map_fd("zones"), bindings); !s) return s;
    if (auto s = prune_devmap(map_fd("tx_ports"), ports); !s) return s;
    if (auto s = prune_egress_tables(*this, config.egress); !s) return s;
    // A session may have cached "egress is in tx_ports" (SESSION_FIB_XMIT)
    // for a port just pruned, between the flip and the prune: one more
    // generation makes every cached result be taken again.
    if (auto s = bump_fib_generation(); !s) return s;

    // 5. Only now do this process's programs take over the tail calls (after
    //    a restart the old xdp_main_prog, still attached, jumps into them):
    //    their unpinned tx_ports is filled.
    return wire_jump_table();
}

Status Datapath::bump_fib_generation() {
    runtime_config cfg{};
    if (auto r = read_runtime_config(map_fd("runtime_cfg"), cfg); !r) return r;
    cfg.fib_generation += 1;
    if (cfg.fib_generation == 0) cfg.fib_generation = 1;
    return write_runtime_config(map_fd("runtime_cfg"), cfg);
}

Status Datapath::pin_programs() const {
    if (pin_dir_.empty()) return {};
    std::string dir = pin_dir_ + "/progs";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    for (bpf_object* obj : {skel_->obj, tc_skel_ ? tc_skel_->obj : nullptr}) {
        if (!obj) continue;
        bpf_program* prog;
        bpf_object__for_each_program(prog, obj) {
            std::string path = dir + "/" + bpf_program__name(prog);
            unlink(path.c_str());
            if (bpf_program__pin(prog, path.c_str()) != 0)
                return errno_error("cannot pin program at " + path, errno);
        }
    }
    return {};
}

Status remove_pins(const std::string& pin_dir) { return remove_instance_dir(pin_dir); }

}  // namespace sluice
