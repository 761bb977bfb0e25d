/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Screens (config `screen:` on a zone, docs/host-protection.md): protections
 * for traffic arriving from a zone. The SYN proxy answers the SYNs of
 * permitted TCP flows with SYN cookies in XDP, so a spoofed SYN creates no
 * session; the session is created when the client's ACK returns a valid
 * cookie, and the proxy then opens the connection to the server itself.
 */
#ifndef SLUICE_MAPS_SCREEN_H
#define SLUICE_MAPS_SCREEN_H

#include "abi.h"

enum syn_proxy_mode {
	SYN_PROXY_OFF = 0,
	SYN_PROXY_ALWAYS = 1,
	SYN_PROXY_ABOVE_RATE = 2,   /* on while the zone's permitted SYNs exceed a rate */
};

/* zone_screens[generation * SLUICE_MAX_ZONES + zone]: a zone's screens.
 * A limit of 0 is no limit. */
struct zone_screen {
	__u8 syn_proxy;             /* enum syn_proxy_mode */
	__u8 syn_proxy_wscale;      /* the window scale offered to clients, 0-14 */
	__u16 pad;
	__u32 syn_proxy_rate;       /* ABOVE_RATE: SYNs per second that turn it on */
	__u32 source_sessions;      /* sessions one source address may hold */
	__u32 source_rate;          /* sessions one source may open per second */
	__u32 destination_rate;     /* sessions that may be opened to one destination per second */
	/* Packet floods: ICMP/ICMPv6 and UDP packets per second from one
	 * source / to one destination (as on the wire, before NAT), every
	 * packet counted, those of established sessions too. */
	__u32 source_icmp_rate;
	__u32 source_udp_rate;
	__u32 destination_icmp_rate;
	__u32 destination_udp_rate;
	/* Scans (scan_sources): one source sending packets that open no
	 * session to many ports or many hosts within a window. The thresholds
	 * are in bits set of scan_state's 256-bit sets (the compiler turns a
	 * number of distinct ports/hosts into its expected bits); 0 = off. */
	__u16 scan_port_bits;
	__u16 scan_host_bits;
	__u8 scan_block;            /* 1: drop the source's new flows for scan_hold_s; 0: count only */
	__u8 pad2[3];
	__u32 scan_window_s;
	__u32 scan_hold_s;
};

/* src_limits / dst_limits key: an address as it arrived from a zone (the
 * destination after destination NAT). */
struct address_limit_key {
	__u16 zone_id;
	__u8 family;                /* SLUICE_FAMILY_IPV4 / _IPV6 */
	__u8 pad;
	__be32 addr[4];             /* IPv4: addr[0] */
};

/* src_limits / dst_limits value, shared by every CPU (LRU: an address not
 * seen for long makes room). */
struct address_limit {
	__u64 window_start_ns;      /* one-second window of window_count */
	__u32 window_count;         /* sessions opened in it */
	__u32 pad;
	__u64 opened;               /* src_limits: sessions counted against the source */
	__u64 closed;               /* ... that the datapath retired itself */
	__u64 icmp_window_start_ns; /* packet floods: one-second windows of ICMP */
	__u64 udp_window_start_ns;  /* ... and UDP packets */
	__u32 icmp_window_count;
	__u32 udp_window_count;
};
/* A source holds opened - closed - src_released[key] sessions: the
 * controller's GC counts what it expires in src_released, which only it
 * writes (the datapath's counters are atomic adds; one writer each). */

/* scan_sources value: what one source (address_limit_key) probed in the
 * current window. Distinct ports and hosts are counted as bits set in
 * 256-bit sets indexed by a hash (linear counting: n distinct values set
 * about 256 * (1 - e^(-n/256)) bits), so the state per source is fixed. */
#define SCAN_SET_BITS 256
struct scan_state {
	__u64 window_start_ns;
	__u64 blocked_until_ns;     /* block: the source's new flows are dropped until then */
	__u64 port_set[SCAN_SET_BITS / 64];
	__u64 host_set[SCAN_SET_BITS / 64];
	__u16 ports;                /* bits set in port_set */
	__u16 hosts;                /* bits set in host_set */
	__u8 reported;              /* this window's scan is already counted */
	__u8 pad[3];
};

/* zone_syn_rates[zone], shared by every CPU: permitted SYNs into the zone in
 * one-second windows, for ABOVE_RATE. */
struct zone_syn_rate {
	__u64 window_start_ns;
	__u64 count;
	__u64 active_until_ns;      /* the proxy stays on until then */
};

/* screen_hits[generation * SLUICE_MAX_ZONES + zone], per CPU: zeroed for a
 * generation when a config is applied to it. */
struct screen_counter {
	__u64 syn_proxy_cookies_sent;      /* SYN-ACKs with a cookie */
	__u64 syn_proxy_cookies_valid;     /* ACKs that returned one */
	__u64 syn_proxy_cookies_invalid;   /* ACKs with no session and no valid cookie: dropped */
	__u64 syn_proxy_server_syns;       /* SYNs sent to servers, retransmissions included */
	__u64 syn_proxy_established;       /* server handshakes completed */
	__u64 source_rate_drops;           /* new sessions over a source's rate */
	__u64 source_session_drops;        /* new sessions over a source's session limit */
	__u64 destination_rate_drops;      /* new sessions over a destination's rate */
	__u64 source_icmp_drops;           /* ICMP packets over a source's rate */
	__u64 source_udp_drops;            /* UDP packets over a source's rate */
	__u64 destination_icmp_drops;      /* ICMP packets over a destination's rate */
	__u64 destination_udp_drops;       /* UDP packets over a destination's rate */
	__u64 scans_detected;              /* sources that crossed a scan threshold in a window */
	__u64 scan_drops;                  /* packets of blocked scanners dropped */
	__u64 syn_proxy_refused;           /* valid cookies whose flow was refused (a limit, a full
	                                    * table, the policy since the SYN): the client is reset */
};

/* The kernel's SYN-cookie MSS classes (net/ipv4/syncookies.c,
 * net/ipv6/syncookies.c): a cookie encodes one of them. */
#define SYNCOOKIE_MSS_CLASSES 4
#define SYNCOOKIE_MSS_V4 {536, 1300, 1440, 1460}
#define SYNCOOKIE_MSS_V6 {1220, 1420, 1440, 8940}

/* Low bits of the TSval the proxy sends in its SYN-ACK carry the client's
 * options back to it in the ACK's TSecr: without timestamps, window scaling
 * and SACK cannot survive a cookie. */
#define SYNPROXY_TS_WSCALE_MASK 0x0f   /* 0x0f: the client offered no window scale */
#define SYNPROXY_TS_SACK 0x10
#define SYNPROXY_TS_BITS 0x3f

/* session_synproxy.flags and synproxy_meta.flags */
enum synproxy_flags {
	SYNPROXY_F_TIMESTAMPS = 1 << 0,    /* the client offered timestamps */
	SYNPROXY_F_SACK = 1 << 1,          /* ... and SACK */
	SYNPROXY_F_WSCALE = 1 << 2,        /* ... and a window scale (client_wscale) */
};

/* XDP metadata in front of a server's SYN-ACK that completes a proxied
 * handshake: tc_punt_prog answers the server with the client's ACK and opens
 * the client's window (XDP can send only one packet). 28 bytes. */
#define SYNPROXY_META_MAGIC 0x5e1du
struct synproxy_meta {
	__u16 magic;                /* SYNPROXY_META_MAGIC */
	__u8 flags;                 /* SYNPROXY_F_* */
	__u8 pad;
	__u32 client_isn;
	__u32 proxy_isn;
	__u32 client_tsval;
	__u32 proxy_tsval;
	__u32 server_tsval;
	__u16 client_window;        /* for the server: the client's window as it scaled it */
	__u16 window_to_client;     /* the server's window in the client's scale */
};

#ifndef SLUICE_MAX_LIMITED_ADDRESSES
#define SLUICE_MAX_LIMITED_ADDRESSES 65536   /* src_limits, dst_limits, src_released, scan_sources */
#endif

#endif
