// `sluice trace --in IFACE (packet fields | --pcap FILE) [--json]`: what the
// running datapath would do with a packet, without sending it
// (docs/operations.md "Packet tracer"): the real XDP programs run it with
// BPF_PROG_TEST_RUN against the live rule base and the live flow it belongs
// to, in a copy of the datapath that changes nothing of the running one
// (loader/trace_datapath.h). It prints the verdict, the counter it was
// counted under, the policy or filter rule that decided, the translation
// and the egress interface.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/trace_packet.h"

namespace sluice::cli {

struct TraceOptions {
    std::string instance = "default";
    std::string in;            // the interface the packet arrives on
    PacketFields fields;
    std::string pcap;          // frames from a file instead of fields
    std::vector<std::string> given;  // the packet-field options on the command line ("--sport", ...)
    bool json = false;
};

int trace(const TraceOptions& options, std::ostream& out, std::ostream& err);

}  // namespace sluice::cli
