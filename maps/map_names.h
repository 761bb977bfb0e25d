/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place that knows map and program names. BPF declares the maps with
 * these identifiers (bpf/maps.bpf.h); libbpf pins every map by its name under
 * the instance's pin directory, and the controller opens pins by these strings.
 * Names stay within the kernel's 15-character object-name limit.
 */
#ifndef SLUICE_MAPS_MAP_NAMES_H
#define SLUICE_MAPS_MAP_NAMES_H

#define SLUICE_MAP_SESSIONS_V4 "sessions_v4"
#define SLUICE_MAP_SESSIONS_V6 "sessions_v6"
#define SLUICE_MAP_ZONES "zones"
#define SLUICE_MAP_TX_PORTS "tx_ports"
#define SLUICE_MAP_PEER_PORTS "peer_ports"
#define SLUICE_MAP_POL_SCOPES "pol_scopes"
#define SLUICE_MAP_POL_SRC_V4 "pol_src_v4"
#define SLUICE_MAP_POL_DST_V4 "pol_dst_v4"
#define SLUICE_MAP_POL_SRC_V6 "pol_src_v6"
#define SLUICE_MAP_POL_DST_V6 "pol_dst_v6"
#define SLUICE_MAP_POL_PORT_CLASS "pol_port_class"
#define SLUICE_MAP_POL_SPORT_CLASS "pol_sport_class"
#define SLUICE_MAP_POL_CROSS "pol_cross"
#define SLUICE_MAP_POL_CROSS_SPARSE "pol_cross_sparse"
#define SLUICE_MAP_POL_RESULTS "pol_results"
#define SLUICE_MAP_FILTER_HITS "filter_hits"
#define SLUICE_MAP_FRAGS_V4 "frags_v4"
#define SLUICE_MAP_FRAGS_V6 "frags_v6"
#define SLUICE_MAP_FLOW_CACHE "flow_cache"
#define SLUICE_MAP_RUNTIME_CONFIG "runtime_cfg"
#define SLUICE_MAP_STATS "stats"
#define SLUICE_MAP_JUMP_TABLE "jump_table"
#define SLUICE_MAP_NAT_DST "nat_dst"
#define SLUICE_MAP_NAT_MAP_IN_V4 "nat_map_in_v4"
#define SLUICE_MAP_NAT_MAP_IN_V6 "nat_map_in_v6"
#define SLUICE_MAP_NAT_MAP_OUT_V4 "nat_map_out_v4"
#define SLUICE_MAP_NAT_MAP_OUT_V6 "nat_map_out_v6"
#define SLUICE_MAP_NAT_SRC_ZONES "nat_src_zones"
#define SLUICE_MAP_NAT_SRC_SADDR_V4 "nat_src_s4"
#define SLUICE_MAP_NAT_SRC_SADDR_V6 "nat_src_s6"
#define SLUICE_MAP_NAT_SRC_DADDR_V4 "nat_src_d4"
#define SLUICE_MAP_NAT_SRC_DADDR_V6 "nat_src_d6"
#define SLUICE_MAP_NAT_SRC_RULES "nat_src_rules"
#define SLUICE_MAP_NAT_POOLS "nat_pools"
#define SLUICE_MAP_NAT_IFADDRS "nat_ifaddrs"
#define SLUICE_MAP_NAT_PORTS "nat_ports"
#define SLUICE_MAP_PUNT_CFG "punt_cfg"
#define SLUICE_MAP_PUNT_RULESETS "punt_rulesets"
#define SLUICE_MAP_PUNT_STATS "punt_stats"
#define SLUICE_MAP_HOST_SERVICES "host_services"
#define SLUICE_MAP_HOST_FLOWS_V4 "host_flows_v4"
#define SLUICE_MAP_HOST_FLOWS_V6 "host_flows_v6"
#define SLUICE_MAP_HOST_HITS "host_hits"
#define SLUICE_MAP_ZONE_SCREENS "zone_screens"
#define SLUICE_MAP_ZONE_SYN_RATES "zone_syn_rates"
#define SLUICE_MAP_SCREEN_HITS "screen_hits"
#define SLUICE_MAP_SRC_LIMITS "src_limits"
#define SLUICE_MAP_DST_LIMITS "dst_limits"
#define SLUICE_MAP_SRC_RELEASED "src_released"
#define SLUICE_MAP_SCAN_SOURCES "scan_sources"
#define SLUICE_MAP_HA_GROUPS "ha_groups"
#define SLUICE_MAP_HA_EVENTS "ha_events"
#define SLUICE_MAP_EGRESS_CFG "egress_cfg"
#define SLUICE_MAP_EGRESS_SOURCES_V4 "egress_src_v4"
#define SLUICE_MAP_EGRESS_SOURCES_V6 "egress_src_v6"
#define SLUICE_MAP_EGRESS_PREFIXES_V4 "egress_pfx_v4"
#define SLUICE_MAP_EGRESS_PREFIXES_V6 "egress_pfx_v6"
#define SLUICE_MAP_EGRESS_LEARNED_V4 "egress_learn_v4"
#define SLUICE_MAP_EGRESS_LEARNED_V6 "egress_learn_v6"
#define SLUICE_MAP_POLICY_HITS "policy_hits"
#define SLUICE_MAP_POLICY_LOG "policy_log"
#define SLUICE_MAP_FLOW_EVENTS "flow_events"
#define SLUICE_MAP_FLOW_LOG_LIMIT "flow_log_limit"
#define SLUICE_MAP_CAPTURE_CFG "capture_cfg"
#define SLUICE_MAP_CAPTURE_SAMPLE "capture_sample"
#define SLUICE_MAP_CAPTURE_EVENTS "capture_events"

/* Tail-call slots of jump_table. */
enum sluice_jump_slot {
	SLUICE_JUMP_ZONE = 0,
	SLUICE_JUMP_POLICY = 1,
	SLUICE_JUMP_NAT = 2,
	SLUICE_JUMP_FORWARD = 3,
	SLUICE_JUMP_SPLICE = 4,
	SLUICE_JUMP_HOST = 5,
	SLUICE_JUMP_SYNPROXY = 6,
	SLUICE_JUMP_SLOTS = 7,
};

#define SLUICE_PROG_XDP_MAIN "xdp_main_prog"
#define SLUICE_PROG_XDP_ZONE "xdp_zone_prog"
#define SLUICE_PROG_XDP_POLICY "xdp_policy_prog"
#define SLUICE_PROG_XDP_NAT "xdp_nat_prog"
#define SLUICE_PROG_XDP_FORWARD "xdp_forward_prog"
#define SLUICE_PROG_XDP_HOST "xdp_host_prog"
#define SLUICE_PROG_XDP_SYNPROXY "xdp_synproxy_prog"
#define SLUICE_PROG_TC_EGRESS "tc_egress_prog"
#define SLUICE_PROG_TC_PUNT "tc_punt_prog"
#define SLUICE_PROG_TC_MAIN "tc_main_prog"  /* the `tc` mode: the pipeline at TC ingress */

#endif
