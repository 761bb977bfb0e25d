// Reads capture_events (maps/observe.h), the perf event array the datapath's
// capture_packet() writes to: one record per captured packet, a
// capture_record followed by its frame bytes.
//
// Why not libbpf's perf_buffer__new: it opens every CPU's event with
// wakeup_events 1, so every record also queues an irq_work to wake the
// reader, and in a VM that self-interrupt costs a few microseconds of the
// packet's own CPU, about six times what dropping the packet costs.
// Here the kernel wakes the reader once per kWakeupEvents records, and
// poll() reads whatever is waiting when its timeout passes, so a lone
// record is delivered within that timeout.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "common/result.h"

struct perf_buffer;

namespace sluice::observe {

class CaptureEventsReader {
public:
    // One record's bytes (a capture_record and the frame after it).
    using OnRecord = std::function<void(std::span<const uint8_t>)>;
    // Records the kernel dropped because the reader fell behind.
    using OnLost = std::function<void(uint64_t)>;

    static constexpr uint32_t kWakeupEvents = 64;
    // Per CPU: 64 pages (256 KiB) hold ~170 full-size frames' records
    // (more than 2,000 of a SYN's).
    static constexpr size_t kDefaultPages = 64;

    static Result<std::unique_ptr<CaptureEventsReader>> open(int capture_events_fd, OnRecord on_record,
                                                              OnLost on_lost, size_t pages = kDefaultPages);
    ~CaptureEventsReader();
    CaptureEventsReader(const CaptureEventsReader&) = delete;
    CaptureEventsReader& operator=(const CaptureEventsReader&) = delete;

    // Waits up to timeout_ms for a wakeup, then reads every record waiting
    // on every CPU (woken or not).
    Status poll(int timeout_ms);
    // Reads every record waiting, without waiting.
    Status consume();

    struct Callbacks {
        OnRecord on_record;
        OnLost on_lost;
    };

private:
    CaptureEventsReader() = default;

    perf_buffer* pb_ = nullptr;
    Callbacks callbacks_;  // perf_buffer's context: its address must not move
};

}  // namespace sluice::observe
