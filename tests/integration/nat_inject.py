#!/usr/bin/env python3
"""Writes hand-built session entries and NAT port reservations into an
instance's pinned maps with bpftool, laid out as maps/session.h and
maps/nat.h define them (offsets pinned in userspace/abi_layout.cpp), so the
controller's side of NAT (GC, show) can be checked before the datapath
translates real traffic.

  nat_inject.py PIN_DIR flow  PROTO INSIDE:PORT DST:PORT TRANSLATED:PORT [--lone]
  nat_inject.py PIN_DIR port  PROTO ADDR:PORT INSIDE:PORT

`flow` writes a source-translated flow (initiator entry with
SESSION_NAT_SRC|SESSION_NAT_PORT_HELD, reply entry keyed by the reverse of the
translated tuple) and its reservation; --lone leaves out the reply entry.
`port` writes a reservation alone. IPv4 only; last_seen is now."""
import socket
import struct
import subprocess
import sys
import time

PROTO = {"tcp": 6, "udp": 17, "icmp": 1}
FAMILY_IPV4 = 4
SESSION_F_REPLY = 1
NAT_SRC, NAT_DST, NAT_PORT_HELD = 1, 2, 4


def ep(text):
    addr, port = text.rsplit(":", 1)
    return socket.inet_aton(addr), int(port)


def key(src, dst, proto):
    return src[0] + dst[0] + struct.pack(">HH", src[1], dst[1]) + bytes([proto, 0, 0, 0])


def value(now, flags, nat_src, nat_dst, nat_flags):
    v = struct.pack("<QQQQIHHBBBBHH", now, now, 1, 100, 0, 1, 2, 0, flags, 0, 0, 0, 0)
    v += nat_src[0] + bytes(12) + nat_dst[0] + bytes(12) + struct.pack(">HH", nat_src[1], nat_dst[1])
    v += bytes([nat_flags, 0, 0, 0]) + bytes(24) + bytes(8)
    v += bytes(24)  # session_splice: not a spliced flow
    assert len(v) == 144  # maps/session.h struct session_value
    return v


def port_entry(addr, inside, proto, now):
    k = addr[0] + bytes(12) + struct.pack(">H", addr[1]) + bytes([proto, FAMILY_IPV4])
    v = inside[0] + bytes(12) + struct.pack(">H", inside[1]) + bytes(2) + struct.pack("<IQ", 0, now)
    return k, v


def update(pin_dir, name, k, v):
    hexes = lambda b: [f"{x:02x}" for x in b]
    subprocess.run(["bpftool", "map", "update", "pinned", f"{pin_dir}/{name}", "key", "hex", *hexes(k),
                    "value", "hex", *hexes(v)], check=True)


def main():
    pin_dir, what, proto = sys.argv[1], sys.argv[2], PROTO[sys.argv[3]]
    now = time.clock_gettime_ns(getattr(time, "CLOCK_MONOTONIC_COARSE", 6))  # 6 on Linux
    if what == "port":
        update(pin_dir, "nat_ports", *port_entry(ep(sys.argv[4]), ep(sys.argv[5]), proto, now))
        return
    inside, dst, translated = ep(sys.argv[4]), ep(sys.argv[5]), ep(sys.argv[6])
    update(pin_dir, "sessions_v4", key(inside, dst, proto),
           value(now, 0, translated, dst, NAT_SRC | NAT_PORT_HELD))
    if "--lone" not in sys.argv:
        update(pin_dir, "sessions_v4", key(dst, translated, proto), value(now, SESSION_F_REPLY, dst, inside, NAT_DST))
    update(pin_dir, "nat_ports", *port_entry(translated, inside, proto, now))


main()
