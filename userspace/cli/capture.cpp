#include "cli/capture.h"

#include <bpf/bpf.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "cli/pinned_map.h"
#include "config/suggest.h"
#include "daemon/state_file.h"
#include "loader/instance_paths.h"
#include "loader/stat_names.h"
#include "observe/capture_events_reader.h"
#include "observe/capture_pcap.h"

extern "C" {
#include "map_names.h"
#include "observe.h"
}

namespace sluice::cli {
namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

struct Session {
    observe::CapturePcapWriter* writer = nullptr;
    uint64_t written = 0;
    uint64_t lost = 0;
    uint64_t limit = 0;
    std::map<std::string, uint64_t> by_reason;
    // bpf_ktime_get_ns() is CLOCK_MONOTONIC: records are stamped from it.
    std::chrono::system_clock::time_point wall0;
    uint64_t mono0 = 0;
};

uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

void on_sample(Session* s, std::span<const uint8_t> data) {
    if (data.size() < sizeof(capture_record) || (s->limit && s->written >= s->limit)) return;
    capture_record r;
    std::memcpy(&r, data.data(), sizeof(r));
    const uint32_t caplen = std::min<uint32_t>(r.caplen, data.size() - sizeof(capture_record));
    const auto* frame = data.data() + sizeof(capture_record);
    const auto when = s->wall0 + std::chrono::nanoseconds(int64_t(r.time_ns) - int64_t(s->mono0));
    const std::string reason(stat_info(r.reason).name);
    s->writer->write(when, {frame, caplen}, r.len, r.ifindex, r.reason, reason);
    ++s->written;
    ++s->by_reason[reason];
}


// The reasons --reason takes: every drop and pass reason's name.
std::vector<std::string> capturable_reasons() {
    std::vector<std::string> out;
    for (int i = 0; i < STAT_REASON_COUNT; ++i)
        if (stat_info(i).kind != "info") out.emplace_back(stat_info(i).name);
    return out;
}

// A drop or pass reason by name.
std::optional<uint32_t> reason_id(const std::string& name) {
    for (int i = 0; i < STAT_REASON_COUNT; ++i)
        if (stat_info(i).name == name && stat_info(i).kind != "info") return uint32_t(i);
    return std::nullopt;
}

}  // namespace

int capture(const CaptureOptions& o, std::ostream& out, std::ostream& err) {
    uint32_t reason = CAPTURE_ANY_DROP;
    if (!o.reason.empty()) {
        auto id = reason_id(o.reason);
        if (!id) {
            err << "sluice: capture: \"" << o.reason << "\" is not a drop or pass reason"
                << config::did_you_mean(o.reason, capturable_reasons())
                << "; `sluice show stats` lists them (kind drop or pass)\n";
            return 1;
        }
        reason = *id;
    }
    if (o.snaplen < 64 || o.snaplen > CAPTURE_SNAPLEN_MAX) {
        err << "sluice: capture: --snaplen must be 64-" << CAPTURE_SNAPLEN_MAX << "\n";
        return 1;
    }
    if (o.sample_every == 0) {
        err << "sluice: capture: --sample must be 1 or more (1: every packet)\n";
        return 1;
    }
    const InstancePaths paths = instance_paths(o.instance);
    // Pins outlive a stopped daemon, but then nothing is attached to drop anything.
    if (auto state = read_state(paths.state_file()); !state || !process_alive(state.value().pid)) {
        err << "sluice: capture: instance " << o.instance << " is not running (`sluice run`)\n";
        return 1;
    }
    PinnedMap cfg(paths.pin_dir + "/" SLUICE_MAP_CAPTURE_CFG), events(paths.pin_dir + "/" SLUICE_MAP_CAPTURE_EVENTS);
    if (cfg.fd() < 0 || events.fd() < 0) {
        err << "sluice: capture: no capture maps under " << paths.pin_dir
            << ": is instance " << o.instance << " running (`sluice run`)?\n";
        return 1;
    }
    const uint32_t key = 0;
    capture_config current{};
    if (bpf_map_lookup_elem(cfg.fd(), &key, &current) == 0 && current.enabled && current.owner_pid &&
        int(current.owner_pid) != getpid() && process_alive(int(current.owner_pid))) {
        err << "sluice: capture: a capture is running already (pid " << current.owner_pid
            << "); one at a time per instance\n";
        return 1;
    }
    auto writer = observe::CapturePcapWriter::open(o.file);
    if (!writer) {
        err << "sluice: capture: " << writer.error().message << "\n";
        return 1;
    }
    Session session;
    session.writer = writer.value().get();
    session.limit = o.count;
    session.wall0 = std::chrono::system_clock::now();
    session.mono0 = monotonic_ns();
    auto reader = observe::CaptureEventsReader::open(
        events.fd(), [&session](std::span<const uint8_t> record) { on_sample(&session, record); },
        [&session](uint64_t n) { session.lost += n; });
    if (!reader) {
        err << "sluice: capture: " << reader.error().message << "\n";
        return 1;
    }
    struct sigaction sa{};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    capture_config on{};
    on.enabled = 1;
    on.owner_pid = static_cast<uint32_t>(getpid());
    on.reason = reason;
    on.sample_every = o.sample_every;
    on.snaplen = o.snaplen;
    if (bpf_map_update_elem(cfg.fd(), &key, &on, BPF_ANY) != 0) {
        err << "sluice: capture: cannot turn capture on: " << std::strerror(errno) << "\n";
        return 1;
    }
    err << "sluice: capturing " << (o.reason.empty() ? std::string("every drop") : o.reason) << " of instance "
        << o.instance << " to " << (o.file == "-" ? "standard output" : o.file)
        << (o.count ? "; stops after " + std::to_string(o.count) + (o.count == 1 ? " packet" : " packets") : std::string())
        << "; Ctrl-C stops" << std::endl;
    const auto start = std::chrono::steady_clock::now();
    while (!g_stop && !(o.count && session.written >= o.count)) {
        if (o.duration_s > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= o.duration_s)
            break;
        if (auto s = reader.value()->poll(100); !s) {
            err << "sluice: capture: " << s.error().message << "\n";
            break;
        }
    }
    // Off first, then what is still in the buffers.
    capture_config off{};
    bpf_map_update_elem(cfg.fd(), &key, &off, BPF_ANY);
    if (auto s = reader.value()->consume(); !s) err << "sluice: capture: " << s.error().message << "\n";
    reader.value().reset();
    if (auto s = writer.value()->flush(); !s) err << "sluice: capture: " << s.error().message << "\n";
    writer.value().reset();
    const std::string where = o.file == "-" ? "standard output" : o.file;
    if (o.json) {
        nlohmann::json j = {{"file", o.file}, {"packets", session.written}, {"lost", session.lost},
                            {"by_reason", session.by_reason}};
        (o.file == "-" ? err : out) << j.dump(2) << "\n";
    } else {
        std::ostream& summary = o.file == "-" ? err : out;
        summary << "captured " << session.written << " packet" << (session.written == 1 ? "" : "s") << " to " << where;
        if (session.lost) summary << "; " << session.lost << " lost (the reader fell behind: --sample N thins them)";
        summary << "\n";
        for (const auto& [r, n] : session.by_reason) summary << "  " << r << " " << n << "\n";
    }
    return 0;
}

}  // namespace sluice::cli
