#include "cli/top.h"

#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <iterator>

#include "cli/pinned_map.h"
#include "common/option_checks.h"
#include "loader/instance_paths.h"
#include "loader/map_io.h"
#include "loader/stat_names.h"

namespace sluice::cli {
namespace {

using json = nlohmann::ordered_json;  // keys in the order documented, "time" first
using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }

// SIGINT/SIGTERM end the loop (exit 0) instead of killing the process mid-line;
// the previous handlers come back when top() returns.
class StopSignals {
public:
    StopSignals() {
        g_stop = 0;
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;  // no SA_RESTART: the sleep returns EINTR
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
    }
    ~StopSignals() {
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

private:
    struct sigaction old_int_ {};
    struct sigaction old_term_ {};
};

// Sleeps until deadline; false when a stop signal came first.
bool sleep_until(Clock::time_point deadline) {
    while (!g_stop) {
        auto left = deadline - Clock::now();
        if (left <= Clock::duration::zero()) return true;
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
        if (nanosleep(&ts, nullptr) != 0 && errno != EINTR) return !g_stop;
    }
    return false;
}

struct Snapshot {
    Clock::time_point taken;
    std::chrono::system_clock::time_point wall;
    std::vector<stat_counter> counters;
    TopSessions sessions;
};

// The maps are opened anew for every sample: after `sluice down` and a new
// `run` the pins are other maps, and their counters start again (a reset).
Result<Snapshot> take_snapshot(const InstancePaths& paths, const std::string& instance) {
    Snapshot s;
    {
        PinnedMap stats(paths.pin_dir + "/" SLUICE_MAP_STATS);
        if (stats.fd() < 0)
            return make_error("instance " + instance + " has no pinned maps under " + paths.pin_dir +
                              " (it never ran here, or `sluice down` removed it; start it with `sluice run -c FILE`)");
        auto counters = read_stat_counters(stats.fd());
        if (!counters) return counters.error();
        s.counters = std::move(counters.value());
    }
    auto entries = read_pinned_sessions(paths.pin_dir);
    if (!entries) return entries.error();
    auto fill = session_table_fill(paths.pin_dir, entries.value());
    if (!fill) return fill.error();
    s.sessions.fill = fill.value();
    for (const SessionEntry& e : entries.value()) {
        if (e.value.flags & SESSION_F_REPLY) continue;  // a flow is counted by its initiator's entry
        (e.family == SLUICE_FAMILY_IPV4 ? s.sessions.flows_v4 : s.sessions.flows_v6) += 1;
    }
    s.taken = Clock::now();
    s.wall = std::chrono::system_clock::now();
    return s;
}

// "2026-12-05T23:10:01.123Z"
std::string utc_text(std::chrono::system_clock::time_point t) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
    time_t secs = static_cast<time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[40];
    size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(ms % 1000));
    return buf;
}

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string percent(uint64_t entries, uint32_t capacity) {
    return fixed(capacity == 0 ? 0.0 : 100.0 * static_cast<double>(entries) / capacity, 1) + "%";
}

// Rates to three decimals: JSON readers need no more, and lines stay short.
double rounded(double v) { return std::round(v * 1000.0) / 1000.0; }

json rate_json(const TopRate& r) {
    json j = {{"reason", r.name},
              {"kind", r.kind},
              {"packets", r.packets},
              {"packets_per_s", rounded(r.packets_per_s)},
              {"bytes_per_s", r.bytes_per_s ? json(rounded(*r.bytes_per_s)) : json(nullptr)}};
    if (r.reset) j["reset"] = true;
    return j;
}

}  // namespace

CLI::App* add_top_command(CLI::App& app, TopOptions& options) {
    auto* cmd = app.add_subcommand(
        "top", "live view: per-second rates of the counters that moved, sessions, top drop reasons (Ctrl-C ends it)");
    cmd->add_option("--instance", options.instance, "instance name");
    cmd->add_option("--interval", options.interval_s, "seconds between samples (default 1)")
        ->check(positive_number())
        ->check(CLI::Range(0.1, 3600.0));
    cmd->add_option("--count", options.count, "samples to print, then exit (default 0: until Ctrl-C)")
        ->check(whole_number("0: until Ctrl-C"));
    cmd->add_flag("--json", options.json, "one JSON object per line per sample");
    return cmd;
}

TopRates compute_top_rates(const std::vector<stat_counter>& before, const std::vector<stat_counter>& after,
                           double elapsed_s, size_t top_drops_max) {
    if (!(elapsed_s > 0)) elapsed_s = 1.0;
    TopRates out;
    const size_t n = std::min(after.size(), static_cast<size_t>(STAT_REASON_COUNT));
    for (size_t i = 0; i < n; ++i) {
        const stat_counter b = i < before.size() ? before[i] : stat_counter{0, 0};
        const stat_counter& a = after[i];
        const bool reset = a.packets < b.packets || a.bytes < b.bytes;
        const uint64_t packets = reset ? a.packets : a.packets - b.packets;
        if (packets == 0) continue;
        const uint64_t bytes = reset ? a.bytes : a.bytes - b.bytes;
        const int reason = static_cast<int>(i);
        const StatInfo info = stat_info(reason);
        TopRate r;
        r.reason = reason;
        r.name = std::string(info.name);
        r.kind = std::string(info.kind);
        r.packets = packets;
        r.packets_per_s = static_cast<double>(packets) / elapsed_s;
        if (stat_counts_bytes(reason)) r.bytes_per_s = static_cast<double>(bytes) / elapsed_s;
        r.reset = reset;
        if (r.kind == "drop") out.drop_packets += packets;
        out.rates.push_back(std::move(r));
    }
    std::sort(out.rates.begin(), out.rates.end(), [](const TopRate& x, const TopRate& y) {
        if (x.packets != y.packets) return x.packets > y.packets;  // same interval: packets order packets/s
        const double xb = x.bytes_per_s.value_or(0), yb = y.bytes_per_s.value_or(0);
        if (xb != yb) return xb > yb;
        return x.name < y.name;
    });
    for (const TopRate& r : out.rates) {
        if (out.top_drops.size() >= top_drops_max) break;
        if (r.kind == "drop") out.top_drops.push_back(r);
    }
    return out;
}

std::string bits_per_s_text(double bytes_per_s) {
    double bits = bytes_per_s * 8.0;
    static const char* const units[] = {"bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"};
    size_t u = 0;
    while (bits >= 1000.0 && u + 1 < std::size(units)) {
        bits /= 1000.0;
        ++u;
    }
    if (u == 0) return fixed(bits, 0) + " " + units[0];
    return fixed(bits, bits < 10 ? 2 : bits < 100 ? 1 : 0) + " " + units[u];
}

json top_sample_json(const std::string& time, double elapsed_s, const TopSessions& sessions, const TopRates& rates) {
    json r = json::array(), drops = json::array();
    for (const TopRate& rate : rates.rates) r.push_back(rate_json(rate));
    for (const TopRate& rate : rates.top_drops) {
        json d = rate_json(rate);
        d["share"] = rates.drop_packets == 0 ? 0.0
                                             : rounded(static_cast<double>(rate.packets) / rates.drop_packets);
        drops.push_back(std::move(d));
    }
    return {{"time", time},
            {"interval_s", rounded(elapsed_s)},
            {"sessions",
             {{"ipv4", sessions.flows_v4},
              {"ipv6", sessions.flows_v6},
              {"table", json(session_table_fill_json(sessions.fill))}}},
            {"rates", r},
            {"top_drops", drops}};
}

void print_top_sample(std::ostream& out, const std::string& instance, const std::string& time, double elapsed_s,
                      const TopSessions& sessions, const TopRates& rates) {
    const auto& fill = sessions.fill;
    out << time << "  instance " << instance << "  over " << fixed(elapsed_s, 2) << " s  sessions IPv4 "
        << sessions.flows_v4 << ", IPv6 " << sessions.flows_v6 << "  table IPv4 "
        << percent(fill.entries_v4, fill.capacity) << ", IPv6 " << percent(fill.entries_v6, fill.capacity) << " of "
        << fill.capacity << " entries\n";
    if (rates.rates.empty()) {
        out << "  (no counter moved)\n";
    } else {
        out << std::left << std::setw(36) << "REASON" << std::setw(6) << "KIND" << std::right << std::setw(14)
            << "PACKETS/S" << std::setw(16) << "BITS/S" << "\n";
        for (const TopRate& r : rates.rates) {
            out << std::left << std::setw(36) << r.name << std::setw(6) << r.kind << std::right << std::setw(14)
                << fixed(r.packets_per_s, 1) << std::setw(16)
                << (r.bytes_per_s ? bits_per_s_text(*r.bytes_per_s) : std::string("-"));
            if (r.reset) out << "  (counter reset)";
            out << "\n";
        }
    }
    out << "top drop reasons:";
    if (rates.top_drops.empty()) out << " none";
    out << "\n";
    for (size_t i = 0; i < rates.top_drops.size(); ++i) {
        const TopRate& r = rates.top_drops[i];
        const double share = rates.drop_packets == 0 ? 0.0 : 100.0 * static_cast<double>(r.packets) / rates.drop_packets;
        out << "  " << (i + 1) << ". " << std::left << std::setw(36) << r.name << std::right << std::setw(12)
            << fixed(r.packets_per_s, 1) << " pkt/s" << std::setw(16)
            << (r.bytes_per_s ? bits_per_s_text(*r.bytes_per_s) : std::string("-")) << std::setw(8)
            << fixed(share, 1) << "% of drops\n";
    }
}

int top(const TopOptions& options, std::ostream& out, std::ostream& err) {
    if (auto s = prepare_bpffs(); !s) {
        err << "sluice: " << s.error().message << "\n";
        return 1;
    }
    const InstancePaths paths = instance_paths(options.instance);
    auto first = take_snapshot(paths, options.instance);
    if (!first) {
        err << "sluice: " << first.error().message << "\n";
        return 1;
    }
    Snapshot prev = std::move(first.value());
    // Redraw in place only on a terminal; into a pipe or file, samples follow
    // one another so that nothing is lost.
    const bool redraw = !options.json && &out == &std::cout && isatty(STDOUT_FILENO) == 1;
    const auto interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.interval_s));
    StopSignals signals;
    if (redraw) out << "\033[H\033[2J" << "sluice top: first sample in " << fixed(options.interval_s, 1) << " s\n" << std::flush;
    Clock::time_point deadline = prev.taken;
    for (uint64_t n = 0; options.count == 0 || n < options.count; ++n) {
        deadline += interval;
        if (deadline < Clock::now()) deadline = Clock::now();  // a slow read: no catching up
        if (!sleep_until(deadline)) break;
        auto cur = take_snapshot(paths, options.instance);
        if (!cur) {
            err << "sluice: " << cur.error().message << "\n";
            return 1;
        }
        const double elapsed = std::chrono::duration<double>(cur.value().taken - prev.taken).count();
        const TopRates rates = compute_top_rates(prev.counters, cur.value().counters, elapsed);
        const std::string time = utc_text(cur.value().wall);
        if (options.json) {
            out << top_sample_json(time, elapsed, cur.value().sessions, rates).dump() << "\n";
        } else {
            if (redraw) out << "\033[H\033[2J";
            print_top_sample(out, options.instance, time, elapsed, cur.value().sessions, rates);
            if (!redraw) out << "\n";
        }
        out.flush();
        prev = std::move(cur.value());
    }
    return 0;
}

}  // namespace sluice::cli
