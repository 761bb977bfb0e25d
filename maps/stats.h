/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-reason packet counters, a per-CPU array indexed by enum stat_reason,
 * each {packets, bytes}. Bytes (L3 length) are counted where a packet's
 * fate is decided: the drop and pass reasons and `forward`; the other info
 * counters count packets only.
 * The list is an X-macro so the BPF enum and the controller's names come from
 * one place: X(ENUM_NAME, "name", kind) with kind drop | pass | info.
 */
#ifndef SLUICE_MAPS_STATS_H
#define SLUICE_MAPS_STATS_H

#include "abi.h"

#define SLUICE_STATS(X)                                                          \
	X(STAT_RX, "rx", info)                                                   \
	X(STAT_FORWARD, "forward", info)                                         \
	X(STAT_SESSION_HIT, "session-hit", info)                                 \
	X(STAT_SESSION_CREATED, "session-created", info)                         \
	X(STAT_ICMP_RELATED, "icmp-related", info)                               \
	X(STAT_FRAG_RECORDED, "fragment-recorded", info)                         \
	X(STAT_FRAG_FOLLOWED, "fragment-followed", info)                         \
	X(STAT_FLOW_CACHE_HIT, "flow-cache-hit", info)                           \
	X(STAT_FIB_LOOKUP, "fib-lookup", info)                                   \
	X(STAT_TC_EGRESS_SESSION, "tc-egress-session", info)                     \
	X(STAT_NAT_TRANSLATED, "nat-translated", info)                           \
	X(STAT_NAT_ICMP_ERROR, "nat-icmp-error-translated", info)                \
	X(STAT_NAT_DEFERRED_TC, "nat-source-left-to-tc-egress", info)            \
	X(STAT_TC_EGRESS_NAT, "tc-egress-nat-translated", info)                  \
	X(STAT_NAT_PORT_ALLOCATED, "nat-port-allocated", info)                   \
	X(STAT_PUNT_INSPECT, "punt-to-inspection", pass)                         \
	X(STAT_PUNT_ASSIGNED, "tc-punt-socket-assigned", info)                   \
	X(STAT_INSPECT_FAIL_OPEN, "inspect-stage-down-fail-open", info)          \
	X(STAT_TCP_SPLICED, "tcp-spliced-after-inspection", info)                \
	X(STAT_HOST_FLOW_TRACKED, "host-flow-tracked", info)                     \
	X(STAT_SYNPROXY_COOKIE_SENT, "syn-proxy-cookie-sent", info)              \
	X(STAT_SYNPROXY_COOKIE_VALID, "syn-proxy-cookie-valid", info)            \
	X(STAT_SYNPROXY_SERVER_SYN, "syn-proxy-server-syn-sent", info)           \
	X(STAT_SYNPROXY_ESTABLISHED, "syn-proxy-established", info)              \
	X(STAT_SCREEN_SCAN_DETECTED, "screen-scan-detected", info)               \
	X(STAT_HA_EVENT_SENT, "ha-sync-event", info)                             \
	X(STAT_HA_EVENT_LOST, "ha-sync-event-lost", info)                        \
	X(STAT_EGRESS_DNS_STEERED, "egress-dns-steered-to-proxy", pass)          \
	X(STAT_EGRESS_LEARNED_PASS, "egress-learned-address-passed", info)       \
	X(STAT_FLOW_LOG_EVENT, "flow-log-event", info)                           \
	X(STAT_FLOW_LOG_RATE_LIMITED, "flow-log-event-rate-limited", info)       \
	X(STAT_FLOW_LOG_RING_FULL, "flow-log-event-ring-full", info)             \
	X(STAT_PASS_NON_IP, "pass-non-ip", pass)                                 \
	X(STAT_PASS_UNZONED, "pass-unzoned-interface", pass)                     \
	X(STAT_PASS_LOCAL, "pass-local", pass)                                   \
	X(STAT_PASS_LINK_LOCAL, "pass-link-local-or-multicast", pass)            \
	X(STAT_PASS_TTL, "pass-ttl-expired", pass)                               \
	X(STAT_PASS_NO_NEIGH, "pass-no-neighbour", pass)                         \
	X(STAT_PASS_NO_ROUTE, "pass-no-route", pass)                             \
	X(STAT_PASS_NO_XMIT, "pass-egress-not-redirectable", pass)               \
	X(STAT_PASS_OVER_MTU, "pass-larger-than-egress-mtu", pass)               \
	X(STAT_DROP_ETH_TRUNCATED, "drop-eth-truncated", drop)                   \
	X(STAT_DROP_VLAN_TRUNCATED, "drop-vlan-truncated", drop)                 \
	X(STAT_DROP_VLAN_TOO_DEEP, "drop-vlan-too-deep", drop)                   \
	X(STAT_DROP_IPV4_TRUNCATED, "drop-ipv4-truncated", drop)                 \
	X(STAT_DROP_IPV4_BAD_HEADER, "drop-ipv4-bad-header", drop)               \
	X(STAT_DROP_IPV4_BAD_LENGTH, "drop-ipv4-bad-length", drop)               \
	X(STAT_DROP_IPV6_TRUNCATED, "drop-ipv6-truncated", drop)                 \
	X(STAT_DROP_IPV6_BAD_HEADER, "drop-ipv6-bad-header", drop)               \
	X(STAT_DROP_IPV6_BAD_LENGTH, "drop-ipv6-bad-length", drop)               \
	X(STAT_DROP_IPV6_EXT_TRUNCATED, "drop-ipv6-ext-truncated", drop)         \
	X(STAT_DROP_IPV6_EXT_TOO_MANY, "drop-ipv6-ext-too-many", drop)           \
	X(STAT_DROP_TCP_TRUNCATED, "drop-tcp-truncated", drop)                   \
	X(STAT_DROP_TCP_BAD_HEADER, "drop-tcp-bad-header", drop)                 \
	X(STAT_DROP_TCP_BAD_FLAGS, "drop-tcp-bad-flags", drop)                   \
	X(STAT_DROP_UDP_TRUNCATED, "drop-udp-truncated", drop)                   \
	X(STAT_DROP_UDP_BAD_LENGTH, "drop-udp-bad-length", drop)                 \
	X(STAT_DROP_ICMP_TRUNCATED, "drop-icmp-truncated", drop)                 \
	X(STAT_DROP_ICMPV6_TRUNCATED, "drop-icmpv6-truncated", drop)             \
	X(STAT_DROP_FRAG_NO_RECORD, "drop-fragment-no-record", drop)             \
	X(STAT_DROP_FRAG_BAD, "drop-fragment-malformed", drop)                   \
	X(STAT_DROP_FRAG_OVERSIZE, "drop-fragment-beyond-64k", drop)             \
	X(STAT_DROP_LAND, "drop-land", drop)                                     \
	X(STAT_DROP_FRAG_DENIED, "drop-fragment-denied", drop)                   \
	X(STAT_DROP_POLICY_DENY, "drop-policy-deny", drop)                       \
	X(STAT_DROP_POLICY_DEFAULT, "drop-policy-default", drop)                 \
	X(STAT_DROP_POLICY_REJECT, "drop-policy-reject", drop)                   \
	X(STAT_REJECT_TCP_RST, "reject-tcp-rst-sent", info)                      \
	X(STAT_REJECT_ICMP, "reject-icmp-sent", info)                            \
	X(STAT_DROP_TCP_NO_SESSION, "drop-tcp-no-session", drop)                 \
	X(STAT_DROP_TCP_INVALID, "drop-tcp-invalid-state", drop)                 \
	X(STAT_DROP_ICMP_UNRELATED, "drop-icmp-error-unrelated", drop)           \
	X(STAT_DROP_SESSION_VERDICT, "drop-session-verdict", drop)               \
	X(STAT_DROP_SESSION_TABLE_FULL, "drop-session-table-full", drop)         \
	X(STAT_DROP_FRAG_TABLE_FULL, "drop-fragment-table-full", drop)           \
	X(STAT_DROP_NAT_PORTS_EXHAUSTED, "drop-nat-ports-exhausted", drop)       \
	X(STAT_DROP_NAT_NO_ADDRESS, "drop-nat-no-address", drop)                 \
	X(STAT_DROP_NAT_TUPLE_IN_USE, "drop-nat-tuple-in-use", drop)             \
	X(STAT_DROP_NPTV6_UNMAPPABLE, "drop-nptv6-unmappable", drop)             \
	X(STAT_DROP_INSPECT_FAIL_CLOSED, "drop-inspect-stage-down", drop)        \
	X(STAT_DROP_PUNT_NO_SOCKET, "drop-punt-no-socket", drop)                 \
	X(STAT_DROP_INSPECT_HANDOFF_HOLD, "drop-inspect-handoff-hold", drop)     \
	X(STAT_DROP_FILTER, "drop-filter", drop)                                 \
	X(STAT_DROP_HOST_INBOUND, "drop-host-inbound", drop)                     \
	X(STAT_DROP_SYNPROXY_BAD_COOKIE, "drop-syn-proxy-bad-cookie", drop)      \
	X(STAT_DROP_SYNPROXY_SYNACK, "drop-syn-proxy-server-synack", drop)       \
	X(STAT_DROP_SCREEN_SOURCE_RATE, "drop-screen-source-rate", drop)         \
	X(STAT_DROP_SCREEN_SOURCE_SESSIONS, "drop-screen-source-sessions", drop) \
	X(STAT_DROP_SCREEN_DEST_RATE, "drop-screen-destination-rate", drop)      \
	X(STAT_DROP_SCREEN_ICMP_FLOOD, "drop-screen-icmp-flood", drop)           \
	X(STAT_DROP_SCREEN_UDP_FLOOD, "drop-screen-udp-flood", drop)             \
	X(STAT_DROP_SCREEN_SCAN, "drop-screen-scan", drop)                       \
	X(STAT_DROP_FRAG_OVERLAP, "drop-fragment-overlap", drop)                 \
	X(STAT_DROP_FRAG_DISORDERED, "drop-fragment-disordered", drop)           \
	X(STAT_DROP_HA_STANDBY, "drop-ha-standby", drop)                         \
	X(STAT_DROP_EGRESS_NOT_LEARNED, "drop-egress-not-learned", drop)         \
	X(STAT_DROP_EGRESS_DENIED, "drop-egress-address-denied", drop)           \
	X(STAT_DROP_EGRESS_DOT, "drop-egress-dns-over-tls", drop)                \
	X(STAT_DROP_EGRESS_PROXY_DOWN, "drop-egress-dns-proxy-down", drop)       \
	X(STAT_DROP_INTERNAL, "drop-internal-error", drop)

struct stat_counter {
	__u64 packets;
	__u64 bytes;
};

#define SLUICE_STAT_ENUM(name, str, kind) name,
enum stat_reason {
	SLUICE_STATS(SLUICE_STAT_ENUM)
	STAT_REASON_COUNT
};
#undef SLUICE_STAT_ENUM

#endif
