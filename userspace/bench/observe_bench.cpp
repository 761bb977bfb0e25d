// `sluice bench observe` (docs/benchmarks.md, "Observability cost"): what
// flow logs, metrics scraping and drop capture cost, issue 21's point 4. One
// run on the single lab (LAN host -> firewall namespace -> WAN host), the
// configurations (observe_checks.h: off, log, on) interleaved, pass p
// starting at the p-th:
//   (a) established flows: trafgen on the LAN host sends 64-byte UDP frames
//       over 256 flows to the WAN host, where a receiver
//       (bpf/bench_sink.bpf.c) counts and drops them; at a fixed rate and
//       unlimited, the CPU time per forwarded packet over a window
//       (smallpkt_window.h). One sluice start per pass: the configurations
//       take turns by `sluice reload`, off between every two others (the
//       reference), and each window is compared with the off windows either
//       side of it; off again measured like the others is the control (see
//       Bench::established for why);
//   (b) new connections: tests/sluice_connrate (connect, request, answer,
//       close) from the LAN host to a server on the WAN host, through the
//       firewall, connections per second;
//   (c) the datapath alone (observe_datapath.h): BPF_PROG_TEST_RUN on one
//       datapath with logging and capture switched off and on every few
//       calls, ns per packet of an established flow, a first packet and a
//       denied one; run first, before the lab's passes.
// In (b) every measurement starts sluice afresh (`sluice down` between
// them, so every session of a measurement was opened by its configuration)
// and starts the configuration's observers (on: the capture and the
// scraper). Every measurement proves its configuration was the one in the
// path (observe_checks.h) or fails: (b) by its observers' evidence and a
// few datagrams no policy permits, logged and captured as the
// configuration says; (a) by one such datagram before every window (after
// the switch, before the settle) and what the window saw.
//
// CPUs in (a): trafgen pins its sending process to CPU 0 and the whole path
// runs in softirq there; the daemon, the scraper and the capture run on
// CPU 1. In (b) nothing is pinned: the client, the server, the daemon's
// logging and the scrapes share both CPUs, as they would on a firewall.
#include <bpf/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include "common/cpu_pin.h"
#include "common/option_checks.h"
#include "bench/benchmark.h"
#include "bench/connrate_run.h"
#include "bench/interrupt.h"
#include "bench/lab.h"
#include "bench/link_counters.h"
#include "bench/observe_datapath.h"
#include "bench/observe_checks.h"
#include "bench/observe_report.h"
#include "bench/packet_sink.h"
#include "bench/report.h"
#include "bench/schedule.h"
#include "bench/sluice_firewall.h"
#include "bench/smallpkt_checks.h"
#include "bench/smallpkt_trafgen.h"
#include "bench/smallpkt_window.h"
#include "bench/synflood_checks.h"
#include "bench/synflood_trafgen.h"
#include "cluster/topology.h"
#include "cluster/xdp_links.h"

namespace sluice::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// 0 = not given: the default, or the --quick value.
struct Options {
    int passes = 0;             // 10; --quick 1
    int seconds = 0;            // (a) window, whole seconds: 2 (trafgen's per-second bursts; on's scrapes)
    int cycles = 0;             // (a) cycles per pass at the fixed rate: 10; --quick 2
    int unlimited_cycles = -1;  // (a) cycles per pass unlimited: 2; --quick 1; 0 none
    double conn_seconds = 0;    // (b) counted: 10; --quick 2
    uint64_t rate = 150000;
    std::string configs = "off on";
    std::string xdp_mode = "tc";
    int conn_concurrency = 32;
    bool skip_established = false, skip_connections = false, skip_datapath = false;
    int datapath_passes = 0;  // (c): 20; --quick 2
    double quiet_busy = 25;  // the quiet gate: at most this % busy over 5 s
    int quiet_wait = 0;      // seconds the gate waits for it; 300, --quick 60
};

constexpr int kDaemonCpu = 1;          // (a): trafgen sends from CPU 0 (it pins itself there)
constexpr uint16_t kFlowPort = 9;      // UDP discard
constexpr uint16_t kDeniedPort = 6000;  // no policy: the default deny
constexpr int kProbeDatagrams = 5;
constexpr double kWarmupSeconds = 1;   // trafgen up, every flow's first packet (sessions) behind us
constexpr const char* kConnPorts = "5301-5316";
constexpr int kConnThreads = 2;
constexpr double kConnWarmup = 0.5;
constexpr const char* kMetricsPort = "9109";
constexpr double kSettleSeconds = 0.5;  // (a): after a window's proof, before the window
constexpr int kWindowProbeDatagrams = 1;  // (a): the probe before every window
constexpr int kMaxCycles = kObserveMaxCycles;  // the report keys a window by pass and cycle
constexpr double kLogCatchUpSeconds = 30;  // for the daemon to write what the datapath handed it, and the GC's closes
const std::vector<std::string> kLanSources{"198.18.1.10", "198.18.1.11", "198.18.1.12", "198.18.1.13"};
const std::vector<std::string> kFirewallInterfaces{"lan0", "wan0"};

// BPF run-time statistics (run_cnt, run_time_ns of every program) while
// this lives: BPF_ENABLE_STATS hands out a file descriptor and the kernel
// keeps counting until the last one is closed, so nothing stays switched on
// after the benchmark, however it ends.
class BpfRunTimeStats {
public:
    static Result<std::unique_ptr<BpfRunTimeStats>> enable() {
        const int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
        if (fd < 0) return errno_error("BPF_ENABLE_STATS", errno);
        return std::unique_ptr<BpfRunTimeStats>(new BpfRunTimeStats(fd));
    }
    ~BpfRunTimeStats() { close(fd_); }
    BpfRunTimeStats(const BpfRunTimeStats&) = delete;
    BpfRunTimeStats& operator=(const BpfRunTimeStats&) = delete;

private:
    explicit BpfRunTimeStats(int fd) : fd_(fd) {}
    int fd_;
};

double now_seconds() {
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

uint64_t counter(const Counters& c, const std::string& name) {
    auto it = c.find(name);
    return it == c.end() ? 0 : it->second;
}

std::string num(double v) {
    std::string s = fixed(v, 3);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

// Waits up to `seconds` for cond() (checked every 100 ms); cond's own
// Error stops the wait. Ok(false) when the time ran out.
template <typename F>
Result<bool> wait_until(double seconds, F cond) {
    const auto t0 = Clock::now();
    for (;;) {
        Result<bool> r = cond();
        if (!r) return r.error();
        if (*r) return true;
        if (std::chrono::duration<double>(Clock::now() - t0).count() >= seconds) return false;
        if (auto s = pause(0.1); !s) return s.error();
    }
}

void remove_flow_logs(const std::string& path) {
    std::error_code ec;
    fs::remove(path, ec);
    for (int i = 1; i <= 5; ++i) fs::remove(path + "." + std::to_string(i), ec);
}

// The quiet gate (as `sluice bench egress` has it): waits up to
// `wait_seconds` for 5 s in which the whole machine was at most `max_busy`
// % busy; the busy share it saw. A build running beside the benchmark moves
// the CPU time per packet by far more than the 3 % it looks for.
Result<double> wait_quiet(double max_busy, int wait_seconds, std::ostream& log) {
    const auto until = Clock::now() + std::chrono::seconds(wait_seconds);
    for (int attempt = 1;; ++attempt) {
        auto a = parse_cpu_sample(read_text("/proc/stat"));
        if (!a) return a.error();
        if (auto s = pause(5); !s) return s.error();
        auto b = parse_cpu_sample(read_text("/proc/stat"));
        if (!b) return b.error();
        const double busy = cpu_share(*a, *b).busy_percent;
        if (busy <= max_busy) {
            log << "quiet gate: the machine was " << fixed(busy, 1) << " % busy over 5 s (at most "
                << fixed(max_busy, 0) << " %), load " << load_average() << "\n";
            return busy;
        }
        if (Clock::now() >= until)
            return make_error("the machine is not quiet: " + fixed(busy, 1) + " % busy over 5 s (at most " +
                              fixed(max_busy, 0) + " % wanted) after waiting " + std::to_string(wait_seconds) +
                              " s; load " + load_average() + ". Run it when nothing else does, or raise --quiet-busy");
        log << "quiet gate: " << fixed(busy, 1) << " % busy, waiting (attempt " << attempt << ")\n";
    }
}

struct Bench {
    BenchRun& run;
    Lab& lab;
    SluiceFirewall& fw;
    std::string xdp_mode;
    std::map<std::string, std::string> config_paths;  // configuration -> sluice config file
    std::string flow_log_path;
    std::string trafgen_config;
    std::string connrate;
    uint64_t rate = 0;
    double seconds = 2, conn_seconds = 10;
    int cycles = 10;
    int conn_concurrency = 32;
    long user_hz = 100;
    uint64_t conn_offset = 0;
    int unlimited_cycles = 2;  // (a)'s cycles unlimited (0: none)
    int started = 0;           // observers started, for unique log names

    // The observers of `on` while they run.
    std::optional<cluster::BackgroundProcess> scraper, capture;
    uint64_t stint_probes = 0;  // (a): probes sent while the running capture ran
    std::map<std::string, std::string> config_texts;  // configuration -> its config file's text, for (a)'s switches

    std::string capture_cfg_pin() const { return "/sys/fs/bpf/sluice/netns/" + lab.ns("fw") + "/default/capture_cfg"; }

    // (b): sluice started afresh with `config`, and its observers.
    Status start_config(const std::string& config, int cpu) {
        if (auto s = verify_no_pipeline(lab, "fw", kFirewallInterfaces); !s)
            return with_context("before " + config, s.error());
        remove_flow_logs(flow_log_path);
        if (auto s = fw.start(config_paths.at(config), cpu); !s) return s;
        if (!observe_scrapes_and_captures(config)) return {};
        return start_observers(cpu);
    }

    // on's observers: `sluice capture` of every drop, then the scraper;
    // Ok once the capture captures and the first scrape answered.
    Status start_observers(int cpu) {
        ++started;
        const std::string n = std::to_string(started);
        auto cap = lab.start("",
                             {lab.sluice_binary(), "--netns", lab.ns("fw"), "capture", "-w",
                              lab.tmp() + "/capture-" + n + ".pcap"},
                             "capture-" + n, cpu);
        if (!cap) return cap.error();
        capture = *cap;
        auto capturing = wait_until(10, [&]() -> Result<bool> {
            if (read_text(capture->log_path).find("capturing") != std::string::npos) return true;
            if (!lab.running(*capture)) return make_error("`sluice capture` exited: " + read_text(capture->log_path));
            return false;
        });
        if (!capturing) return capturing.error();
        if (!*capturing) return make_error("`sluice capture` did not start capturing within 10 s");
        // One curl on the LAN host scraping once a second on a kept-alive
        // connection, as a Prometheus server would (a process per scrape
        // cost the machine several % of a CPU: the client's, not sluice's):
        // "CODE BYTES" a line on stderr, to the log; the bodies to /dev/null.
        // The query string numbers the scrapes; /metrics ignores it.
        const std::string url = std::string("http://") + cluster::kFw0Lan4 + ":" + kMetricsPort + "/metrics";
        auto sc = lab.start("lan",
                            {"curl", "-s", "--rate", "1/s", "--max-time", "2", "-o", "/dev/null", "-w",
                             "%{stderr}%{http_code} %{size_download}\n", url + "?scrape=[1-100000000]"},
                            "scraper-" + n, cpu);
        if (!sc) return sc.error();
        scraper = *sc;
        auto first = wait_until(10, [&]() -> Result<bool> {
            auto s = parse_scrape_log(read_text(scraper->log_path));
            if (s.failed) return make_error("the first scrape of " + url + " failed: " + s.first_failure);
            return s.ok > 0;
        });
        if (!first) return first.error();
        if (!*first) return make_error("no scrape of " + url + " answered within 10 s");
        return {};
    }

    // Stops the scraper and the capture (when they run); the packets the
    // capture's summary says it wrote, nullopt when none ran.
    Result<std::optional<uint64_t>> stop_observers() {
        if (scraper) {
            if (auto s = lab.stop(*scraper); !s) return s.error();
            scraper.reset();
        }
        if (!capture) return std::optional<uint64_t>();
        if (auto s = lab.stop(*capture); !s) return s.error();
        auto n = parse_capture_summary(read_text(capture->log_path));
        capture.reset();
        if (!n) return n.error();
        return std::optional<uint64_t>(*n);
    }

    // The daemon's CPU time so far (user + system), seconds.
    Result<double> daemon_cpu() const {
        if (!fw.pid()) return make_error("sluice is not running");
        return parse_process_cpu_seconds(read_text("/proc/" + std::to_string(fw.pid()) + "/stat"), user_hz);
    }

    // on's observers' CPU time so far (the capture and the scraper, user +
    // system), seconds; 0 when they do not run.
    Result<double> observers_cpu() const {
        double total = 0;
        for (const auto* p : {&capture, &scraper}) {
            if (!*p) continue;
            auto s = parse_process_cpu_seconds(read_text("/proc/" + std::to_string((*p)->pid) + "/stat"), user_hz);
            if (!s) return s.error();
            total += *s;
        }
        return total;
    }

    ScrapeLog scrapes() const {
        return scraper ? parse_scrape_log(read_text(scraper->log_path)) : ScrapeLog{};
    }

    Result<CaptureCfg> capture_cfg() {
        auto out = lab.output("", {"bpftool", "-j", "map", "dump", "pinned", capture_cfg_pin()});
        if (!out) return out.error();
        return parse_capture_cfg(*out);
    }

    // The id of sluice's entry program on lan0 (tc_main_prog at TC ingress
    // in the tc mode, xdp_main_prog otherwise): its run time covers the
    // whole tail-call chain of every packet (a) sends.
    Result<uint32_t> entry_prog_id() {
        const bool tc = xdp_mode == "tc";
        const std::string prog = tc ? cluster::kSluiceTcProgram : cluster::kSluiceXdpProgram;
        auto out = tc ? lab.output("fw", {"tc", "-j", "filter", "show", "dev", "lan0", "ingress"})
                      : lab.output("fw", {"ip", "-j", "link", "show", "lan0"});
        if (!out) return out.error();
        auto id = tc ? cluster::tc_filter_prog_id(*out, prog) : cluster::xdp_prog_id(*out, "lan0", prog);
        if (!id) return id.error();
        if (!*id) return make_error("no " + prog + (tc ? " at TC ingress of lan0" : " at the XDP hook of lan0"));
        return **id;
    }

    Result<ProgRunStats> prog_stats(uint32_t id) {
        auto out = lab.output("", {"bpftool", "-j", "prog", "show", "id", std::to_string(id)});
        if (!out) return out.error();
        return parse_prog_run_stats(*out);
    }

    // Ok when sluice runs its pipeline in the benchmark's mode on both
    // interfaces.
    Status prove_attached(const std::string& what) {
        if (auto s = fw.attached(); !s) return with_context(what, s.error());
        auto zones = lab.output("", {lab.sluice_binary(), "--netns", lab.ns("fw"), "show", "zones", "--json"});
        if (!zones) return zones.error();
        auto modes = sluice_modes_of(*zones);
        if (!modes) return modes.error();
        if (auto s = check_sluice_modes(xdp_mode, *modes, kFirewallInterfaces); !s)
            return with_context(what, s.error());
        return {};
    }

    // (b): the evidence of the observers once the log caught up: every
    // event the datapath handed over written, every session opened logged
    // and closed (the connections are over).
    Result<ObserverEvidence> observers(const std::string& config, double window, const ScrapeLog& scrapes,
                                       bool capture_running, std::optional<CaptureCfg> cfg) {
        ObserverEvidence e;
        e.config = config;
        e.seconds = window;
        e.scrapes = scrapes;
        e.expect_closes = true;
        e.capture_running = capture_running;
        e.capture_pid = capture ? capture->pid : 0;
        e.capture_cfg = cfg;
        Counters stats;
        auto caught_up = wait_until(observe_logs(config) ? kLogCatchUpSeconds : 0, [&]() -> Result<bool> {
            auto c = fw.stats();
            if (!c) return c.error();
            stats = *c;
            e.log = count_flow_log_files(flow_log_path);
            const uint64_t created = counter(stats, "session-created"), events = counter(stats, "flow-log-event");
            return e.log.open >= created && e.log.lines >= events &&
                   static_cast<double>(e.log.close) >= 0.99 * static_cast<double>(e.log.open);
        });
        if (!caught_up) return caught_up.error();
        e.sessions_created = counter(stats, "session-created");
        e.flow_log_event = counter(stats, "flow-log-event");
        e.flow_log_dropped = counter(stats, "flow-log-event-rate-limited") + counter(stats, "flow-log-event-ring-full");
        if (observe_logs(config)) {
            auto metrics = fw.show("metrics");
            if (!metrics) return metrics.error();
            auto dropped = metric_sum(*metrics, "sluice_flow_log_events_dropped_total");
            if (!dropped) return dropped.error();
            e.flow_log_dropped += static_cast<uint64_t>(*dropped);
        }
        return e;
    }

    // `datagrams` UDP datagrams from the LAN host to a port no policy
    // permits, and what they moved: drop-policy-default, the deny lines
    // (waited for when `config` logs), flow-log-event. `delta` gets every
    // counter's move from before the probe to after it.
    Result<ProbeEvidence> probe(const std::string& config, int datagrams, Counters* delta) {
        auto stats0 = fw.stats();
        if (!stats0) return stats0.error();
        const FlowLogCounts log0 = count_flow_log_files(flow_log_path);
        std::string script = "for i in $(seq " + std::to_string(datagrams) + "); do echo probe > /dev/udp/" +
                             cluster::kWanHost4 + "/" + std::to_string(kDeniedPort) + "; done";
        if (auto s = lab.must("lan", {"bash", "-c", script}); !s) return s.error();
        ProbeEvidence p;
        p.config = config;
        p.sent = static_cast<uint64_t>(datagrams);
        Counters stats1;
        auto seen = wait_until(observe_logs(config) ? 10 : 0.5, [&]() -> Result<bool> {
            auto c = fw.stats();
            if (!c) return c.error();
            stats1 = *c;
            p.deny_lines = (count_flow_log_files(flow_log_path) - log0).deny;
            const bool dropped = counter(counter_delta(*stats0, stats1), "drop-policy-default") >= p.sent;
            return dropped && (p.deny_lines >= p.sent || !observe_logs(config));
        });
        if (!seen) return seen.error();
        if (!observe_logs(config))
            if (auto s = pause(0.3); !s) return s.error();  // what off would wrongly write has time to show
        if (auto c = fw.stats(); c) stats1 = *c;
        p.deny_lines = (count_flow_log_files(flow_log_path) - log0).deny;
        *delta = counter_delta(*stats0, stats1);
        p.dropped_default = counter(*delta, "drop-policy-default");
        p.flow_log_event = counter(*delta, "flow-log-event");
        return p;
    }

    // (b): the denied probe, then the observers and sluice stop.
    Status stop_config(const std::string& config, const std::string& part, int pass) {
        const std::string what = config + " after " + part + " pass " + std::to_string(pass);
        Counters delta;
        auto p = probe(config, kProbeDatagrams, &delta);
        if (!p) return with_context(what, p.error());
        auto captured = stop_observers();
        if (!captured) return with_context(what, captured.error());
        p->captured = *captured;
        auto proof = check_probe(*p);
        if (!proof) return with_context(what, proof.error());
        run.results->add({{"part", "probe"},
                          {"after", part},
                          {"pass", pass},
                          {"config", config},
                          {"sent", p->sent},
                          {"drop_policy_default", p->dropped_default},
                          {"deny_lines", p->deny_lines},
                          {"captured", p->captured ? nlohmann::json(*p->captured) : nlohmann::json()},
                          {"in_path", *proof}});
        run.out() << "pass " << pass << " " << config << " probe: " << *proof << "\n";
        if (auto s = fw.stop(); !s) return s;
        remove_flow_logs(flow_log_path);
        return {};
    }

    // (a): `config` in force in the running sluice, with on's observers
    // when it has them and none otherwise. sluice starts with the pass's
    // first configuration; after that the file it runs is rewritten and
    // `sluice reload` applies it (the sessions, the maps and the programs
    // stay). The observers stop before a reload takes the metrics listener
    // away and start after one brought it.
    Status switch_to(const std::string& config, const std::string& what) {
        auto path = lab.write_file("sluice-running.yaml", config_texts.at(config));
        if (!path) return path.error();
        if (!fw.running()) {
            if (auto s = verify_no_pipeline(lab, "fw", kFirewallInterfaces); !s) return with_context(what, s.error());
            remove_flow_logs(flow_log_path);
            if (auto s = fw.start(*path, kDaemonCpu); !s) return s;
        } else {
            if (capture && !observe_scrapes_and_captures(config))
                if (auto s = end_capture_stint(what); !s) return s;
            auto r = fw.reload();
            if (!r) return with_context(what + ": sluice reload", r.error());
        }
        if (observe_scrapes_and_captures(config) && !capture) {
            if (auto s = start_observers(kDaemonCpu); !s) return with_context(what, s.error());
            stint_probes = 0;
        }
        return prove_attached(what);
    }

    // Stops on's observers; the capture must have caught every probe of
    // its windows.
    Status end_capture_stint(const std::string& what) {
        auto captured = stop_observers();
        if (!captured) return with_context(what, captured.error());
        if (*captured)
            if (auto s = check_capture_stint(**captured, stint_probes); !s) return with_context(what, s.error());
        stint_probes = 0;
        return {};
    }

    // (a): what proves `config` in force for the window to come, gathered
    // before it settles (nothing changes the configuration between this and
    // the window, so the window itself runs with nothing but its traffic):
    // capture_cfg, and one denied datagram logged as the config logs.
    struct WindowProof {
        CaptureCfg capture_cfg;
        ProbeEvidence probe;
        Counters probe_delta;
    };
    Result<WindowProof> prove_config(const std::string& config, const std::string& what) {
        WindowProof w;
        auto cfg = capture_cfg();
        if (!cfg) return with_context(what, cfg.error());
        w.capture_cfg = *cfg;
        auto p = probe(config, kWindowProbeDatagrams, &w.probe_delta);
        if (!p) return with_context(what, p.error());
        w.probe = *p;
        if (capture) stint_probes += p->sent;
        return w;
    }

    Result<WindowReading> reading(PacketSink& sink, SinkCounts* sink_counts) {
        WindowReading r;
        r.at_seconds = now_seconds();
        auto cpu = parse_cpu_sample(read_text("/proc/stat"));
        if (!cpu) return cpu.error();
        r.cpu = *cpu;
        auto counts = sink.read();
        if (!counts) return counts.error();
        r.received = counts->flow_frames;
        *sink_counts = *counts;
        auto tx = tx_counters(lab.ns("lan"), "eth0");
        if (!tx) return tx.error();
        r.offered = tx->packets + tx->dropped;
        return r;
    }

    // One window of (a) at `target` packets/s (0: unlimited) with `config`
    // in force, the `slot`-th of its pass at this rate, in the `role`
    // "reference" (off, between every two others), "measured" or "control"
    // (off, measured as the others are); `proof` (prove_config) and what the
    // window saw must agree with `config` (check_window). A fixed-rate window
    // whose rate was not held is recorded as discarded and is nobody's pair.
    Status established_window(int pass, int slot, int cycle, const std::string& config, const std::string& role,
                              uint64_t target, PacketSink& sink, TrafgenFlood& flood, const WindowProof& proof) {
        const std::string rate_name = target ? "fixed" : "unlimited";
        const std::string what = "established " + config + " (" + role + ")" +
                                 (target ? " at " + std::to_string(target) + " pps" : " unlimited") + " pass " +
                                 std::to_string(pass) + " window " + std::to_string(slot);
        auto stats0 = fw.stats();
        if (!stats0) return stats0.error();
        // Unlimited: sluice's BPF run time per packet too (BPF_ENABLE_STATS is
        // held for the whole unlimited phase, in every configuration alike).
        uint32_t prog_id = 0;
        ProgRunStats prog0, prog1;
        if (!target) {
            auto id = entry_prog_id();
            if (!id) return with_context(what, id.error());
            prog_id = *id;
            auto p = prog_stats(prog_id);
            if (!p) return with_context(what, p.error());
            prog0 = *p;
        }
        SinkCounts sink0, sink1;
        auto before = reading(sink, &sink0);
        if (!before) return before.error();
        const ScrapeLog scrapes0 = scrapes();
        auto daemon0 = daemon_cpu();
        if (!daemon0) return daemon0.error();
        auto observers0 = observers_cpu();
        if (!observers0) return observers0.error();
        if (auto s = pause(seconds); !s) return s;
        auto after = reading(sink, &sink1);
        if (!after) return after.error();
        const ScrapeLog scrapes1 = scrapes();
        auto daemon1 = daemon_cpu();
        if (!daemon1) return daemon1.error();
        auto observers1 = observers_cpu();
        if (!observers1) return observers1.error();
        if (!target) {
            auto p = prog_stats(prog_id);
            if (!p) return with_context(what, p.error());
            prog1 = *p;
        }
        auto stats1 = fw.stats();
        if (!stats1) return stats1.error();
        if (!flood.running()) return make_error(what + ": trafgen stopped early: " + flood.log());
        auto w = window_result(*before, *after, user_hz);
        if (!w) return with_context(what, w.error());
        if (auto held = check_rate_held(w->offered_pps, target); !held) {
            // No "part": the report's tables select on it; this window is not one of theirs.
            run.results->add({{"event", "discarded"},
                              {"of", "established"},
                              {"pass", pass},
                              {"slot", slot},
                              {"cycle", cycle},
                              {"config", config},
                              {"role", role},
                              {"rate", rate_name},
                              {"offered_pps", w->offered_pps},
                              {"busy_ns_per_packet", w->busy_ns_per_packet},
                              {"reason", held.error().message}});
            run.out() << "pass " << pass << " window " << slot << " " << config << " (" << role << ") established "
                      << rate_name << ": " << held.error().message << " (the machine busy: " << fixed(w->busy_ns_per_packet, 0)
                      << " busy ns/pkt); this window has no pair\n";
            return {};
        }
        const uint64_t forwarded = counter(*stats1, "forward") - counter(*stats0, "forward");
        if (auto s = check_forwarded(what + ": sluice's forward counter", forwarded, w->received_packets); !s) return s;
        const uint64_t bpf_runs = prog1.run_cnt - prog0.run_cnt;
        const double bpf_ns = bpf_runs ? static_cast<double>(prog1.run_time_ns - prog0.run_time_ns) / bpf_runs : 0;
        if (!target && bpf_runs < w->received_packets)
            return make_error(what + ": sluice's entry program (id " + std::to_string(prog_id) + ") ran " +
                              std::to_string(bpf_runs) + " times for " + std::to_string(w->received_packets) +
                              " packets received: they did not all go through it");
        // The proof: the probe and capture_cfg from before the settle, the
        // scrapes and the capture over the window.
        WindowEvidence e;
        e.config = config;
        e.seconds = w->seconds;
        e.scrapes = scrapes_between(scrapes0, scrapes1);
        e.capture_running = capture && lab.running(*capture);
        e.capture_pid = capture ? capture->pid : 0;
        e.capture_cfg = proof.capture_cfg;
        e.probe = proof.probe;
        const Counters& probe_delta = proof.probe_delta;
        const Counters d = counter_delta(*stats0, *stats1);
        e.flow_log_dropped = counter(d, "flow-log-event-rate-limited") + counter(d, "flow-log-event-ring-full") +
                             counter(probe_delta, "flow-log-event-rate-limited") +
                             counter(probe_delta, "flow-log-event-ring-full");
        auto checked = check_window(e);
        if (!checked) return with_context(what, checked.error());
        const std::string in_path = "sluice " + xdp_mode + " on lan0 and wan0, forward +" + std::to_string(forwarded) +
                                    (target ? "" : ", its entry program ran " + std::to_string(bpf_runs) + " times") +
                                    "; " + *checked;
        const uint64_t at_tc = sink1.flow_frames_at_tc - sink0.flow_frames_at_tc;
        run.results->add({{"part", "established"},
                          {"pass", pass},
                          {"slot", slot},
                          {"cycle", cycle},
                          {"config", config},
                          {"role", role},
                          {"rate", rate_name},
                          {"target_pps", target},
                          {"seconds", w->seconds},
                          {"offered_packets", w->offered_packets},
                          {"received_packets", w->received_packets},
                          {"received_at_tc", at_tc},
                          {"offered_pps", w->offered_pps},
                          {"received_pps", w->received_pps},
                          {"loss_percent", w->loss_percent},
                          {"softirq_seconds", w->softirq_seconds},
                          {"busy_seconds", w->busy_seconds},
                          {"softirq_ns_per_packet", w->softirq_ns_per_packet},
                          {"busy_ns_per_packet", w->busy_ns_per_packet},
                          {"nonidle_seconds", w->nonidle_seconds},
                          {"nonidle_ns_per_packet", w->nonidle_ns_per_packet},
                          {"forwarded", forwarded},
                          {"bpf_runs", bpf_runs},
                          {"bpf_ns_per_packet", target ? nlohmann::json() : nlohmann::json(bpf_ns)},
                          {"daemon_cpu_seconds", *daemon1 - *daemon0},
                          {"daemon_cpu_percent", 100 * (*daemon1 - *daemon0) / w->seconds},
                          {"observers_cpu_percent", 100 * (*observers1 - *observers0) / w->seconds},
                          {"scrapes_ok", e.scrapes.ok},
                          {"in_path", in_path}});
        run.out() << "pass " << pass << " window " << slot << " " << config << " (" << role << ") established "
                  << rate_name << ": received " << fixed(w->received_pps / 1e6, 3) << " Mpps, loss "
                  << fixed(w->loss_percent, 2) << " %, " << fixed(w->nonidle_ns_per_packet, 0) << " CPU ns/pkt ("
                  << fixed(w->softirq_ns_per_packet, 0) << " softirq; daemon " << fixed(100 * (*daemon1 - *daemon0) / w->seconds, 1) << " % of a CPU"
                  << (target ? std::string() : "; BPF " + fixed(bpf_ns, 1) + " ns/run") << "); " << in_path << "\n";
        return {};
    }

    // PacketSink's destructor takes its filters off the WAN host's TC
    // ingress but leaves the clsact qdisc it made, which the next attach
    // would refuse (EEXIST): it goes here, before and after each block.
    void remove_sink_qdisc() { (void)lab.run("wan", {"tc", "qdisc", "del", "dev", "eth0", "clsact"}); }

    // (a), one pass: one sluice start; the flows at the fixed rate, then
    // unlimited. At each rate the windows alternate between off (the
    // reference) and one of the others, the measured configurations and off
    // again as the control, in an order rotating from cycle to cycle:
    //   off, log, off, on, off, off', off, on, off, ..., off
    // and a measured window is compared with the mean of the two off windows
    // either side of it, a few seconds away. The host's slow and fast spells
    // on this VM last seconds and move the CPU time per packet by up to half
    // (docs/benchmarks.md); configurations measured in separate sluice starts
    // tens of seconds apart, as (b) does, differ by those spells more than by
    // what they measure, and a window before and one after a measured one
    // cancel a spell's drift across it to first order.
    Status established(int pass, const std::vector<std::string>& configs) {
        // This process on CPU 1 while (a) runs: the commands it runs between
        // windows (`sluice reload`, `show`, bpftool, the probe) inherit it and
        // stay off trafgen's CPU, which they would otherwise stall, and
        // trafgen would catch up in the next window. trafgen sets its own
        // sending process's CPU.
        auto pinned = CpuPin::to(kDaemonCpu);
        if (!pinned) return pinned.error();
        std::vector<std::pair<std::string, std::string>> arms;  // (config, role)
        for (const auto& c : configs)
            if (c != "off") arms.emplace_back(c, "measured");
        arms.emplace_back("off", "control");
        // The receiver drops every frame: it is on the WAN host only for (a).
        remove_sink_qdisc();
        auto sink = PacketSink::attach(lab.ns("wan"), "eth0", kFlowPort);
        if (!sink) return sink.error();
        Status result = [&]() -> Status {
            for (uint64_t target : {rate, uint64_t{0}}) {
                const int rate_cycles = target ? cycles : unlimited_cycles;
                if (rate_cycles == 0) continue;
                std::unique_ptr<TrafgenFlood> flood;
                // Unlimited: the kernel counts BPF run time while this lives.
                std::unique_ptr<BpfRunTimeStats> bpf_stats;
                int slot = 0;
                auto window = [&](int cycle, const std::string& config, const std::string& role) -> Status {
                    if (auto s = check_interrupted(); !s) return s;
                    ++slot;
                    const std::string what = "established " + config + " (" + role + ") pass " +
                                             std::to_string(pass) + " window " + std::to_string(slot);
                    if (auto s = switch_to(config, what); !s) return s;
                    if (!flood) {
                        auto f = TrafgenFlood::start(lab.ns("lan"), "eth0", trafgen_config, lab.tmp() + "/trafgen.log",
                                                     target);
                        if (!f) return f.error();
                        flood = std::move(*f);
                        if (auto s = pause(kWarmupSeconds); !s) return s;  // every flow's session opened
                        if (!target) {
                            auto enabled = BpfRunTimeStats::enable();
                            if (!enabled) return with_context(what, enabled.error());
                            bpf_stats = std::move(*enabled);
                        }
                    }
                    auto proof = prove_config(config, what);
                    if (!proof) return proof.error();
                    if (auto s = pause(kSettleSeconds); !s) return s;
                    return established_window(pass, slot, cycle, config, role, target, **sink, *flood, *proof);
                };
                for (int cycle = 1; cycle <= rate_cycles; ++cycle)
                    for (const auto& [config, role] : rotated(arms, pass + cycle - 1)) {
                        if (auto s = window(cycle, "off", "reference"); !s) return s;
                        if (auto s = window(cycle, config, role); !s) return s;
                    }
                if (auto s = window(rate_cycles, "off", "reference"); !s) return s;  // the last one's other side
                if (auto s = flood->stop(); !s) return s;
            }
            if (capture)
                if (auto s = end_capture_stint("established pass " + std::to_string(pass)); !s) return s;
            if (auto s = fw.stop(); !s) return s;
            remove_flow_logs(flow_log_path);
            return {};
        }();
        sink->reset();
        remove_sink_qdisc();
        return result;
    }

    Status connections(int pass, const std::string& config) {
        const std::string what = "connections " + config + " pass " + std::to_string(pass);
        if (auto s = start_config(config, -1); !s) return s;
        if (auto s = prove_attached(what); !s) return s;
        auto stats0 = fw.stats();
        if (!stats0) return stats0.error();
        const ScrapeLog scrapes0 = scrapes();
        auto daemon0 = daemon_cpu();
        if (!daemon0) return daemon0.error();
        const double t0 = now_seconds();
        ConnrateClient c;
        c.address = cluster::kWanHost4;
        c.ports = kConnPorts;
        c.sources = kLanSources;
        c.duration = conn_seconds;
        c.warmup = kConnWarmup;
        c.threads = kConnThreads;
        c.concurrency = conn_concurrency;
        auto o = run_connrate(lab, connrate, c, &conn_offset);
        if (!o) return with_context(what, o.error());
        const double wall = now_seconds() - t0;
        auto daemon1 = daemon_cpu();
        if (!daemon1) return daemon1.error();
        const ScrapeLog scrapes1 = scrapes();
        const bool capture_running = capture && lab.running(*capture);
        auto cfg = capture_cfg();
        if (!cfg) return with_context(what, cfg.error());
        auto stats1 = fw.stats();
        if (!stats1) return stats1.error();
        if (auto s = prove_attached(what + ", after the run"); !s) return s;
        const Counters d = counter_delta(*stats0, *stats1);
        const uint64_t created = counter(d, "session-created");
        if (o->completed == 0) return make_error(what + ": no connection completed: " + o->json);
        if (created < o->completed)
            return make_error(what + ": sluice created " + std::to_string(created) + " sessions for " +
                              std::to_string(o->completed) + " completed connections: they did not go through it");
        auto e = observers(config, conn_seconds + kConnWarmup, scrapes_between(scrapes0, scrapes1),
                           capture_running, *cfg);
        if (!e) return with_context(what, e.error());
        auto proof = check_observers(*e);
        if (!proof) return with_context(what, proof.error());
        const std::string in_path = "sluice " + xdp_mode + " on lan0 and wan0, session-created +" +
                                    std::to_string(created) + " for " + std::to_string(o->completed) +
                                    " connections counted; " + *proof;
        run.results->add({{"part", "connections"},
                          {"pass", pass},
                          {"config", config},
                          {"conn_per_second", o->per_second},
                          {"completed", o->completed},
                          {"failed", o->failures},
                          {"failures", o->failures_by_kind},
                          {"p50_us", o->p50_us},
                          {"p99_us", o->p99_us},
                          {"sessions_created", created},
                          {"client_seconds", wall},
                          {"daemon_cpu_seconds", *daemon1 - *daemon0},
                          {"daemon_cpu_percent", 100 * (*daemon1 - *daemon0) / wall},
                          {"flow_log_lines", e->log.lines},
                          {"flow_log_open", e->log.open},
                          {"flow_log_close", e->log.close},
                          {"flow_log_event", e->flow_log_event},
                          {"scrapes_ok", e->scrapes.ok},
                          {"in_path", in_path}});
        run.out() << "pass " << pass << " " << config << " connections: " << fixed(o->per_second, 0)
                  << " conn/s (p50 " << o->p50_us << " µs, p99 " << o->p99_us << " µs, " << o->failures
                  << " failed; daemon " << fixed(100 * (*daemon1 - *daemon0) / wall, 0) << " % of a CPU); " << in_path
                  << "\n";
        return stop_config(config, "connections", pass);
    }
};

Status run_observe(BenchRun& run, const Options& o) {
    if (auto s = check_machine({"trafgen", "curl", "bpftool", "taskset", "bash"}); !s) return s;
    auto configs = parse_observe_configs(o.configs);
    if (!configs) return with_context("--configs", configs.error());
    if (o.xdp_mode != "tc" && o.xdp_mode != "generic")
        return make_error("--xdp-mode is tc or generic (native XDP on veth needs an XDP program on the hosts' "
                          "veths for TCP, which part (b) does not have)");
    if (o.skip_established && o.skip_connections && o.skip_datapath)
        return make_error("--skip-established, --skip-connections and --skip-datapath: nothing to measure");
    const int passes = o.passes ? o.passes : run.quick ? 1 : 10;
    const double seconds = o.seconds > 0 ? o.seconds : 2;
    const int cycles = o.cycles ? o.cycles : run.quick ? 2 : 10;
    const int unlimited_cycles = o.unlimited_cycles >= 0 ? o.unlimited_cycles : run.quick ? 1 : 2;
    const double conn_seconds = o.conn_seconds > 0 ? o.conn_seconds : run.quick ? 2 : 10;
    const long user_hz = sysconf(_SC_CLK_TCK);
    std::string connrate;
    if (!o.skip_connections) {
        auto tool = run.tool("sluice_connrate");
        if (!tool) return tool.error();
        connrate = *tool;
    }
    ObserveDatapathOptions datapath;
    if (o.datapath_passes) datapath.passes = o.datapath_passes;
    else if (run.quick) datapath.passes = 2;
    if (run.quick) datapath.calls = datapath.first_calls = 200;
    if (!o.skip_datapath)
        if (auto tool = run.tool("sluice_xdp_cost"); !tool) return tool.error();

    auto lab_r = Lab::create("single", run.prefix, run.out());
    if (!lab_r) return lab_r.error();
    Lab& lab = **lab_r;
    auto mac = [&](const std::string& node, const std::string& dev) -> Result<std::string> {
        auto link = lab.output(node, {"ip", "-j", "link", "show", dev});
        if (!link) return link.error();
        return mac_of(*link);
    };
    auto fw_lan_mac = mac("fw", "lan0");
    if (!fw_lan_mac) return fw_lan_mac.error();
    auto lan_mac = mac("lan", "eth0");
    if (!lan_mac) return lan_mac.error();
    auto wan_mac = mac("wan", "eth0");
    if (!wan_mac) return wan_mac.error();
    // The receiver of (a) drops ARP too: the firewall knows the WAN host's
    // MAC for good.
    if (auto s = lab.must("fw", {"ip", "neigh", "replace", cluster::kWanHost4, "lladdr", *wan_mac, "dev", "wan0",
                                 "nud", "permanent"});
        !s)
        return s;
    for (size_t i = 1; i < kLanSources.size(); ++i)
        if (auto s = lab.must("lan", {"ip", "addr", "add", kLanSources[i] + "/24", "dev", "eth0"}); !s) return s;

    UdpFlowsSpec spec;
    spec.destination_mac = *fw_lan_mac;
    spec.source_mac = *lan_mac;
    spec.source = cluster::kLanHost4;
    spec.destination = cluster::kWanHost4;
    spec.destination_port = kFlowPort;
    auto packets = trafgen_udp_flows_config(spec);
    if (!packets) return packets.error();
    auto trafgen_config = lab.write_file("udp-flows.cfg", *packets);
    if (!trafgen_config) return trafgen_config.error();

    SluiceFirewall fw(lab);
    Bench bench{run, lab, fw, o.xdp_mode, {}, lab.tmp() + "/flows.jsonl", *trafgen_config, connrate, o.rate,
                seconds, conn_seconds, cycles, o.conn_concurrency, user_hz, 0, unlimited_cycles, 0, std::nullopt,
                std::nullopt, 0, {}};
    ObserveSluiceSpec sluice_spec;
    sluice_spec.xdp_mode = o.xdp_mode;
    sluice_spec.flow_log_path = bench.flow_log_path;
    sluice_spec.metrics_listen = std::string(cluster::kFw0Lan4) + ":" + kMetricsPort;
    sluice_spec.udp_port = kFlowPort;
    sluice_spec.tcp_ports = kConnPorts;
    sluice_spec.denied_port = kDeniedPort;
    for (const auto& config : *configs) {
        const std::string text = observe_sluice_config(config, sluice_spec);
        auto path = lab.write_file("sluice-" + config + ".yaml", text);
        if (!path) return path.error();
        bench.config_texts[config] = text;
        if (auto s = fw.check(*path); !s) return s;
        bench.config_paths[config] = *path;
    }
    if (!o.skip_connections) {
        ConnrateServer server;
        server.addresses = {cluster::kWanHost4};
        server.ports = kConnPorts;
        server.threads = 2;
        if (auto p = start_connrate_server(lab, connrate, server, "connrate-server"); !p) return p.error();
    }
    auto curl = lab.output("", {"curl", "--version"});
    // "curl 7.88.1 (x86_64-pc-linux-gnu) libcurl/...": its first two words.
    std::string curl_version = "curl ?";
    if (curl) {
        const size_t space = curl->find(' ', curl->find(' ') + 1);
        curl_version = curl->substr(0, std::min(space, curl->find('\n')));
    }
    const int quiet_wait = o.quiet_wait ? o.quiet_wait : run.quick ? 60 : 300;
    auto quiet = wait_quiet(o.quiet_busy, quiet_wait, run.out());
    if (!quiet) return quiet.error();

    run.results->add({{"event", "setup"},
                      {"passes", passes},
                      {"seconds", seconds},
                      {"cycles", cycles},
                      {"unlimited_cycles", unlimited_cycles},
                      {"settle_seconds", kSettleSeconds},
                      {"rate_pps", o.rate},
                      {"configs", *configs},
                      {"xdp_mode", o.xdp_mode},
                      {"flows", spec.flows},
                      {"frame_bytes", spec.frame_bytes},
                      {"conn_seconds", conn_seconds},
                      {"conn_threads", kConnThreads},
                      {"conn_concurrency", o.conn_concurrency},
                      {"established", !o.skip_established},
                      {"connections", !o.skip_connections},
                      {"datapath", !o.skip_datapath},
                      {"datapath_passes", o.skip_datapath ? 0 : datapath.passes},
                      {"daemon_cpu_established", kDaemonCpu},
                      {"probe_datagrams", kProbeDatagrams},
                      {"user_hz", user_hz},
                      {"curl", curl_version},
                      {"date", utc_now()},
                      {"machine", machine_line()},
                      {"load_start", load_average()},
                      {"quiet_busy_percent", *quiet},
                      {"quiet_max_busy_percent", o.quiet_busy}});
    run.out() << "== observability cost: " << passes << " pass(es) x " << configs->size() << " configurations; "
              << (o.skip_established ? std::string()
                                     : "(a) " + std::to_string(spec.flows) + " UDP flows at " + std::to_string(o.rate) +
                                           " pps (" + std::to_string(cycles) + " cycles) and unlimited (" +
                                           std::to_string(unlimited_cycles) + "), " + num(seconds) +
                                           " s windows, off between every two, configurations switched by reload; ")
              << (o.skip_connections ? std::string() : "(b) new TCP connections, " + num(conn_seconds) + " s per run; ")
              << (o.skip_datapath ? std::string() : "(c) the datapath, " + std::to_string(datapath.passes) + " passes")
              << "\n";
    if (!o.skip_datapath)
        if (auto s = run_observe_datapath(run, datapath); !s) return with_context("(c) the datapath", s.error());
    if (o.skip_established && o.skip_connections) {
        run.results->add({{"event", "end"}, {"load_end", load_average()}});
        return {};
    }
    for (int pass = 1; pass <= passes; ++pass) {
        // The gate again before every pass (and after (c)): a build started meanwhile is
        // waited out rather than measured.
        if (pass > 1 || !o.skip_datapath) {
            auto q = wait_quiet(o.quiet_busy, quiet_wait, run.out());
            if (!q) return with_context("before pass " + std::to_string(pass), q.error());
            run.results->add({{"event", "quiet"}, {"pass", pass}, {"busy_percent", *q}});
        }
        if (!o.skip_established)
            if (auto s = bench.established(pass, *configs); !s) return s;
        if (!o.skip_connections)
            for (const auto& config : rotated(*configs, pass)) {
                if (auto s = check_interrupted(); !s) return s;
                if (auto s = bench.connections(pass, config); !s) return s;
            }
    }
    run.results->add({{"event", "end"}, {"load_end", load_average()}});
    return {};
}

}  // namespace

Benchmark observe_benchmark() {
    auto o = std::make_shared<Options>();
    Benchmark b;
    b.name = "observe";
    b.summary =
        "what flow logs, metrics scraping and drop capture cost: CPU ns per packet of established UDP flows, new "
        "TCP connections per second and the datapath's ns per packet, observability off vs on";
    b.doc = "docs/benchmarks.md";
    b.add_options = [o](CLI::App& app) {
        app.add_option("--passes", o->passes,
                       "passes (default 10, --quick 1); each measures every configuration, rotating which goes first")
            ->check(positive_number());
        // Whole seconds: trafgen's --rate sends each second's packets in one
        // burst and waits out the rest of the second, so only a window of
        // whole seconds holds the rate (a 1.5 s one holds one burst or two).
        app.add_option("--time", o->seconds, "seconds per window of (a), whole (default 2)")
            ->check(CLI::Range(1, 3600));
        app.add_option("--cycles", o->cycles,
                       "(a): cycles per pass at the fixed rate; a cycle measures every configuration but off and off "
                       "again (the control) once each, each between two off windows (default 10, --quick 2)")
            ->check(CLI::Range(1, kMaxCycles));
        app.add_option("--unlimited-cycles", o->unlimited_cycles,
                       "(a): the same unlimited, cycles per pass (default 2, --quick 1; 0 leaves it out)")
            ->check(CLI::Range(0, kMaxCycles));
        app.add_option("--conn-time", o->conn_seconds, "seconds counted per run of (b) (default 10, --quick 2)")
            ->check(positive_number());
        app.add_option("--rate", o->rate, "(a)'s fixed rate, packets per second")
            ->capture_default_str()
            ->check(positive_number());
        app.add_option("--configs", o->configs,
                       "the configurations, space- or comma-separated, off among them: off log on")
            ->capture_default_str();
        app.add_option("--xdp-mode", o->xdp_mode, "sluice's mode on lan0 and wan0: tc (what auto picks on veth) or generic")
            ->capture_default_str();
        app.add_option("--conn-concurrency", o->conn_concurrency, "(b): connections in flight per client thread (2 threads)")
            ->capture_default_str()
            ->check(positive_number());
        app.add_option("--quiet-busy", o->quiet_busy,
                       "the quiet gate: the machine at most this % busy over 5 s before the first measurement")
            ->capture_default_str()
            ->check(CLI::Range(0.0, 100.0));
        app.add_option("--quiet-wait", o->quiet_wait, "seconds the quiet gate waits (default 300, --quick 60)")
            ->check(non_negative_number());
        app.add_flag("--skip-established", o->skip_established, "leave out (a), the established flows");
        app.add_flag("--skip-connections", o->skip_connections, "leave out (b), the new connections");
        app.add_flag("--skip-datapath", o->skip_datapath, "leave out (c), the datapath's own cost (BPF_PROG_TEST_RUN)");
        app.add_option("--datapath-passes", o->datapath_passes, "(c)'s passes (default 20, --quick 2)")
            ->check(positive_number());
    };
    b.run = [o](BenchRun& run) -> Status { return run_observe(run, *o); };
    b.report = observe_report;
    return b;
}

}  // namespace sluice::bench
