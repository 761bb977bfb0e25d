// The flow log (docs/operations.md "Flow logs"): the datapath's flow events
// (flow_events ring buffer: open, deny, and closes it made) and the session
// GC's closes, written as JSON lines to the configured output. Events over
// the rate limit are counted, never lost silently: the datapath counts its
// own (flow-log-event-rate-limited, -ring-full), this counts the GC's closes
// over the limit and failed writes.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>
#include <string>

#include "common/result.h"
#include "compiler/compiled_config.h"
#include "config/config.h"
#include "loader/session_table.h"
#include "observe/flow_log_output.h"
#include "observe/flow_record.h"

struct ring_buffer;

namespace sluice {

struct FlowLogCounters {
    uint64_t open = 0, deny = 0, close = 0;   // lines written
    uint64_t close_rate_limited = 0;          // GC closes over the limit
    uint64_t write_errors = 0;                // lines the output refused
    uint64_t no_output = 0;                   // events while no output was open
};

class FlowLogger {
public:
    explicit FlowLogger(int flow_events_fd);
    ~FlowLogger();
    FlowLogger(const FlowLogger&) = delete;
    FlowLogger& operator=(const FlowLogger&) = delete;

    // Before the flip: opens the output the config asks for, unless it is
    // the one already open. An error refuses the config (nothing changed).
    Status prepare(const config::Config& parsed);
    // After the flip: the prepared output and the names of the generation.
    void adopt(const config::Config& parsed, const CompiledConfig& compiled, uint32_t config_generation);

    int fd() const;     // readable when FLOW_EVENTS_WAKEUP_BYTES are waiting; -1 without the ring
    void drain();       // writes every pending datapath event (cheap when there is none)
    // Writes the lines flow_closed() queued (the daemon calls it after a GC
    // walk): one batch for the output, whose file gets one write(2).
    void flush();
    // How often the daemon must drain() while flow logging is on (the
    // datapath wakes it only for a large backlog); 0 while it is off.
    uint64_t drain_interval_ns() const;
    // A flow the GC removed (entry: its initiator or the one left).
    void flow_closed(const SessionEntry& entry, const SessionEntry* peer, uint64_t now_ns);

    FlowLogCounters counters() const { return counters_; }
    std::string output_description() const;

private:
    static int on_event(void* self, void* data, size_t size);
    // Formats the line and queues it; flush() writes the queue.
    void queue(const flow_event& e);
    bool close_admitted(uint64_t now_ns);

    ring_buffer* ring_ = nullptr;
    std::unique_ptr<observe::FlowLogOutput> output_, prepared_;
    observe::FlowLogDestination destination_, prepared_destination_;
    bool prepared_valid_ = false;
    bool enabled_ = false;
    bool failing_ = false;   // the last write failed (logged once)
    std::map<uint32_t, observe::FlowNames> names_;   // by config generation, the last few
    uint32_t generation_ = 0;
    // The GC's closes: a GCRA like the datapath's, at the configured rate.
    uint64_t close_interval_ns_ = 0, close_tolerance_ns_ = 0, close_tat_ns_ = 0;
    FlowLogCounters counters_;
    std::vector<observe::FlowLogLine> queued_;
    std::vector<uint8_t> queued_types_;   // each queued line's FLOW_EVENT_*
};

// The output a config's flow-log section describes.
observe::FlowLogDestination flow_log_destination(const config::FlowLogConfig& log);

}  // namespace sluice
