#include "bench/smallpkt_trafgen.h"

#include <arpa/inet.h>

#include <array>
#include <cstdio>

#include "bench/synflood_trafgen.h"

namespace sluice::bench {
namespace {

constexpr size_t kEthernet = 14, kIpv4 = 20, kUdp = 8;

void put16(std::vector<uint8_t>& f, size_t at, uint16_t v) {
    f[at] = static_cast<uint8_t>(v >> 8);
    f[at + 1] = static_cast<uint8_t>(v & 0xff);
}

// The ones'-complement sum of 16-bit words (RFC 1071), not yet folded.
uint32_t sum16(const uint8_t* p, size_t n, uint32_t sum = 0) {
    for (size_t i = 0; i + 1 < n; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
    if (n % 2) sum += static_cast<uint32_t>(p[n - 1] << 8);
    return sum;
}

uint16_t folded(uint32_t sum) {
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum & 0xffff);
}

Result<std::array<uint8_t, 4>> ipv4(const std::string& text) {
    in_addr a{};
    if (inet_pton(AF_INET, text.c_str(), &a) != 1) return make_error("not an IPv4 address: '" + text + "'");
    std::array<uint8_t, 4> out{};
    const auto* b = reinterpret_cast<const uint8_t*>(&a.s_addr);
    for (int i = 0; i < 4; ++i) out[i] = b[i];
    return out;
}

}  // namespace

Result<std::vector<uint8_t>> udp_flow_frame(const UdpFlowsSpec& spec, int flow) {
    if (flow < 0 || flow >= spec.flows) return make_error("no flow " + std::to_string(flow) + " in " +
                                                           std::to_string(spec.flows) + " flows");
    if (spec.first_source_port + spec.flows - 1 > 65535)
        return make_error("source ports " + std::to_string(spec.first_source_port) + " + " +
                          std::to_string(spec.flows) + " flows run past 65535");
    if (spec.frame_bytes < kEthernet + kIpv4 + kUdp)
        return make_error("a " + std::to_string(spec.frame_bytes) + "-byte frame cannot hold Ethernet, IPv4 and UDP");
    auto dst_mac = parse_mac(spec.destination_mac);
    if (!dst_mac) return dst_mac.error();
    auto src_mac = parse_mac(spec.source_mac);
    if (!src_mac) return src_mac.error();
    auto src = ipv4(spec.source);
    if (!src) return src.error();
    auto dst = ipv4(spec.destination);
    if (!dst) return dst.error();

    std::vector<uint8_t> f(spec.frame_bytes, 0);
    std::copy(dst_mac->begin(), dst_mac->end(), f.begin());
    std::copy(src_mac->begin(), src_mac->end(), f.begin() + 6);
    put16(f, 12, 0x0800);
    const size_t ip = kEthernet, udp = kEthernet + kIpv4;
    const auto ip_length = static_cast<uint16_t>(spec.frame_bytes - kEthernet);
    const auto udp_length = static_cast<uint16_t>(ip_length - kIpv4);
    f[ip] = 0x45;
    put16(f, ip + 2, ip_length);
    put16(f, ip + 6, 0x4000);  // DF
    f[ip + 8] = 64;
    f[ip + 9] = 17;  // UDP
    std::copy(src->begin(), src->end(), f.begin() + ip + 12);
    std::copy(dst->begin(), dst->end(), f.begin() + ip + 16);
    put16(f, ip + 10, folded(sum16(&f[ip], kIpv4)));

    put16(f, udp, static_cast<uint16_t>(spec.first_source_port + flow));
    put16(f, udp + 2, spec.destination_port);
    put16(f, udp + 4, udp_length);
    // Pseudo-header: source, destination, protocol, UDP length.
    uint32_t sum = sum16(&f[ip + 12], 8);
    sum += 17 + udp_length;
    uint16_t check = folded(sum16(&f[udp], udp_length, sum));
    put16(f, udp + 6, check == 0 ? 0xffff : check);  // 0 would mean "no checksum"
    return f;
}

Result<std::string> trafgen_udp_flows_config(const UdpFlowsSpec& spec) {
    std::string out;
    char buf[8];
    for (int flow = 0; flow < spec.flows; ++flow) {
        auto frame = udp_flow_frame(spec, flow);
        if (!frame) return frame.error();
        out += "{";
        for (size_t i = 0; i < frame->size(); ++i) {
            std::snprintf(buf, sizeof buf, "0x%02x", (*frame)[i]);
            out += (i == 0 ? "\n  " : i % 16 == 0 ? ",\n  " : ", ") + std::string(buf);
        }
        out += "\n}\n";
    }
    return out;
}

}  // namespace sluice::bench
