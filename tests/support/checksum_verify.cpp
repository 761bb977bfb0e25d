#include "checksum_verify.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

namespace sluice::test {

namespace {

uint16_t rd16(const Bytes& b, size_t at) { return static_cast<uint16_t>(b[at] << 8 | b[at + 1]); }

uint32_t rd32(const Bytes& b, size_t at) {
    return static_cast<uint32_t>(b[at]) << 24 | static_cast<uint32_t>(b[at + 1]) << 16 |
           static_cast<uint32_t>(b[at + 2]) << 8 | b[at + 3];
}

// Ones'-complement sum kept in 64 bits and folded at the end; a region whose
// checksum field is correct sums (with the field included) to 0xffff.
struct OnesSum {
    uint64_t acc = 0;
    bool odd = false;  // a byte is pending as the high half of a word
    void bytes(const uint8_t* p, size_t n) {
        for (size_t i = 0; i < n; ++i) {
            acc += odd ? p[i] : static_cast<uint64_t>(p[i]) << 8;
            odd = !odd;
        }
    }
    void word(uint16_t w) { acc += w; }
    uint16_t folded() const {
        uint64_t s = acc;
        while (s > 0xffff) s = (s & 0xffff) + (s >> 16);
        return static_cast<uint16_t>(s);
    }
};

bool is_ipv6_ext(uint8_t nh) { return nh == 0 || nh == 43 || nh == 44 || nh == 60 || nh == 51; }

std::string fail(std::string* error, std::string why) {
    if (error) *error = why;
    return why;
}

}  // namespace

std::optional<ParsedFrame> parse_frame(const Bytes& b, std::string* error) {
    ParsedFrame f;
    if (b.size() < 14) {
        fail(error, "frame shorter than an Ethernet header");
        return std::nullopt;
    }
    std::memcpy(f.dst.bytes.data(), &b[0], 6);
    std::memcpy(f.src.bytes.data(), &b[6], 6);
    size_t off = 12;
    uint16_t type = rd16(b, off);
    off += 2;
    while (type == 0x8100 || type == 0x88a8) {
        if (b.size() < off + 4) {
            fail(error, "truncated VLAN tag");
            return std::nullopt;
        }
        f.vlan_ids.push_back(rd16(b, off) & 0x0fff);
        type = rd16(b, off + 2);
        off += 4;
    }
    f.ethertype = type;
    f.l3_offset = off;
    if (type != 0x0800 && type != 0x86dd) return f;

    uint8_t proto = 0;
    size_t l4_end = 0;  // end of the L3 payload according to the IP lengths
    if (type == 0x0800) {
        if (b.size() < off + 20) {
            fail(error, "truncated IPv4 header");
            return std::nullopt;
        }
        size_t ihl = (b[off] & 0x0f) * 4u;
        if ((b[off] >> 4) != 4 || ihl < 20 || b.size() < off + ihl) {
            fail(error, "bad IPv4 header");
            return std::nullopt;
        }
        f.ip_version = 4;
        char buf[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET, &b[off + 12], buf, sizeof buf);
        f.src_ip = buf;
        inet_ntop(AF_INET, &b[off + 16], buf, sizeof buf);
        f.dst_ip = buf;
        f.ttl = b[off + 8];
        f.ip_id = rd16(b, off + 4);
        uint16_t frag = rd16(b, off + 6);
        f.more_fragments = frag & 0x2000;
        f.frag_offset = static_cast<uint16_t>((frag & 0x1fff) * 8);
        f.is_fragment = f.more_fragments || f.frag_offset;
        proto = b[off + 9];
        l4_end = off + rd16(b, off + 2);
        off += ihl;
    } else {
        if (b.size() < off + 40) {
            fail(error, "truncated IPv6 header");
            return std::nullopt;
        }
        if ((b[off] >> 4) != 6) {
            fail(error, "bad IPv6 version");
            return std::nullopt;
        }
        f.ip_version = 6;
        char buf[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, &b[off + 8], buf, sizeof buf);
        f.src_ip = buf;
        inet_ntop(AF_INET6, &b[off + 24], buf, sizeof buf);
        f.dst_ip = buf;
        f.ttl = b[off + 7];
        proto = b[off + 6];
        l4_end = off + 40 + rd16(b, off + 4);
        off += 40;
        while (is_ipv6_ext(proto)) {
            if (b.size() < off + 8) {
                fail(error, "truncated IPv6 extension header");
                return std::nullopt;
            }
            f.ext_headers.push_back(proto);
            uint8_t next = b[off];
            size_t len;
            if (proto == 44) {
                len = 8;
                uint16_t fo = rd16(b, off + 2);
                f.frag_offset = fo & 0xfff8;
                f.more_fragments = fo & 1;
                f.is_fragment = true;
                f.frag_id = rd32(b, off + 4);
                f.ip_id = static_cast<uint16_t>(f.frag_id);
            } else if (proto == 51) {
                len = (b[off + 1] + 2u) * 4;
            } else {
                len = (b[off + 1] + 1u) * 8;
            }
            off += len;
            proto = next;
            if (f.frag_offset) break;  // no L4 header in a later fragment
        }
    }
    f.l4_proto = proto;
    f.l4_offset = off;
    f.l4_length = l4_end > off ? l4_end - off : 0;
    if (f.frag_offset) return f;

    const size_t need = proto == 6 ? 20 : 8;
    if (proto != 6 && proto != 17 && proto != 1 && proto != 58) return f;
    if (b.size() < off + need) return f;
    f.l4_present = true;
    if (proto == 6 || proto == 17) {
        f.sport = rd16(b, off);
        f.dport = rd16(b, off + 2);
    }
    if (proto == 6) {
        f.seq = rd32(b, off + 4);
        f.ack = rd32(b, off + 8);
        f.tcp_flags = b[off + 13];
        f.tcp_window = rd16(b, off + 14);
    } else if (proto == 17) {
        f.udp_length = rd16(b, off + 4);
    } else {
        f.icmp_type = b[off];
        f.icmp_code = b[off + 1];
        f.icmp_id = rd16(b, off + 4);
        f.icmp_seq = rd16(b, off + 6);
    }
    return f;
}

std::string ChecksumReport::describe() const {
    std::string s = "checked:";
    for (auto& c : checked) s += " " + c;
    if (!wrong.empty()) {
        s += "; WRONG:";
        for (auto& w : wrong) s += " " + w;
    }
    if (!problem.empty()) s += "; problem: " + problem;
    return s;
}

ChecksumReport verify_checksums(const Bytes& b) {
    ChecksumReport r;
    std::string err;
    auto f = parse_frame(b, &err);
    if (!f) {
        r.problem = err;
        return r;
    }
    if (f->ip_version == 0) {
        r.problem = "not an IP frame";
        return r;
    }
    size_t l3 = f->l3_offset;
    if (f->ip_version == 4) {
        size_t ihl = (b[l3] & 0x0f) * 4u;
        OnesSum s;
        s.bytes(&b[l3], ihl);
        r.checked.push_back("ipv4-header");
        if (s.folded() != 0xffff) r.wrong.push_back("ipv4-header");
    }
    if (f->is_fragment) return r;
    if (f->l4_proto != 6 && f->l4_proto != 17 && f->l4_proto != 1 && f->l4_proto != 58) return r;
    size_t len = f->l4_length;
    if (f->l4_offset + len > b.size()) {
        r.problem = "L4 segment shorter in the frame than the IP length says";
        return r;
    }
    const char* name = f->l4_proto == 6 ? "tcp" : f->l4_proto == 17 ? "udp" : f->l4_proto == 1 ? "icmp" : "icmpv6";
    r.checked.push_back(name);
    if (f->l4_proto == 17 && len >= 8 && rd16(b, f->l4_offset + 6) == 0) {
        if (f->ip_version == 4) return r;  // IPv4 UDP without a checksum
        r.wrong.push_back("udp-zero-in-ipv6");  // RFC 8200 8.1: receivers discard it
        return r;
    }
    OnesSum s;
    if (f->l4_proto != 1) {
        // Pseudo-header, read straight from the IP header.
        if (f->ip_version == 4) {
            s.bytes(&b[l3 + 12], 8);
            s.word(f->l4_proto);
            s.word(static_cast<uint16_t>(len));
        } else {
            s.bytes(&b[l3 + 8], 32);
            s.word(static_cast<uint16_t>(len >> 16));
            s.word(static_cast<uint16_t>(len));
            s.word(f->l4_proto);
        }
    }
    s.bytes(&b[f->l4_offset], len);
    if (s.folded() != 0xffff) r.wrong.push_back(name);
    return r;
}

}  // namespace sluice::test
