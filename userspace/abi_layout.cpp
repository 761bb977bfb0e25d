// Pins every shared struct of maps/ at compile time: if a field moves or a
// size changes, the controller does not build. BPF C sees the same header.
// A change here is a change of the pinned layout: raise SLUICE_ABI_VERSION
// (maps/abi.h) with it, so a daemon refuses pins of the old layout.
#include <cstddef>

extern "C" {
#include "sluice_maps.h"
#include "packet_ctx.h"
}

#define PIN_SIZE(T, n) static_assert(sizeof(T) == (n), #T " size changed: the BPF ABI moved")
#define PIN_OFFSET(T, f, n) static_assert(offsetof(T, f) == (n), #T "." #f " moved: the BPF ABI changed")

PIN_SIZE(session_key_v4, 16);
PIN_OFFSET(session_key_v4, src_addr, 0);
PIN_OFFSET(session_key_v4, dst_addr, 4);
PIN_OFFSET(session_key_v4, src_port, 8);
PIN_OFFSET(session_key_v4, dst_port, 10);
PIN_OFFSET(session_key_v4, protocol, 12);

PIN_SIZE(session_key_v6, 40);
PIN_OFFSET(session_key_v6, src_addr, 0);
PIN_OFFSET(session_key_v6, dst_addr, 16);
PIN_OFFSET(session_key_v6, src_port, 32);
PIN_OFFSET(session_key_v6, dst_port, 34);
PIN_OFFSET(session_key_v6, protocol, 36);

PIN_SIZE(session_nat, 40);
PIN_OFFSET(session_nat, new_src_addr, 0);
PIN_OFFSET(session_nat, new_dst_addr, 16);
PIN_OFFSET(session_nat, new_src_port, 32);
PIN_OFFSET(session_nat, new_dst_port, 34);
PIN_OFFSET(session_nat, flags, 36);

PIN_SIZE(session_fib, 24);
PIN_OFFSET(session_fib, generation, 0);
PIN_OFFSET(session_fib, ifindex, 4);
PIN_OFFSET(session_fib, dst_mac, 8);
PIN_OFFSET(session_fib, src_mac, 14);
PIN_OFFSET(session_fib, mtu, 20);

PIN_SIZE(session_value, 144);
PIN_OFFSET(session_value, created_ns, 0);
PIN_OFFSET(session_value, last_seen_ns, 8);
PIN_OFFSET(session_value, packets, 16);
PIN_OFFSET(session_value, bytes, 24);
PIN_OFFSET(session_value, policy_id, 32);
PIN_OFFSET(session_value, zone_in, 36);
PIN_OFFSET(session_value, zone_out, 38);
PIN_OFFSET(session_value, tcp_state, 40);
PIN_OFFSET(session_value, flags, 41);
PIN_OFFSET(session_value, punt_flags, 42);
PIN_OFFSET(session_value, verdict, 43);
PIN_OFFSET(session_value, ruleset_id, 44);
PIN_OFFSET(session_value, nat, 48);
PIN_OFFSET(session_value, fib, 88);
PIN_OFFSET(session_value, policy_generation, 112);
PIN_OFFSET(session_value, splice, 120);
PIN_SIZE(session_splice, 24);
PIN_OFFSET(session_splice, seq_delta, 0);
PIN_OFFSET(session_splice, ack_delta, 4);
PIN_OFFSET(session_splice, tsval_delta, 8);
PIN_OFFSET(session_splice, tsecr_delta, 12);
PIN_OFFSET(session_splice, window_shift, 16);
PIN_OFFSET(session_splice, last_tsval, 20);

PIN_SIZE(zone_key, 8);
PIN_OFFSET(zone_key, ifindex, 0);
PIN_OFFSET(zone_key, vlan_id, 4);
PIN_SIZE(zone_value, 8);
PIN_OFFSET(zone_value, zone_id, 0);
PIN_OFFSET(zone_value, filter_id, 2);
PIN_OFFSET(zone_value, ha_group, 4);

// Every generation-keyed classifier key has its generation byte at offset 4:
// loader/map_io.cpp's delete_generation relies on it.
PIN_SIZE(policy_zone_pair_key, 8);
PIN_OFFSET(policy_zone_pair_key, from_zone, 0);
PIN_OFFSET(policy_zone_pair_key, to_zone, 2);
PIN_OFFSET(policy_zone_pair_key, generation, 4);
PIN_SIZE(classifier_scope_key, 8);
PIN_OFFSET(classifier_scope_key, a, 0);
PIN_OFFSET(classifier_scope_key, b, 2);
PIN_OFFSET(classifier_scope_key, generation, 4);
PIN_OFFSET(classifier_scope_key, kind, 5);
PIN_SIZE(policy_lpm_key_v4, 12);
PIN_OFFSET(policy_lpm_key_v4, prefixlen, 0);
PIN_OFFSET(policy_lpm_key_v4, generation, 4);
PIN_OFFSET(policy_lpm_key_v4, addr, 5);
PIN_SIZE(policy_lpm_key_v6, 24);
PIN_OFFSET(policy_lpm_key_v6, generation, 4);
PIN_OFFSET(policy_lpm_key_v6, addr, 5);
PIN_SIZE(classifier_table_layout, 8);
PIN_OFFSET(classifier_table_layout, width, 4);
PIN_SIZE(classifier_classes, 4 * CLASSIFIER_GROUPS);
PIN_SIZE(classifier_sparse_key, 12);
PIN_OFFSET(classifier_sparse_key, generation, 4);
PIN_OFFSET(classifier_sparse_key, right, 8);
PIN_SIZE(classifier_layout, 8 + 8 * CLASSIFIER_GROUPS * CLASSIFIER_TABLES);
PIN_OFFSET(classifier_layout, table, 8);
PIN_SIZE(classifier_result, 8 + 4 * CLASSIFIER_MAX_COUNTED);
PIN_OFFSET(classifier_result, rule, 0);
PIN_OFFSET(classifier_result, action, 4);
PIN_OFFSET(classifier_result, counted_n, 5);
PIN_OFFSET(classifier_result, ruleset_id, 6);
PIN_OFFSET(classifier_result, counted, 8);
PIN_SIZE(filter_rule_counter, 16);
PIN_OFFSET(filter_rule_counter, bytes, 8);

PIN_SIZE(frag_key_v4, 12);
PIN_OFFSET(frag_key_v4, id, 8);
PIN_OFFSET(frag_key_v4, protocol, 10);
PIN_SIZE(frag_key_v6, 40);
PIN_OFFSET(frag_key_v6, id, 32);
PIN_OFFSET(frag_key_v6, protocol, 36);
PIN_SIZE(frag_value, 32);
PIN_OFFSET(frag_value, src_port, 8);
PIN_OFFSET(frag_value, verdict, 12);
PIN_OFFSET(frag_value, protocol, 13);
PIN_OFFSET(frag_value, range_start, 16);
PIN_OFFSET(frag_value, range_end, 24);

PIN_SIZE(flow_cache_key, 40);
PIN_OFFSET(flow_cache_key, src_port, 4);
PIN_OFFSET(flow_cache_key, src_addr, 8);
PIN_OFFSET(flow_cache_key, dst_addr, 24);
PIN_SIZE(flow_cache_value, 16);
PIN_OFFSET(flow_cache_value, action, 12);

PIN_SIZE(host_service_key, 8);
PIN_OFFSET(host_service_key, zone_id, 0);
PIN_OFFSET(host_service_key, port, 2);
PIN_OFFSET(host_service_key, protocol, 4);
PIN_OFFSET(host_service_key, generation, 5);
PIN_SIZE(host_service_value, 4);
PIN_SIZE(host_flow_value, 24);
PIN_OFFSET(host_flow_value, created_ns, 8);
PIN_OFFSET(host_flow_value, zone_id, 16);
PIN_SIZE(host_inbound_counter, 16);
PIN_OFFSET(host_inbound_counter, dropped, 8);

PIN_SIZE(zone_screen, 52);
PIN_OFFSET(zone_screen, syn_proxy_wscale, 1);
PIN_OFFSET(zone_screen, syn_proxy_rate, 4);
PIN_OFFSET(zone_screen, source_sessions, 8);
PIN_OFFSET(zone_screen, source_rate, 12);
PIN_OFFSET(zone_screen, destination_rate, 16);
PIN_OFFSET(zone_screen, source_icmp_rate, 20);
PIN_OFFSET(zone_screen, destination_udp_rate, 32);
PIN_OFFSET(zone_screen, scan_port_bits, 36);
PIN_OFFSET(zone_screen, scan_host_bits, 38);
PIN_OFFSET(zone_screen, scan_block, 40);
PIN_OFFSET(zone_screen, scan_window_s, 44);
PIN_OFFSET(zone_screen, scan_hold_s, 48);
PIN_SIZE(zone_syn_rate, 24);
PIN_SIZE(screen_counter, 120);
PIN_OFFSET(screen_counter, syn_proxy_refused, 112);
PIN_OFFSET(screen_counter, source_icmp_drops, 64);
PIN_OFFSET(screen_counter, scan_drops, 104);
PIN_SIZE(address_limit_key, 20);
PIN_OFFSET(address_limit_key, addr, 4);
PIN_SIZE(address_limit, 56);
PIN_OFFSET(address_limit, opened, 16);
PIN_OFFSET(address_limit, closed, 24);
PIN_OFFSET(address_limit, icmp_window_start_ns, 32);
PIN_OFFSET(address_limit, icmp_window_count, 48);
PIN_SIZE(scan_state, 88);
PIN_OFFSET(scan_state, port_set, 16);
PIN_OFFSET(scan_state, host_set, 48);
PIN_OFFSET(scan_state, ports, 80);
PIN_OFFSET(scan_state, reported, 84);
PIN_SIZE(synproxy_meta, 28);
PIN_OFFSET(synproxy_meta, client_isn, 4);
PIN_OFFSET(synproxy_meta, server_tsval, 20);
PIN_OFFSET(synproxy_meta, window_to_client, 26);
PIN_SIZE(session_synproxy, 24);
PIN_OFFSET(session_synproxy, client_tsval, 12);
PIN_OFFSET(session_synproxy, mss, 16);
PIN_OFFSET(session_synproxy, client_window, 20);

PIN_SIZE(nat_dst_key, 24);
PIN_OFFSET(nat_dst_key, port, 16);
PIN_OFFSET(nat_dst_key, zone_in, 18);
PIN_OFFSET(nat_dst_key, protocol, 20);
PIN_OFFSET(nat_dst_key, family, 21);
PIN_OFFSET(nat_dst_key, generation, 22);
PIN_SIZE(nat_dst_value, 24);
PIN_OFFSET(nat_dst_value, port, 16);
PIN_OFFSET(nat_dst_value, rule_id, 20);
PIN_SIZE(nat_prefix_value, 40);
PIN_OFFSET(nat_prefix_value, to, 16);
PIN_OFFSET(nat_prefix_value, prefix_len, 32);
PIN_OFFSET(nat_prefix_value, kind, 33);
PIN_OFFSET(nat_prefix_value, rule_id, 36);
PIN_SIZE(nat_rule_bits, 8);
PIN_SIZE(nat_source_rule, 8);
PIN_OFFSET(nat_source_rule, kind, 4);
PIN_OFFSET(nat_source_rule, pool_index, 6);
PIN_SIZE(nat_pool_range, 20);
PIN_OFFSET(nat_pool_range, count, 16);
PIN_SIZE(nat_pool, 172);
PIN_OFFSET(nat_pool, address_count, 160);
PIN_OFFSET(nat_pool, port_first, 164);
PIN_OFFSET(nat_pool, port_last, 166);
PIN_OFFSET(nat_pool, family, 168);
PIN_OFFSET(nat_pool, flags, 169);
PIN_OFFSET(nat_pool, pool_index, 170);
PIN_SIZE(nat_ifaddr, 28);
PIN_OFFSET(nat_ifaddr, v6, 4);
PIN_OFFSET(nat_ifaddr, has_v4, 20);
PIN_OFFSET(nat_ifaddr, has_v6, 21);
PIN_OFFSET(nat_ifaddr, port_first, 22);
PIN_OFFSET(nat_ifaddr, port_last, 24);
PIN_SIZE(nat_port_key, 20);
PIN_OFFSET(nat_port_key, port, 16);
PIN_OFFSET(nat_port_key, protocol, 18);
PIN_OFFSET(nat_port_key, family, 19);
PIN_SIZE(nat_port_value, 32);
PIN_OFFSET(nat_port_value, inside_port, 16);
PIN_OFFSET(nat_port_value, rule_id, 20);
PIN_OFFSET(nat_port_value, created_ns, 24);

PIN_SIZE(runtime_config, 96 + POLICY_GENERATIONS * (8 + 8 * CLASSIFIER_GROUPS * CLASSIFIER_TABLES));
PIN_OFFSET(runtime_config, fib_generation, 0);
PIN_OFFSET(runtime_config, config_generation, 4);
PIN_OFFSET(runtime_config, policy_generation, 8);
PIN_OFFSET(runtime_config, default_action, 9);
PIN_OFFSET(runtime_config, ha_sync, 10);
PIN_OFFSET(runtime_config, flow_log, 11);
PIN_OFFSET(runtime_config, timeout_ns, 16);
PIN_OFFSET(runtime_config, flow_log_interval_ns, 80);
PIN_OFFSET(runtime_config, flow_log_tolerance_ns, 88);
PIN_OFFSET(runtime_config, classifier, 96);

// maps/punt.h
PIN_SIZE(punt_meta, 8);
PIN_OFFSET(punt_meta, magic, 0);
PIN_OFFSET(punt_meta, ruleset_id, 2);
PIN_OFFSET(punt_meta, reply, 4);
PIN_SIZE(tc_handoff, 36);
PIN_OFFSET(tc_handoff, ifindex, 28);
PIN_OFFSET(tc_handoff, len, 32);
PIN_SIZE(punt_config, 12);
PIN_OFFSET(punt_config, mark, 0);
PIN_OFFSET(punt_config, stage_up, 4);
PIN_OFFSET(punt_config, overloaded, 5);
PIN_OFFSET(punt_config, tcp_port, 6);
PIN_OFFSET(punt_config, udp_port, 8);
PIN_SIZE(punt_ruleset, 8);
PIN_OFFSET(punt_ruleset, fail_closed, 0);
PIN_OFFSET(punt_ruleset, configured, 1);
PIN_SIZE(punt_ruleset_stats, 48);
PIN_OFFSET(punt_ruleset_stats, punted_packets, 0);
PIN_OFFSET(punt_ruleset_stats, verdict_packets, 40);

// The per-CPU scratch between tail calls lives in a pinned map (pkt_scratch).
PIN_SIZE(packet_ctx, 416);
PIN_OFFSET(packet_ctx, tcp_seq, 360);
PIN_OFFSET(packet_ctx, source_counted, 413);
PIN_OFFSET(packet_ctx, ha_standby, 414);

// maps/ha.h
PIN_SIZE(ha_group_state, 8);
PIN_OFFSET(ha_group_state, active, 0);
PIN_OFFSET(ha_group_state, epoch, 4);
PIN_SIZE(ha_event, 40);
PIN_OFFSET(ha_event, src_port, 32);
PIN_OFFSET(ha_event, protocol, 36);
PIN_OFFSET(ha_event, family, 37);

// maps/egress.h
PIN_SIZE(egress_source_key_v4, 12);
PIN_OFFSET(egress_source_key_v4, zone, 4);
PIN_OFFSET(egress_source_key_v4, addr, 8);
PIN_SIZE(egress_source_key_v6, 24);
PIN_OFFSET(egress_source_key_v6, addr, 8);
PIN_SIZE(egress_scope_ref, 4);
PIN_SIZE(egress_port_range, 4);
PIN_SIZE(egress_learned_key_v4, 8);
PIN_SIZE(egress_learned_key_v6, 20);
PIN_SIZE(egress_learned, 32);
PIN_OFFSET(egress_learned, port_ranges, 8);
PIN_OFFSET(egress_learned, ports, 12);
PIN_SIZE(egress_prefix_entry, 6);
PIN_SIZE(egress_prefix_rules, 28);
PIN_OFFSET(egress_prefix_rules, rules, 4);
PIN_SIZE(egress_config, 8);
PIN_OFFSET(egress_config, dns_port, 2);
PIN_OFFSET(egress_config, mark, 4);

// maps/observe.h
PIN_SIZE(policy_counter, 24);
PIN_SIZE(flow_log_limit, 8);
PIN_SIZE(flow_event, 152);
PIN_OFFSET(flow_event, src_addr, 8);
PIN_OFFSET(flow_event, dst_addr, 24);
PIN_OFFSET(flow_event, src_port, 40);
PIN_OFFSET(flow_event, type, 44);
PIN_OFFSET(flow_event, policy_id, 48);
PIN_OFFSET(flow_event, config_generation, 52);
PIN_OFFSET(flow_event, ifindex, 56);
PIN_OFFSET(flow_event, zone_in, 60);
PIN_OFFSET(flow_event, reason, 64);
PIN_OFFSET(flow_event, tcp_flags, 66);
PIN_OFFSET(flow_event, l3_len, 68);
PIN_OFFSET(flow_event, nat, 72);
PIN_OFFSET(flow_event, created_ns, 112);
PIN_OFFSET(flow_event, packets, 120);
PIN_OFFSET(flow_event, bytes, 136);

PIN_SIZE(capture_config, 24);
PIN_SIZE(capture_record, 24);
PIN_SIZE(capture_scratch, 32);
PIN_OFFSET(capture_record, reason, 12);
PIN_OFFSET(capture_record, len, 16);

// maps/stats.h
PIN_SIZE(stat_counter, 16);

static_assert(SLUICE_ABI_VERSION == 4, "the ABI version moved: update the pins above with it");
