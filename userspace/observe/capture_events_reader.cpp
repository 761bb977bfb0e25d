#include "observe/capture_events_reader.h"

#include <bpf/libbpf.h>
#include <linux/perf_event.h>

#include <cerrno>
#include <cstring>

namespace sluice::observe {

namespace {

// The layouts of the two record types an output-only BPF event produces
// (perf_event_open(2): PERF_RECORD_SAMPLE with PERF_SAMPLE_RAW, and
// PERF_RECORD_LOST).
struct RawSample {
    perf_event_header header;
    uint32_t size;
    uint8_t data[];
};

struct LostRecords {
    perf_event_header header;
    uint64_t id;
    uint64_t lost;
};

bpf_perf_event_ret on_event(void* ctx, int, perf_event_header* event) {
    auto* c = static_cast<CaptureEventsReader::Callbacks*>(ctx);
    if (event->type == PERF_RECORD_SAMPLE && event->size >= sizeof(RawSample)) {
        const auto* s = reinterpret_cast<const RawSample*>(event);
        // A sample's raw bytes never run past its header's size.
        const size_t room = event->size - sizeof(RawSample);
        c->on_record({s->data, s->size < room ? s->size : room});
    } else if (event->type == PERF_RECORD_LOST && event->size >= sizeof(LostRecords)) {
        c->on_lost(reinterpret_cast<const LostRecords*>(event)->lost);
    }
    return LIBBPF_PERF_EVENT_CONT;
}

}  // namespace

Result<std::unique_ptr<CaptureEventsReader>> CaptureEventsReader::open(int capture_events_fd, OnRecord on_record,
                                                                        OnLost on_lost, size_t pages) {
    std::unique_ptr<CaptureEventsReader> r(new CaptureEventsReader());
    r->callbacks_ = {std::move(on_record), std::move(on_lost)};
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_BPF_OUTPUT;
    attr.sample_type = PERF_SAMPLE_RAW;
    attr.sample_period = 1;
    attr.wakeup_events = kWakeupEvents;
    r->pb_ = perf_buffer__new_raw(capture_events_fd, pages, &attr, &on_event, &r->callbacks_, nullptr);
    if (!r->pb_) return make_error(std::string("cannot open the capture_events perf buffer: ") + std::strerror(errno));
    return r;
}

CaptureEventsReader::~CaptureEventsReader() { perf_buffer__free(pb_); }

Status CaptureEventsReader::poll(int timeout_ms) {
    const int n = perf_buffer__poll(pb_, timeout_ms);
    if (n < 0 && n != -EINTR) return make_error(std::string("reading capture_events: ") + std::strerror(-n));
    // Woken buffers were read; the others may hold fewer than
    // kWakeupEvents records.
    return consume();
}

Status CaptureEventsReader::consume() {
    const int err = perf_buffer__consume(pb_);
    if (err < 0) return make_error(std::string("reading capture_events: ") + std::strerror(-err));
    return {};
}

}  // namespace sluice::observe
