// What `sluice bench observe` measures and how each measurement proves it
// measured that, apart from the lab so it can be tested on synthetic
// inputs: the configurations and their sluice config files, the readers of
// what the observers leave behind (the flow-log file, the scraper's log,
// `bpftool map dump` of capture_cfg, the capture's summary, `sluice show
// metrics --json`) and the checks that fail a measurement whose
// configuration was not the one in the path.
//
// The configurations differ by observability alone (same policies, same
// timeouts, same xdp-mode):
//   off  no policy logs, no metrics listener, no capture
//   log  every policy logs open, close and deny, the default action deny;
//        the flow log goes to a file with no rate limit
//   on   log, plus /metrics scraped once a second by curl on the LAN host
//        and `sluice capture` (every drop) running
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::bench {

// off, log, on (the order pass 1 measures them in).
const std::vector<std::string>& observe_configs();
// "off (no log, no metrics, no capture)", ... for the report.
std::string observe_config_label(const std::string& config);
// "a b" or "a,b", checked against observe_configs(); "off" must be among
// them (every ratio is against it).
Result<std::vector<std::string>> parse_observe_configs(const std::string& text);
// Whether the configuration writes flow logs (log, on) / runs the scraper
// and the capture (on).
bool observe_logs(const std::string& config);
bool observe_scrapes_and_captures(const std::string& config);

// The sluice config of one configuration for the single lab.
struct ObserveSluiceSpec {
    std::string xdp_mode = "tc";                    // both interfaces
    std::string flow_log_path;                      // log, on: an absolute path
    std::string metrics_listen = "198.18.1.1:9109";  // on: the firewall's LAN address
    uint16_t udp_port = 9;                          // part (a)'s flows
    std::string tcp_ports = "5301-5316";            // part (b)'s connections
    uint16_t denied_port = 6000;                    // the probe's datagrams: no policy, the default deny
};
std::string observe_sluice_config(const std::string& config, const ObserveSluiceSpec& spec);

// The lines of a flow log (JSON lines), by event.
struct FlowLogCounts {
    uint64_t lines = 0, open = 0, close = 0, deny = 0, other = 0;
};
FlowLogCounts count_flow_log(std::istream& in);
// The file and its rotated copies (PATH, PATH.1, ...); a missing file
// counts nothing.
FlowLogCounts count_flow_log_files(const std::string& path);
FlowLogCounts operator-(const FlowLogCounts& after, const FlowLogCounts& before);

// The scraper's log: one "HTTP_CODE BYTES" line per scrape (curl -w).
struct ScrapeLog {
    uint64_t ok = 0;      // HTTP 200 with a body
    uint64_t failed = 0;  // anything else (000: no connection)
    std::string first_failure;
};
ScrapeLog parse_scrape_log(const std::string& text);
// The scrapes of `after` that `before` did not have yet (the log grows).
ScrapeLog scrapes_between(const ScrapeLog& before, const ScrapeLog& after);

// capture_cfg as `bpftool -j map dump pinned .../capture_cfg` prints it
// (the "formatted" value when there is one, else "value").
struct CaptureCfg {
    bool enabled = false;
    uint32_t owner_pid = 0;
};
Result<CaptureCfg> parse_capture_cfg(const std::string& bpftool_json);
// N of the capture's summary line "captured N packet(s) to FILE", or an
// Error when it has none (the capture did not end normally).
Result<uint64_t> parse_capture_summary(const std::string& text);

// The sum of the samples of family `name` in `sluice show metrics --json`
// ([{name, samples: [{labels, value}]}]) whose labels include `labels`; an
// Error when the family is missing.
Result<double> metric_sum(const nlohmann::json& show_metrics, const std::string& name,
                          const std::map<std::string, std::string>& labels = {});

// Ok when a fixed-rate window offered `target` packets/s within
// `tolerance` (0.02: 2 %). trafgen paces its frames; when the machine is
// busy it falls behind and then catches up in bursts, and the window holds
// another rate than the one named: its CPU time per packet is not
// comparable (NAPI batches differently), so such a window is measured again.
Status check_rate_held(double offered_pps, uint64_t target, double tolerance = 0.02);

// A BPF program's run-time statistics (`bpftool -j prog show id N` while
// BPF_ENABLE_STATS is held): the kernel's own count of runs and the time
// they took, tail calls included in the entry program's.
struct ProgRunStats {
    uint64_t run_time_ns = 0, run_cnt = 0;
};
Result<ProgRunStats> parse_prog_run_stats(const std::string& bpftool_prog_json);

// utime + stime of a process in seconds from its /proc/PID/stat line
// (USER_HZ ticks, user_hz = sysconf(_SC_CLK_TCK)).
Result<double> parse_process_cpu_seconds(const std::string& proc_pid_stat, long user_hz);

// What a measurement saw of the observers, for the check below.
struct ObserverEvidence {
    std::string config;
    double seconds = 0;            // the measurement window
    uint64_t sessions_created = 0;  // sessions the policies opened while the log counted
    bool expect_closes = false;    // every session closed before the log was read (part (b))
    FlowLogCounts log;             // lines written while the sessions were created and closed
    uint64_t flow_log_event = 0;   // the datapath's flow-log-event counter over the same span
    uint64_t flow_log_dropped = 0;  // rate-limited + ring-full + sluice_flow_log_events_dropped_total
    ScrapeLog scrapes;             // during the window
    bool capture_running = false;
    int capture_pid = 0;
    std::optional<CaptureCfg> capture_cfg;  // read during the measurement
};
// Ok with a one-line summary of the proof when the observers of the
// configuration were in the path — and only those: off writes no flow
// event and has capture off; log writes a line for every event (every
// session opened, closed when expected; none dropped) with capture off;
// on adds scrapes that all returned 200 (at least one per two seconds of
// the window) and the capture process alive with capture_cfg enabled and
// owned by it. An Error saying what was missing otherwise.
Result<std::string> check_observers(const ObserverEvidence& e);

// The denied probe after a configuration's measurements: `sent` datagrams
// to a port no policy permits. drop-policy-default must have moved by at
// least `sent`; log and on must have written `sent` deny lines more; on's
// capture must have caught them (captured >= sent); off writes nothing.
struct ProbeEvidence {
    std::string config;
    uint64_t sent = 0;
    uint64_t dropped_default = 0;  // drop-policy-default delta
    uint64_t deny_lines = 0;       // deny lines written since before the probe
    uint64_t flow_log_event = 0;   // flow-log-event delta
    std::optional<uint64_t> captured;  // on: the capture's summary
};
Result<std::string> check_probe(const ProbeEvidence& e);

// One window of (a), where the configurations take turns in one running
// sluice (`sluice reload` switches them, the observers of `on` are started
// and stopped around its windows): what proves the window's configuration
// was the one in force. The probe is sent and capture_cfg read before the
// window, once the switch is done (nothing changes the configuration
// between them and the window); the probe's captured count is checked when
// the capture stops (check_capture_stint).
struct WindowEvidence {
    std::string config;
    double seconds = 0;           // the window
    ProbeEvidence probe;          // the denied datagrams sent before it
    uint64_t flow_log_dropped = 0;  // rate-limited + ring-full over the window and the probe
    ScrapeLog scrapes;            // during the window
    bool capture_running = false;
    int capture_pid = 0;
    std::optional<CaptureCfg> capture_cfg;  // read before the window
};
// Ok with a one-line summary when the probe reached the default action and
// was logged as the configuration logs (off: no line, no event; log and on:
// a deny line per datagram, nothing dropped), and capture_cfg and the
// scrapes are as the configuration has them (on: check_observers' scrape
// and capture conditions; off and log: capture_cfg not enabled).
Result<std::string> check_window(const WindowEvidence& e);
// A run of `on` windows ends by stopping its capture: it must have written
// at least the `probes` datagrams sent meanwhile.
Status check_capture_stint(uint64_t captured, uint64_t probes);

}  // namespace sluice::bench
