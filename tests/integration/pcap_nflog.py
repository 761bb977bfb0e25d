#!/usr/bin/python3
"""Reads a pcap file of NFLOG records (what `sluice capture` writes) without
libpcap, to check what tcpdump does not print: each record's prefix (the
drop reason), ingress ifindex and the IP packet inside.

    pcap_nflog.py FILE      prints one line per record: REASON IFINDEX FAMILY PAYLOAD_LEN
"""
import struct
import sys

NFULA_IFINDEX_INDEV, NFULA_PAYLOAD, NFULA_PREFIX = 4, 9, 10


def records(path):
    data = open(path, "rb").read()
    magic, _, _, _, _, _, linktype = struct.unpack_from("<IHHiIII", data, 0)
    if magic != 0xA1B2C3D4:
        sys.exit(f"{path}: not a little-endian pcap file (magic {magic:#x})")
    if linktype != 239:
        sys.exit(f"{path}: link type {linktype}, not NFLOG (239)")
    off = 24
    while off < len(data):
        _, _, caplen, _ = struct.unpack_from("<IIII", data, off)
        off += 16
        yield data[off:off + caplen]
        off += caplen


def main():
    for rec in records(sys.argv[1]):
        family = rec[0]
        pos, tlvs = 4, {}
        while pos + 4 <= len(rec):
            length, typ = struct.unpack_from("<HH", rec, pos)   # host order (x86: little)
            if length < 4:
                sys.exit("bad TLV length")
            tlvs[typ] = rec[pos + 4:pos + length]
            pos += (length + 3) & ~3
        prefix = tlvs.get(NFULA_PREFIX, b"").rstrip(b"\0").decode()
        ifindex = struct.unpack(">I", tlvs[NFULA_IFINDEX_INDEV])[0] if NFULA_IFINDEX_INDEV in tlvs else 0
        print(prefix, ifindex, {2: "ipv4", 10: "ipv6"}.get(family, str(family)), len(tlvs.get(NFULA_PAYLOAD, b"")))


main()
