#include "observe/capture_pcap.h"

#include <arpa/inet.h>
#include <pcap/nflog.h>
#include <pcap/pcap.h>
#include <sys/socket.h>

#include <cstring>

namespace sluice::observe {
namespace {

constexpr size_t kEthHeader = 14;
constexpr uint16_t kEthIpv4 = 0x0800, kEthIpv6 = 0x86dd, kEthVlan = 0x8100, kEthQinq = 0x88a8;

// TLV: length (header + value, host order), type (host order), value, padded to 4.
void put_tlv(std::vector<uint8_t>& out, uint16_t type, const void* value, size_t size) {
    nflog_tlv_t tlv;
    tlv.tlv_length = static_cast<uint16_t>(sizeof(tlv) + size);
    tlv.tlv_type = type;
    const auto* t = reinterpret_cast<const uint8_t*>(&tlv);
    out.insert(out.end(), t, t + sizeof(tlv));
    const auto* v = static_cast<const uint8_t*>(value);
    out.insert(out.end(), v, v + size);
    while (out.size() % 4) out.push_back(0);
}

}  // namespace

std::vector<uint8_t> nflog_record(std::span<const uint8_t> frame, uint32_t ifindex, uint16_t reason_id,
                                  const std::string& reason) {
    // Where the IP header starts: after the Ethernet header and up to two VLAN tags.
    size_t l3 = 0;
    uint16_t ethertype = 0;
    if (frame.size() >= kEthHeader) {
        l3 = kEthHeader;
        ethertype = static_cast<uint16_t>(frame[12] << 8 | frame[13]);
        for (int tags = 0; tags < 2 && (ethertype == kEthVlan || ethertype == kEthQinq) && frame.size() >= l3 + 4;
             ++tags) {
            ethertype = static_cast<uint16_t>(frame[l3 + 2] << 8 | frame[l3 + 3]);
            l3 += 4;
        }
    }
    const uint8_t family = ethertype == kEthIpv4 ? AF_INET : ethertype == kEthIpv6 ? AF_INET6 : AF_UNSPEC;
    nflog_hdr_t hdr{};
    hdr.nflog_family = family;
    hdr.nflog_version = 0;
    hdr.nflog_rid = htons(reason_id);
    const auto* h = reinterpret_cast<const uint8_t*>(&hdr);
    // Built from the header rather than inserted into an empty vector: GCC
    // 12 at -O3 warns (-Wstringop-overflow) about the insert, wrongly.
    std::vector<uint8_t> out(h, h + sizeof(hdr));
    nflog_packet_hdr_t packet{};
    packet.hw_protocol = htons(ethertype);
    put_tlv(out, NFULA_PACKET_HDR, &packet, sizeof(packet));
    const uint32_t indev = htonl(ifindex);
    put_tlv(out, NFULA_IFINDEX_INDEV, &indev, sizeof(indev));
    const std::string prefix = reason;   // NUL-terminated, the NUL counted
    put_tlv(out, NFULA_PREFIX, prefix.c_str(), prefix.size() + 1);
    if (l3) put_tlv(out, NFULA_HWHEADER, frame.data(), l3);
    // Not IP (or too short to tell): the whole frame as the payload.
    const size_t from = family == AF_UNSPEC ? 0 : l3;
    put_tlv(out, NFULA_PAYLOAD, frame.data() + from, frame.size() - from);
    return out;
}

struct CapturePcapWriter::Handles {
    pcap_t* pcap = nullptr;
    pcap_dumper_t* dumper = nullptr;
    ~Handles() {
        if (dumper) pcap_dump_close(dumper);
        if (pcap) pcap_close(pcap);
    }
};

Result<std::unique_ptr<CapturePcapWriter>> CapturePcapWriter::open(const std::string& path) {
    std::unique_ptr<CapturePcapWriter> w(new CapturePcapWriter());
    w->h_ = std::make_unique<Handles>();
    w->h_->pcap = pcap_open_dead(DLT_NFLOG, 65535);
    if (!w->h_->pcap) return make_error("libpcap: cannot open a pcap handle for NFLOG records");
    w->h_->dumper = pcap_dump_open(w->h_->pcap, path.c_str());
    if (!w->h_->dumper)
        return make_error(ErrorCode::PermissionDenied,
                          "cannot write " + path + ": " + pcap_geterr(w->h_->pcap));
    return w;
}

CapturePcapWriter::~CapturePcapWriter() = default;

void CapturePcapWriter::write(std::chrono::system_clock::time_point when, std::span<const uint8_t> frame,
                              uint32_t wire_len, uint32_t ifindex, uint16_t reason_id, const std::string& reason) {
    const auto record = nflog_record(frame, ifindex, reason_id, reason);
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(when.time_since_epoch()).count();
    pcap_pkthdr hdr{};
    hdr.ts.tv_sec = static_cast<time_t>(us / 1'000'000);
    hdr.ts.tv_usec = static_cast<suseconds_t>(us % 1'000'000);
    hdr.caplen = static_cast<uint32_t>(record.size());
    // The record's length had the whole frame been kept.
    hdr.len = hdr.caplen + (wire_len > frame.size() ? wire_len - static_cast<uint32_t>(frame.size()) : 0);
    pcap_dump(reinterpret_cast<u_char*>(h_->dumper), &hdr, record.data());
}

Status CapturePcapWriter::flush() {
    if (pcap_dump_flush(h_->dumper) != 0) return make_error("cannot flush the pcap file");
    return {};
}

}  // namespace sluice::observe
