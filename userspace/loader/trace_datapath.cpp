#include "loader/trace_datapath.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "common/cpu_pin.h"
#include "loader/attach.h"
#include "loader/map_io.h"
#include "loader/nat_reservations.h"
#include "loader/policy_observation.h"

extern "C" {
#include "map_names.h"
}

namespace sluice {
namespace {

// Maps only the controller writes: the trace reads the live ones. Every
// other map is the trace's own, so a map added later is private until it is
// named here (never the other way round).
const std::set<std::string>& live_config_maps() {
    static const std::set<std::string> names = {
        "zones", "runtime_cfg",
        "pol_scopes", "pol_src_v4", "pol_dst_v4", "pol_src_v6", "pol_dst_v6", "pol_port_class", "pol_sport_class",
        "pol_cross", "pol_cross_sparse", "pol_results",
        "nat_dst", "nat_map_in_v4", "nat_map_in_v6", "nat_map_out_v4", "nat_map_out_v6", "nat_src_zones",
        "nat_src_s4", "nat_src_s6", "nat_src_d4", "nat_src_d6", "nat_src_rules", "nat_pools", "nat_ifaddrs",
        "punt_cfg", "punt_rulesets", "host_services", "zone_screens", "ha_groups",
        "egress_cfg", "egress_src_v4", "egress_src_v6", "egress_pfx_v4", "egress_pfx_v6", "egress_learn_v4",
        "egress_learn_v6", "policy_log", "src_released",
    };
    return names;
}

// The trace's own tables hold one trace's worth of state.
constexpr uint32_t kPrivateHashEntries = 4096;

// Sums of a per-CPU array's values, all entries at once.
Result<std::vector<uint64_t>> percpu_array_sums(int fd, uint32_t entries, size_t words) {
    const int cpus = libbpf_num_possible_cpus();
    if (cpus <= 0) return make_error("cannot count CPUs");
    std::vector<uint64_t> sums(size_t(entries) * words, 0), one(size_t(cpus) * words);
    for (uint32_t k = 0; k < entries; ++k) {
        if (bpf_map_lookup_elem(fd, &k, one.data()) != 0) return errno_error("cannot read a per-CPU counter", errno);
        for (size_t i = 0; i < one.size(); ++i) sums[size_t(k) * words + i % words] += one[i];
    }
    return sums;
}

}  // namespace

Result<std::unique_ptr<TraceDatapath>> TraceDatapath::open(const std::string& pin_dir) {
    std::unique_ptr<TraceDatapath> t(new TraceDatapath());
    t->pin_dir_ = pin_dir;
    sluice_bpf* raw = sluice_bpf::open();
    if (!raw) return errno_error("cannot open the BPF object", errno);
    t->skel_.reset(raw);
    t->skel_->rodata->xdp_handoff_in_meta = kernel_allows_xdp_meta() ? 1 : 0;
    bpf_map* map;
    bpf_object__for_each_map(map, t->skel_->obj) {
        const std::string name = bpf_map__name(map);
        if (bpf_map__set_pin_path(map, nullptr) != 0) return make_error("cannot unpin map " + name);
        if (bpf_map__is_internal(map)) continue;
        if (live_config_maps().count(name)) {
            const std::string path = pin_dir + "/" + name;
            int fd = bpf_obj_get(path.c_str());
            if (fd < 0)
                return make_error(ErrorCode::NotFound,
                                  "no pinned map " + path + ": is the instance running (`sluice run`)?");
            t->pinned_fds_.push_back(fd);
            if (int err = bpf_map__reuse_fd(map, fd); err != 0)
                return errno_error("cannot use the live map " + name, -err);
            continue;
        }
        switch (bpf_map__type(map)) {
        case BPF_MAP_TYPE_HASH:
        case BPF_MAP_TYPE_PERCPU_HASH:
        case BPF_MAP_TYPE_LRU_HASH:
        case BPF_MAP_TYPE_LRU_PERCPU_HASH:
            if (name != SLUICE_MAP_NAT_PORTS && bpf_map__max_entries(map) > kPrivateHashEntries)
                bpf_map__set_max_entries(map, kPrivateHashEntries);
            break;
        case BPF_MAP_TYPE_RINGBUF:
            bpf_map__set_max_entries(map, 4096 * 4);
            break;
        default:
            break;
        }
    }
    if (int err = sluice_bpf::load(t->skel_.get()); err != 0)
        return errno_error("cannot load the trace's copy of the BPF programs (ABI of " + pin_dir +
                               " differs from this sluice's? `sluice show stats` would say)",
                           -err);

    // Its own tail-call table and redirect targets.
    const std::pair<uint32_t, bpf_program*> slots[] = {
        {SLUICE_JUMP_ZONE, t->skel_->progs.xdp_zone_prog},         {SLUICE_JUMP_POLICY, t->skel_->progs.xdp_policy_prog},
        {SLUICE_JUMP_NAT, t->skel_->progs.xdp_nat_prog},           {SLUICE_JUMP_FORWARD, t->skel_->progs.xdp_forward_prog},
        {SLUICE_JUMP_SPLICE, t->skel_->progs.xdp_splice_prog},     {SLUICE_JUMP_HOST, t->skel_->progs.xdp_host_prog},
        {SLUICE_JUMP_SYNPROXY, t->skel_->progs.xdp_synproxy_prog},
    };
    for (const auto& [slot, prog] : slots) {
        int fd = bpf_program__fd(prog);
        if (bpf_map_update_elem(bpf_map__fd(t->skel_->maps.jump_table), &slot, &fd, BPF_ANY) != 0)
            return errno_error("cannot fill the trace's jump table", errno);
    }
    std::vector<uint32_t> ports;
    for (const auto& k : map_keys<zone_key>(bpf_map__fd(t->skel_->maps.zones)))
        if (k.vlan_id == 0) ports.push_back(k.ifindex);
    if (auto s = write_devmap(bpf_map__fd(t->skel_->maps.tx_ports), ports); !s) return s.error();
    // NAT's port reservations as they are now: the allocator meets the
    // same occupied ports a live first packet would.
    {
        const std::string path = pin_dir + "/" SLUICE_MAP_NAT_PORTS;
        int live = bpf_obj_get(path.c_str());
        if (live < 0) return make_error(ErrorCode::NotFound, "no pinned map " + path);
        auto held = dump_reservations(live);
        close(live);
        if (!held) return held.error();
        for (const auto& [k, v] : held.value())
            bpf_map_update_elem(bpf_map__fd(t->skel_->maps.nat_ports), &k, &v, BPF_ANY);
    }
    runtime_config cfg{};
    if (auto r = read_runtime_config(bpf_map__fd(t->skel_->maps.runtime_cfg), cfg); !r) return r.error();
    if (cfg.config_generation == 0) return make_error("the instance has applied no config yet");
    t->generation_ = cfg.policy_generation & 1;
    // test_run runs on the calling CPU: stay on one, to read its scratch.
    if (auto s = pin_to_current_cpu(); !s) return with_context("keeping the trace on one CPU", s.error());
    return t;
}

Status TraceDatapath::seed_flow(uint8_t family, const void* key) {
    const char* name = family == SLUICE_FAMILY_IPV4 ? SLUICE_MAP_SESSIONS_V4 : SLUICE_MAP_SESSIONS_V6;
    const std::string path = pin_dir_ + "/" + name;
    int live = bpf_obj_get(path.c_str());
    if (live < 0) return make_error(ErrorCode::NotFound, "no pinned map " + path);
    int mine = bpf_map__fd(family == SLUICE_FAMILY_IPV4 ? skel_->maps.sessions_v4 : skel_->maps.sessions_v6);
    session_value v{};
    Status out;
    if (bpf_map_lookup_elem(live, key, &v) == 0) {
        bpf_map_update_elem(mine, key, &v, BPF_ANY);
        // The other direction, keyed by the reverse of the translated tuple.
        SessionEntry e;
        e.family = family;
        if (family == SLUICE_FAMILY_IPV4) {
            const auto* k = static_cast<const session_key_v4*>(key);
            e.protocol = k->protocol;
            e.src_addr[0] = k->src_addr;
            e.dst_addr[0] = k->dst_addr;
            e.src_port = k->src_port;
            e.dst_port = k->dst_port;
        } else {
            const auto* k = static_cast<const session_key_v6*>(key);
            e.protocol = k->protocol;
            std::memcpy(e.src_addr, k->src_addr, 16);
            std::memcpy(e.dst_addr, k->dst_addr, 16);
            e.src_port = k->src_port;
            e.dst_port = k->dst_port;
        }
        e.value = v;
        const SessionEntry peer = reverse_of(e);
        session_value pv{};
        if (family == SLUICE_FAMILY_IPV4) {
            session_key_v4 pk{peer.src_addr[0], peer.dst_addr[0], peer.src_port, peer.dst_port, peer.protocol, {}};
            if (bpf_map_lookup_elem(live, &pk, &pv) == 0) bpf_map_update_elem(mine, &pk, &pv, BPF_ANY);
        } else {
            session_key_v6 pk{};
            std::memcpy(pk.src_addr, peer.src_addr, 16);
            std::memcpy(pk.dst_addr, peer.dst_addr, 16);
            pk.src_port = peer.src_port;
            pk.dst_port = peer.dst_port;
            pk.protocol = peer.protocol;
            if (bpf_map_lookup_elem(live, &pk, &pv) == 0) bpf_map_update_elem(mine, &pk, &pv, BPF_ANY);
        }
    }
    close(live);
    return out;
}

Result<TraceRun> TraceDatapath::run(const std::vector<uint8_t>& frame, uint32_t ifindex) {
    const int stats = bpf_map__fd(skel_->maps.stats), hits = bpf_map__fd(skel_->maps.policy_hits),
              filters = bpf_map__fd(skel_->maps.filter_hits);
    auto stats0 = read_stat_counters(stats);
    if (!stats0) return stats0.error();
    const uint32_t first_policy = policy_obs_index(generation_, 0);
    auto policies0 = percpu_array_sums(hits, POLICY_OBS_ENTRIES, 3);
    if (!policies0) return policies0.error();
    auto filters0 = percpu_array_sums(filters, POLICY_GENERATIONS * FILTER_MAX_RULES, 2);
    if (!filters0) return filters0.error();
    auto sessions0 = dump_sessions(bpf_map__fd(skel_->maps.sessions_v4), bpf_map__fd(skel_->maps.sessions_v6));
    if (!sessions0) return sessions0.error();

    TraceRun out;
    out.frame_out.resize(std::max<size_t>(frame.size() + 256, 2048));
    xdp_md ctx{};
    ctx.data_end = static_cast<__u32>(frame.size());   // the kernel wants the frame's length here
    ctx.ingress_ifindex = ifindex;
    LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame.data(), .data_out = out.frame_out.data(),
                .data_size_in = static_cast<__u32>(frame.size()),
                .data_size_out = static_cast<__u32>(out.frame_out.size()), .ctx_in = &ctx,
                .ctx_size_in = sizeof(ctx), .repeat = 1);
    if (bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.xdp_main_prog), &opts) != 0)
        return errno_error("cannot run the packet through xdp_main_prog (BPF_PROG_TEST_RUN)", errno);
    out.action = static_cast<int>(opts.retval);
    out.frame_out.resize(opts.data_size_out);

    auto stats1 = read_stat_counters(stats);
    if (!stats1) return stats1.error();
    out.counted.resize(STAT_REASON_COUNT);
    for (int i = 0; i < STAT_REASON_COUNT; ++i) out.counted[i] = stats1.value()[i].packets - stats0.value()[i].packets;
    auto policies1 = percpu_array_sums(hits, POLICY_OBS_ENTRIES, 3);
    if (!policies1) return policies1.error();
    for (uint32_t slot = 0; slot < POLICY_OBS_SLOTS; ++slot) {
        const size_t i = size_t(first_policy + slot) * 3;
        if (policies1.value()[i] != policies0.value()[i]) {
            out.policy_judged = true;
            out.policy_id = slot == POLICY_OBS_DEFAULT ? SESSION_POLICY_RELATED : slot;
        }
    }
    auto filters1 = percpu_array_sums(filters, POLICY_GENERATIONS * FILTER_MAX_RULES, 2);
    if (!filters1) return filters1.error();
    for (uint32_t slot = 0; slot < FILTER_MAX_RULES; ++slot) {
        const size_t i = (size_t(generation_) * FILTER_MAX_RULES + slot) * 2;
        if (filters1.value()[i] != filters0.value()[i]) out.filter_slots.push_back(slot);
    }
    // The scratch of this CPU (the process stays on it).
    const int cpus = libbpf_num_possible_cpus();
    const int cpu = sched_getcpu();
    const size_t stride = (sizeof(packet_ctx) + 7) / 8 * 8;
    std::vector<uint8_t> scratch(stride * size_t(std::max(cpus, 1)));
    const uint32_t zero = 0;
    if (cpu >= 0 && cpu < cpus && bpf_map_lookup_elem(bpf_map__fd(skel_->maps.pkt_scratch), &zero, scratch.data()) == 0)
        std::memcpy(&out.pc, scratch.data() + stride * size_t(cpu), sizeof(packet_ctx));
    auto sessions1 = dump_sessions(bpf_map__fd(skel_->maps.sessions_v4), bpf_map__fd(skel_->maps.sessions_v6));
    if (!sessions1) return sessions1.error();
    for (const auto& e : sessions1.value()) {
        bool known = false;
        for (const auto& b : sessions0.value()) known = known || same_key(e, b);
        if (!known) out.sessions_created.push_back(e);
    }
    return out;
}

}  // namespace sluice
