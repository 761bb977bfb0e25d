#include "cli/trace_packet.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pcap/pcap.h>

#include <cstring>

namespace sluice::cli {
namespace {

uint32_t sum16(const uint8_t* p, size_t n, uint32_t sum = 0) {
    for (size_t i = 0; i + 1 < n; i += 2) sum += uint32_t(p[i] << 8 | p[i + 1]);
    if (n & 1) sum += uint32_t(p[n - 1] << 8);
    return sum;
}

uint16_t fold(uint32_t sum) {
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

void put16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
    b[at] = uint8_t(v >> 8);
    b[at + 1] = uint8_t(v);
}

Result<uint8_t> protocol_number(const std::string& p, bool v6) {
    if (p == "tcp") return uint8_t(IPPROTO_TCP);
    if (p == "udp") return uint8_t(IPPROTO_UDP);
    if (p == "icmp") return v6 ? uint8_t(IPPROTO_ICMPV6) : uint8_t(IPPROTO_ICMP);
    if (p == "icmpv6") return uint8_t(IPPROTO_ICMPV6);
    try {
        size_t end = 0;
        const int n = std::stoi(p, &end);
        if (end == p.size() && n >= 0 && n <= 255) return uint8_t(n);
    } catch (...) {
    }
    return make_error("--protocol: \"" + p + "\" is not tcp, udp, icmp, icmpv6 or a number 0-255");
}

}  // namespace

Status check_fields_apply(const PacketFields& f, const std::vector<std::string>& given, bool from_pcap) {
    if (given.empty()) return {};
    if (from_pcap) {
        std::string names;
        for (const auto& g : given) names += (names.empty() ? "" : ", ") + g;
        return make_error(names + ": --pcap traces the file's packets as they are; describe a packet with these "
                                  "options or give --pcap, not both");
    }
    const bool v6 = f.src.find(':') != std::string::npos;
    auto proto = protocol_number(f.protocol, v6);
    if (!proto) return proto.error();
    const uint8_t p = proto.value();
    const bool tcp = p == IPPROTO_TCP, udp = p == IPPROTO_UDP, icmp = p == IPPROTO_ICMP || p == IPPROTO_ICMPV6;
    std::string wrong;
    for (const auto& g : given) {
        const bool applies = (g == "--sport" || g == "--dport")         ? tcp || udp
                             : g == "--flags"                           ? tcp
                             : (g == "--icmp-type" || g == "--icmp-code") ? icmp
                                                                          : true;
        if (!applies) wrong += (wrong.empty() ? "" : ", ") + g;
    }
    if (wrong.empty()) return {};
    return make_error(wrong + ": not part of a --protocol " + f.protocol +
                      " packet (ports: tcp and udp; --flags: tcp; --icmp-type/--icmp-code: icmp and icmpv6)");
}

Result<std::vector<uint8_t>> build_frame(const PacketFields& f, const std::array<uint8_t, 6>& dst_mac) {
    uint8_t src[16] = {}, dst[16] = {};
    const bool v6 = f.src.find(':') != std::string::npos;
    const int af = v6 ? AF_INET6 : AF_INET;
    if (inet_pton(af, f.src.c_str(), src) != 1) return make_error("--src: \"" + f.src + "\" is not an address");
    if (inet_pton(af, f.dst.c_str(), dst) != 1)
        return make_error("--dst: \"" + f.dst + "\" is not an " + (v6 ? "IPv6" : "IPv4") + " address like --src");
    // A frame of at most 1514 bytes: the L4 header and payload in 1460.
    if (f.payload > 1400)
        return make_error("--payload: " + std::to_string(f.payload) + " bytes is more than a frame carries here (at most 1400)");
    auto proto = protocol_number(f.protocol, v6);
    if (!proto) return proto.error();
    const uint8_t p = proto.value();
    if (p == IPPROTO_ICMP && v6) return make_error("--protocol icmp with IPv6 addresses: use icmpv6");
    if (p == IPPROTO_ICMPV6 && !v6) return make_error("--protocol icmpv6 with IPv4 addresses: use icmp");

    // L4 header and payload.
    std::vector<uint8_t> l4;
    if (p == IPPROTO_TCP) {
        l4.assign(20, 0);
        put16(l4, 0, f.src_port);
        put16(l4, 2, f.dst_port);
        l4[4] = 0x12; l4[5] = 0x34; l4[6] = 0x56; l4[7] = 0x78;   // sequence number
        uint8_t flags = 0;
        for (char c : f.tcp_flags) {
            switch (c) {
            case 'F': flags |= 0x01; break;
            case 'S': flags |= 0x02; break;
            case 'R': flags |= 0x04; break;
            case 'P': flags |= 0x08; break;
            case 'A': flags |= 0x10; break;
            case 'U': flags |= 0x20; break;
            default: return make_error(std::string("--flags: '") + c + "' is not one of F S R P A U");
            }
        }
        if (flags & 0x10) { l4[8] = 0x01; }    // some acknowledgment number
        l4[12] = 5 << 4;
        l4[13] = flags;
        put16(l4, 14, 64240);
    } else if (p == IPPROTO_UDP) {
        l4.assign(8, 0);
        put16(l4, 0, f.src_port);
        put16(l4, 2, f.dst_port);
        put16(l4, 4, static_cast<uint16_t>(8 + f.payload));
    } else if (p == IPPROTO_ICMP || p == IPPROTO_ICMPV6) {
        l4.assign(8, 0);
        l4[0] = f.icmp_type != 0xff ? f.icmp_type : (v6 ? 128 : 8);
        l4[1] = f.icmp_code;
        put16(l4, 4, f.icmp_id);
        put16(l4, 6, 1);
    }
    l4.resize(l4.size() + f.payload, 'x');

    std::vector<uint8_t> frame(14, 0);
    std::memcpy(frame.data(), dst_mac.data(), 6);
    const uint8_t src_mac[6] = {0x02, 0x00, 0x5e, 0x1c, 0x00, 0x01};   // locally administered
    std::memcpy(frame.data() + 6, src_mac, 6);
    put16(frame, 12, v6 ? 0x86dd : 0x0800);
    const size_t l3 = frame.size();
    if (!v6) {
        frame.resize(l3 + 20, 0);
        frame[l3] = 0x45;
        put16(frame, l3 + 2, static_cast<uint16_t>(20 + l4.size()));
        put16(frame, l3 + 4, 0x5e1c);
        frame[l3 + 8] = f.ttl;
        frame[l3 + 9] = p;
        std::memcpy(&frame[l3 + 12], src, 4);
        std::memcpy(&frame[l3 + 16], dst, 4);
        put16(frame, l3 + 10, fold(sum16(&frame[l3], 20)));
    } else {
        frame.resize(l3 + 40, 0);
        frame[l3] = 0x60;
        put16(frame, l3 + 4, static_cast<uint16_t>(l4.size()));
        frame[l3 + 6] = p;
        frame[l3 + 7] = f.ttl;
        std::memcpy(&frame[l3 + 8], src, 16);
        std::memcpy(&frame[l3 + 24], dst, 16);
    }
    // L4 checksum over the pseudo-header (ICMPv4: the message only).
    const size_t csum_at = p == IPPROTO_TCP ? 16 : p == IPPROTO_UDP ? 6 : 2;
    if (p == IPPROTO_TCP || p == IPPROTO_UDP || p == IPPROTO_ICMP || p == IPPROTO_ICMPV6) {
        uint32_t sum = 0;
        if (p != IPPROTO_ICMP) {
            sum = sum16(src, v6 ? 16 : 4, sum);
            sum = sum16(dst, v6 ? 16 : 4, sum);
            sum += p;
            sum += static_cast<uint32_t>(l4.size());
        }
        sum = sum16(l4.data(), l4.size(), sum);
        uint16_t c = fold(sum);
        if (p == IPPROTO_UDP && c == 0) c = 0xffff;
        put16(l4, csum_at, c);
    }
    frame.insert(frame.end(), l4.begin(), l4.end());
    return frame;
}

Result<std::vector<std::vector<uint8_t>>> read_pcap_frames(const std::string& path) {
    char err[PCAP_ERRBUF_SIZE] = {};
    pcap_t* p = pcap_open_offline(path.c_str(), err);
    if (!p) return make_error(ErrorCode::NotFound, "cannot read " + path + ": " + err);
    std::vector<std::vector<uint8_t>> frames;
    if (const int link = pcap_datalink(p); link != DLT_EN10MB) {
        pcap_close(p);
        return make_error(path + ": not Ethernet frames (link type " + std::to_string(link) +
                          "); capture with tcpdump -w on an Ethernet interface");
    }
    pcap_pkthdr* h;
    const u_char* data;
    while (pcap_next_ex(p, &h, &data) == 1) frames.emplace_back(data, data + h->caplen);
    pcap_close(p);
    return frames;
}

}  // namespace sluice::cli
