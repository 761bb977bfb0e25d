// The pcap file `sluice capture` writes (libpcap's writer): link type NFLOG
// (239), the one that carries a text per packet, so each dropped packet
// keeps its drop reason (the NFLOG prefix, which Wireshark shows as
// "Prefix"; tcpdump prints the IP packet inside). Each record holds the
// Ethernet header (NFULA_HWHEADER), the arriving interface
// (NFULA_IFINDEX_INDEV), the reason and the packet from its IP header on
// (NFULA_PAYLOAD); the NFLOG resource id is the reason's number.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::observe {

// One NFLOG record (what goes after the pcap record header), pure for tests.
// frame: the captured bytes from the Ethernet header on.
std::vector<uint8_t> nflog_record(std::span<const uint8_t> frame, uint32_t ifindex, uint16_t reason_id,
                                  const std::string& reason);

class CapturePcapWriter {
public:
    // Creates (truncates) path; "-" writes to standard output.
    static Result<std::unique_ptr<CapturePcapWriter>> open(const std::string& path);
    ~CapturePcapWriter();
    CapturePcapWriter(const CapturePcapWriter&) = delete;
    CapturePcapWriter& operator=(const CapturePcapWriter&) = delete;

    // wire_len: the frame's length on the wire (the capture may hold fewer bytes).
    void write(std::chrono::system_clock::time_point when, std::span<const uint8_t> frame, uint32_t wire_len,
               uint32_t ifindex, uint16_t reason_id, const std::string& reason);
    Status flush();

private:
    CapturePcapWriter() = default;
    struct Handles;
    std::unique_ptr<Handles> h_;
};

}  // namespace sluice::observe
