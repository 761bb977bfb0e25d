// `sluice capture [--reason R] [--count N] [--duration S] [--sample N]
// [--snaplen N] -w FILE.pcap`: the packets the datapath drops (or passes
// under one reason), with their reason, into a pcap file (NFLOG link type,
// observe/capture_pcap.h). It turns capture on in the pinned capture_cfg
// while it runs and off when it stops; the daemon turns it off if this
// process dies first. One capture at a time per instance.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace sluice::cli {

struct CaptureOptions {
    std::string instance = "default";
    std::string reason;          // "": every drop reason
    uint64_t count = 0;          // 0: until --duration or a signal
    double duration_s = 0;       // 0: until --count or a signal
    uint32_t sample_every = 1;
    uint32_t snaplen = 256;
    std::string file;            // -w; "-" = standard output
    bool json = false;           // the summary as JSON
};

int capture(const CaptureOptions& options, std::ostream& out, std::ostream& err);

}  // namespace sluice::cli
