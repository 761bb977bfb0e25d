#include "daemon/flow_logger.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "daemon/daemon_log.h"

namespace sluice {
namespace {

bool same_destination(const observe::FlowLogDestination& a, const observe::FlowLogDestination& b) {
    return a.kind == b.kind && a.path == b.path && a.max_bytes == b.max_bytes && a.keep == b.keep &&
           a.syslog_socket == b.syslog_socket && a.udp_server == b.udp_server && a.facility == b.facility;
}

bool logs_anything(const config::Config& c) {
    if (c.default_log) return true;
    for (const auto& p : c.policies)
        if (p.log) return true;
    return false;
}

}  // namespace

observe::FlowLogDestination flow_log_destination(const config::FlowLogConfig& log) {
    observe::FlowLogDestination d;
    d.kind = log.output == config::FlowLogOutputKind::file     ? observe::FlowLogDestination::Kind::file
             : log.output == config::FlowLogOutputKind::syslog ? observe::FlowLogDestination::Kind::syslog
                                                                : observe::FlowLogDestination::Kind::stdout_stream;
    d.path = log.path;
    d.max_bytes = log.max_bytes;
    d.keep = log.keep;
    d.syslog_socket = log.syslog_socket;
    if (log.syslog_server) d.udp_server = log.syslog_server->text;
    d.facility = log.facility;
    return d;
}

FlowLogger::FlowLogger(int flow_events_fd) {
    if (flow_events_fd >= 0) ring_ = ring_buffer__new(flow_events_fd, &FlowLogger::on_event, this, nullptr);
    if (!ring_) daemon_log("warning: cannot read the flow_events ring buffer; no flow log from the datapath");
}

FlowLogger::~FlowLogger() {
    flush();
    if (ring_) ring_buffer__free(ring_);
}

int FlowLogger::fd() const { return ring_ ? ring_buffer__epoll_fd(ring_) : -1; }

Status FlowLogger::prepare(const config::Config& parsed) {
    prepared_.reset();
    prepared_valid_ = true;
    if (!logs_anything(parsed)) {
        prepared_destination_ = {};
        prepared_valid_ = false;
        return {};
    }
    prepared_destination_ = flow_log_destination(parsed.flow_log);
    if (output_ && same_destination(prepared_destination_, destination_)) return {};
    // The default file's directory is ours to make; one the config names is not.
    if (prepared_destination_.kind == observe::FlowLogDestination::Kind::file &&
        prepared_destination_.path == config::kDefaultFlowLogPath) {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(prepared_destination_.path).parent_path(), ec);
    }
    auto opened = observe::FlowLogOutput::open(prepared_destination_);
    if (!opened) {
        prepared_valid_ = false;
        return make_error(parsed.file + ": flow-log: " + opened.error().message);
    }
    prepared_ = std::move(opened.value());
    return {};
}

void FlowLogger::adopt(const config::Config& parsed, const CompiledConfig& compiled, uint32_t config_generation) {
    flush();   // what was queued goes where it was meant to
    enabled_ = prepared_valid_;
    if (!enabled_) {
        output_.reset();
    } else if (prepared_) {
        output_ = std::move(prepared_);
        destination_ = prepared_destination_;
        daemon_log("flow log: " + output_->describe());
    }
    prepared_valid_ = false;
    observe::FlowNames names;
    for (const auto& p : compiled.policies) {
        if (names.policies.size() <= p.id) names.policies.resize(p.id + 1);
        names.policies[p.id] = p.name;
    }
    names.zones.resize(compiled.zones.size() + 1);
    for (const auto& z : compiled.zones)
        if (z.id < names.zones.size()) names.zones[z.id] = z.name;
    names_[config_generation] = std::move(names);
    while (names_.size() > 4) names_.erase(names_.begin());
    generation_ = config_generation;
    close_interval_ns_ = compiled.flow_log_interval_ns;
    close_tolerance_ns_ = compiled.flow_log_tolerance_ns;
    (void)parsed;
}

int FlowLogger::on_event(void* self, void* data, size_t size) {
    if (size < sizeof(flow_event)) return 0;
    flow_event e;
    std::memcpy(&e, data, sizeof(e));
    static_cast<FlowLogger*>(self)->queue(e);
    return 0;
}

void FlowLogger::drain() {
    if (!ring_) return;
    ring_buffer__consume(ring_);
    flush();
}

uint64_t FlowLogger::drain_interval_ns() const {
    return ring_ && enabled_ ? uint64_t{FLOW_EVENTS_DRAIN_MS} * 1'000'000 : 0;
}

bool FlowLogger::close_admitted(uint64_t now) {
    if (!close_interval_ns_) return true;
    const uint64_t tat = std::max(close_tat_ns_, now);
    if (tat - now > close_tolerance_ns_) return false;
    close_tat_ns_ = tat + close_interval_ns_;
    return true;
}

void FlowLogger::flow_closed(const SessionEntry& entry, const SessionEntry* peer, uint64_t now_ns) {
    if (!enabled_ || !(entry.value.flags & SESSION_F_LOG_CLOSE)) return;
    if (!close_admitted(now_ns)) {
        ++counters_.close_rate_limited;
        return;
    }
    queue(observe::close_event_of(entry, peer, now_ns));
}

void FlowLogger::queue(const flow_event& e) {
    if (!output_) {
        ++counters_.no_output;
        return;
    }
    // Bounded: a ring full of events is written a few thousand lines at a time.
    constexpr size_t kMaxQueued = 4096;
    if (queued_.size() >= kMaxQueued) flush();
    // Names of the generation that decided; a newer one's if it is gone.
    auto it = names_.find(e.config_generation);
    static const observe::FlowNames none;
    const observe::FlowNames& names = it != names_.end() ? it->second : names_.empty() ? none : names_.rbegin()->second;
    const uint64_t mono = coarse_now_ns();
    const auto when = std::chrono::system_clock::now() -
                      std::chrono::nanoseconds(mono > e.time_ns ? mono - e.time_ns : 0);
    const auto severity = e.type == FLOW_EVENT_DENY ? observe::FlowLogSeverity::notice : observe::FlowLogSeverity::info;
    queued_.push_back({observe::flow_record_json(e, names, when), observe::flow_event_msg_id(e), severity, false});
    queued_types_.push_back(e.type);
}

void FlowLogger::flush() {
    if (queued_.empty()) return;
    if (!output_) {   // a reload turned logging off in between
        counters_.no_output += queued_.size();
    } else {
        // A failed rotation still writes the line (and says so): what counts
        // is whether the line went out.
        (void)output_->write_batch(queued_);
        for (size_t i = 0; i < queued_.size(); ++i) {
            if (!queued_[i].delivered) {
                // Said once per run of failures (the counter has them all).
                if (!failing_)
                    daemon_log("flow log: cannot write to " + output_->describe() +
                               "; events are counted as write-error until it works again");
                failing_ = true;
                ++counters_.write_errors;
                continue;
            }
            if (failing_) daemon_log("flow log: writing to " + output_->describe() + " again");
            failing_ = false;
            if (queued_types_[i] == FLOW_EVENT_OPEN) ++counters_.open;
            else if (queued_types_[i] == FLOW_EVENT_DENY) ++counters_.deny;
            else ++counters_.close;
        }
    }
    queued_.clear();
    queued_types_.clear();
}

std::string FlowLogger::output_description() const { return output_ ? output_->describe() : "none"; }

}  // namespace sluice
