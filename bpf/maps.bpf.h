/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every map of the datapath. Types come from maps/ (the shared ABI); names from
 * maps/map_names.h. All but tx_ports are pinned by name so a restarted
 * controller reuses them (sessions survive) and `sluice show` reads them.
 */
#ifndef SLUICE_BPF_MAPS_H
#define SLUICE_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sluice_maps.h"
#include "packet_ctx.h"

_Static_assert(STAT_REASON_COUNT <= 256, "packet_ctx.synproxy_refusal keeps a stat_reason in a byte");

/* Both directions of every IPv4 flow, keyed by the tuple on the wire. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_MAX_SESSIONS);
	__type(key, struct session_key_v4);
	__type(value, struct session_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sessions_v4 SEC(".maps");

/* Both directions of every IPv6 flow, keyed by the tuple on the wire. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_MAX_SESSIONS);
	__type(key, struct session_key_v6);
	__type(value, struct session_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} sessions_v6 SEC(".maps");

/* (ifindex, VLAN id) → zone. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_MAX_INTERFACES * 4);
	__type(key, struct zone_key);
	__type(value, struct zone_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} zones SEC(".maps");

/* Egress interfaces XDP may redirect to; anything else goes through the kernel.
 * Not pinned: the kernel adds BPF_F_RDONLY_PROG to a devmap's flags, so libbpf
 * 1.1 never finds a pinned one compatible; the controller refills it from the
 * config on every start before the programs take over. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, SLUICE_MAX_INTERFACES);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} tx_ports SEC(".maps");

/* The tx_ports that are veth devices with their peer in another network
 * namespace (loader/peer_ports.h): the TC pipeline hands a packet for one
 * straight to the peer's receive path. Refilled with tx_ports; not pinned. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_MAX_INTERFACES);
	__type(key, __u32);
	__type(value, __u32);
} peer_ports SEC(".maps");

/* Classifier (maps/policy.h): (scope, generation) → scope class per group. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct classifier_scope_key);
	__type(value, struct classifier_classes);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} pol_scopes SEC(".maps");

/* Classifier: longest source/destination prefix → address class per group. */
#define POL_LPM(name, key_t)                                                     \
	struct {                                                                 \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);                             \
		__uint(max_entries, 262144);                                     \
		__uint(map_flags, BPF_F_NO_PREALLOC);                            \
		__type(key, key_t);                                              \
		__type(value, struct classifier_classes);                        \
		__uint(pinning, LIBBPF_PIN_BY_NAME);                             \
	} name SEC(".maps")

POL_LPM(pol_src_v4, struct policy_lpm_key_v4);
POL_LPM(pol_dst_v4, struct policy_lpm_key_v4);
POL_LPM(pol_src_v6, struct policy_lpm_key_v6);
POL_LPM(pol_dst_v6, struct policy_lpm_key_v6);

/* Classifier: (generation, protocol slot, destination port / type) → class per group. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, POLICY_PORT_CLASS_ENTRIES);
	__type(key, __u32);
	__type(value, struct classifier_classes);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} pol_port_class SEC(".maps");

/* Classifier: (generation, protocol slot, source port) → class per group. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, POLICY_PORT_CLASS_ENTRIES);
	__type(key, __u32);
	__type(value, struct classifier_classes);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} pol_sport_class SEC(".maps");

/* Classifier: the cross-product tables of both generations
 * (runtime_config.classifier says where each one starts). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CLASSIFIER_CROSS_ENTRIES);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} pol_cross SEC(".maps");

/* Classifier: the non-empty entries of sparse cross tables (width 0). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, POLICY_GENERATIONS * CLASSIFIER_SPARSE_PER_GEN);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct classifier_sparse_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} pol_cross_sparse SEC(".maps");

/* Classifier: result id → the deciding rule and the filter rules to count. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, POLICY_GENERATIONS * CLASSIFIER_MAX_RESULTS);
	__type(key, __u32);
	__type(value, struct classifier_result);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} pol_results SEC(".maps");

/* Stateless filters: packets and bytes per filter rule, per generation. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, POLICY_GENERATIONS * FILTER_MAX_RULES);
	__type(key, __u32);
	__type(value, struct filter_rule_counter);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} filter_hits SEC(".maps");

/* First-fragment records; losing one only drops that datagram's tail, so LRU. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_MAX_FRAGMENTS);
	__type(key, struct frag_key_v4);
	__type(value, struct frag_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} frags_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_MAX_FRAGMENTS);
	__type(key, struct frag_key_v6);
	__type(value, struct frag_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} frags_v6 SEC(".maps");

/* Per-CPU verdicts for flows that got no session (maps/flow_cache.h). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, SLUICE_FLOW_CACHE_SIZE);
	__type(key, struct flow_cache_key);
	__type(value, struct flow_cache_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} flow_cache SEC(".maps");

/* Written by the controller, read by every program. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct runtime_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} runtime_cfg SEC(".maps");

/* ---- address translation (maps/nat.h) ---- */
#define NAT_HASH(name, key_t, value_t, entries)                                  \
	struct {                                                                 \
		__uint(type, BPF_MAP_TYPE_HASH);                                 \
		__uint(max_entries, entries);                                    \
		__uint(map_flags, BPF_F_NO_PREALLOC);                            \
		__type(key, key_t);                                              \
		__type(value, value_t);                                          \
		__uint(pinning, LIBBPF_PIN_BY_NAME);                             \
	} name SEC(".maps")
#define NAT_LPM(name, key_t, value_t, entries)                                   \
	struct {                                                                 \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);                             \
		__uint(max_entries, entries);                                    \
		__uint(map_flags, BPF_F_NO_PREALLOC);                            \
		__type(key, key_t);                                              \
		__type(value, value_t);                                          \
		__uint(pinning, LIBBPF_PIN_BY_NAME);                             \
	} name SEC(".maps")

NAT_HASH(nat_dst, struct nat_dst_key, struct nat_dst_value, NAT_GENERATIONS * NAT_MAX_DESTINATION_RULES);
NAT_LPM(nat_map_in_v4, struct policy_lpm_key_v4, struct nat_prefix_value, NAT_GENERATIONS * NAT_MAX_PREFIX_RULES);
NAT_LPM(nat_map_in_v6, struct policy_lpm_key_v6, struct nat_prefix_value, NAT_GENERATIONS * NAT_MAX_PREFIX_RULES);
NAT_LPM(nat_map_out_v4, struct policy_lpm_key_v4, struct nat_prefix_value, NAT_GENERATIONS * NAT_MAX_PREFIX_RULES);
NAT_LPM(nat_map_out_v6, struct policy_lpm_key_v6, struct nat_prefix_value, NAT_GENERATIONS * NAT_MAX_PREFIX_RULES);
NAT_HASH(nat_src_zones, struct policy_zone_pair_key, struct nat_rule_bits, 8192);
NAT_LPM(nat_src_s4, struct policy_lpm_key_v4, struct nat_rule_bits, 65536);
NAT_LPM(nat_src_s6, struct policy_lpm_key_v6, struct nat_rule_bits, 65536);
NAT_LPM(nat_src_d4, struct policy_lpm_key_v4, struct nat_rule_bits, 65536);
NAT_LPM(nat_src_d6, struct policy_lpm_key_v6, struct nat_rule_bits, 65536);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NAT_GENERATIONS * NAT_MAX_SOURCE_RULES);
	__type(key, __u32);
	__type(value, struct nat_source_rule);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} nat_src_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NAT_GENERATIONS * NAT_POOL_SLOTS);
	__type(key, __u32);
	__type(value, struct nat_pool);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} nat_pools SEC(".maps");

NAT_HASH(nat_ifaddrs, __u32, struct nat_ifaddr, SLUICE_MAX_INTERFACES);

/* Port reservations: preallocated, inserts happen on the first packet. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NAT_MAX_PORT_RESERVATIONS);
	__type(key, struct nat_port_key);
	__type(value, struct nat_port_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} nat_ports SEC(".maps");

/* Per-reason packet and byte counters (maps/stats.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_REASON_COUNT);
	__type(key, __u32);
	__type(value, struct stat_counter);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} stats SEC(".maps");

/* Observability (maps/observe.h): what each policy decided, which events it
 * logs, the flow events for the daemon and the log's rate limit. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, POLICY_OBS_ENTRIES);
	__type(key, __u32);
	__type(value, struct policy_counter);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} policy_hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, POLICY_OBS_ENTRIES);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} policy_log SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, FLOW_EVENTS_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} flow_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct flow_log_limit);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} flow_log_limit SEC(".maps");

/* Drop capture (maps/observe.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct capture_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} capture_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct capture_scratch);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} capture_sample SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} capture_events SEC(".maps");

/* Tail-call targets (enum sluice_jump_slot). A program array holds programs
 * of one type, so the TC build of the pipeline (hook.bpf.h) has its own. */
#ifdef SLUICE_HOOK_TC
#define jump_table tc_jump_table
#endif
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, SLUICE_JUMP_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} jump_table SEC(".maps");

/* The pipeline's hand-off to tc_punt_prog where no metadata area carries it
 * (hook.bpf.h handoff_slot: the TC pipeline, and generic XDP on a kernel that
 * refuses bpf_xdp_adjust_meta): one record per CPU, written just before the
 * pipeline passes the packet on, read and cleared by tc_punt_prog when the
 * same packet reaches it. ifindex and len say which packet it was written
 * for: a record no filter took (tc_punt_prog not attached, the packet
 * dropped on the way) is never read as another packet's. Not pinned: the
 * loader hands this object's map to the TC build by fd. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tc_handoff);
} tc_handoff SEC(".maps");

/* Parsed packet handed from one tail-called program to the next. Slot 0 is
 * XDP's, slot 1 TC egress's, slot 2 TC ingress's: a softirq (XDP, TC
 * ingress) can interrupt TC egress running in process context on one CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, struct packet_ctx);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} pkt_scratch SEC(".maps");

/* Where session_create builds a new flow's entries: a session_value (144
 * bytes) on the stack would leave the first-packet program none to spare.
 * Only the first-packet path uses it, so one slot per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct session_value);
} session_build SEC(".maps");

/* The inspection stage as the fast path sees it (maps/punt.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct punt_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} punt_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_MAX_RULESETS);
	__type(key, __u32);
	__type(value, struct punt_ruleset);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} punt_rulesets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLUICE_MAX_RULESETS);
	__type(key, __u32);
	__type(value, struct punt_ruleset_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} punt_stats SEC(".maps");

/* ---- host-inbound (maps/host_inbound.h) ---- */
/* (zone or catalog, protocol, port, generation) → service id. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HOST_SERVICE_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct host_service_key);
	__type(value, struct host_service_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} host_services SEC(".maps");

/* Flows the firewall opened, keyed by their replies' tuple. LRU: a flow that
 * is pushed out only loses its replies, as an expired one does. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_MAX_HOST_FLOWS);
	__type(key, struct session_key_v4);
	__type(value, struct host_flow_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} host_flows_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_MAX_HOST_FLOWS);
	__type(key, struct session_key_v6);
	__type(value, struct host_flow_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} host_flows_v6 SEC(".maps");

/* Accepted and dropped packets per (generation, zone, service). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HOST_HITS_ENTRIES);
	__type(key, __u32);
	__type(value, struct host_inbound_counter);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} host_hits SEC(".maps");

/* ---- screens (maps/screen.h) ---- */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * SLUICE_MAX_ZONES);
	__type(key, __u32);
	__type(value, struct zone_screen);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} zone_screens SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_MAX_ZONES);
	__type(key, __u32);
	__type(value, struct zone_syn_rate);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} zone_syn_rates SEC(".maps");

/* Per (generation, zone); zeroed for a generation when a config is applied to it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * SLUICE_MAX_ZONES);
	__type(key, __u32);
	__type(value, struct screen_counter);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} screen_hits SEC(".maps");

#define LIMIT_LRU(name, value_t)                                                 \
	struct {                                                                 \
		__uint(type, BPF_MAP_TYPE_LRU_HASH);                             \
		__uint(max_entries, SLUICE_MAX_LIMITED_ADDRESSES);               \
		__type(key, struct address_limit_key);                           \
		__type(value, value_t);                                          \
		__uint(pinning, LIBBPF_PIN_BY_NAME);                             \
	} name SEC(".maps")

/* Per-address limits of the zones' screens (maps/screen.h). */
LIMIT_LRU(src_limits, struct address_limit);
LIMIT_LRU(dst_limits, struct address_limit);
LIMIT_LRU(scan_sources, struct scan_state);
/* Sessions of each source the controller's GC expired (only it writes). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLUICE_MAX_LIMITED_ADDRESSES);
	__type(key, struct address_limit_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} src_released SEC(".maps");

/* The HA pair (maps/ha.h): which groups this node carries, written by the
 * agent; flow changes for the agent to sync while runtime_cfg.ha_sync. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HA_MAX_GROUPS + 1);
	__type(key, __u32);
	__type(value, struct ha_group_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ha_groups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, HA_EVENTS_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} ha_events SEC(".maps");

/* Egress by name (maps/egress.h): the scopes' sources, their address
 * rules and the addresses the DNS proxy learned for them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct egress_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} egress_cfg SEC(".maps");

#define EGRESS_LPM(name, key_t, value_t)                                         \
	struct {                                                                 \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);                             \
		__uint(max_entries, SLUICE_EGRESS_PREFIX_ENTRIES);               \
		__uint(map_flags, BPF_F_NO_PREALLOC);                            \
		__type(key, key_t);                                              \
		__type(value, value_t);                                          \
		__uint(pinning, LIBBPF_PIN_BY_NAME);                             \
	} name SEC(".maps")

EGRESS_LPM(egress_src_v4, struct egress_source_key_v4, struct egress_scope_ref);
EGRESS_LPM(egress_src_v6, struct egress_source_key_v6, struct egress_scope_ref);
EGRESS_LPM(egress_pfx_v4, struct egress_source_key_v4, struct egress_prefix_rules);
EGRESS_LPM(egress_pfx_v6, struct egress_source_key_v6, struct egress_prefix_rules);

/* Not an LRU: an address must stay learned until its expiry (the client got
 * the answer); the controller removes expired entries. */
#define EGRESS_LEARNED(name, key_t)                                              \
	struct {                                                                 \
		__uint(type, BPF_MAP_TYPE_HASH);                                 \
		__uint(max_entries, SLUICE_EGRESS_LEARNED_ENTRIES);              \
		__uint(map_flags, BPF_F_NO_PREALLOC);                            \
		__type(key, key_t);                                              \
		__type(value, struct egress_learned);                            \
		__uint(pinning, LIBBPF_PIN_BY_NAME);                             \
	} name SEC(".maps")

EGRESS_LEARNED(egress_learn_v4, struct egress_learned_key_v4);
EGRESS_LEARNED(egress_learn_v6, struct egress_learned_key_v6);

static __always_inline void count(enum stat_reason reason)
{
	__u32 key = reason;
	struct stat_counter *value = bpf_map_lookup_elem(&stats, &key);

	if (value)
		value->packets += 1;
}

/* A packet's fate, with its L3 bytes. */
static __always_inline void count_bytes(enum stat_reason reason, __u32 bytes)
{
	__u32 key = reason;
	struct stat_counter *value = bpf_map_lookup_elem(&stats, &key);

	if (value) {
		value->packets += 1;
		value->bytes += bytes;
	}
}

static __always_inline struct runtime_config *runtime_config(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&runtime_cfg, &key);
}

#endif
