// `sluice bench observe`'s pure parts (userspace/bench/observe_checks.h,
// observe_report.h): the configurations and their sluice config files, the
// readers of what the observers leave (flow log, scraper log, capture_cfg,
// the capture's summary, `show metrics --json`), the checks that fail a
// measurement whose observers were not in the path, and the report and
// issue 21's goal rendered from records alone.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "bench/benchmark.h"
#include "bench/observe_checks.h"
#include "bench/observe_report.h"
#include "config/load_config.h"

using namespace sluice::bench;
using nlohmann::json;

namespace {

ObserveSluiceSpec spec() {
    ObserveSluiceSpec s;
    s.flow_log_path = "/tmp/bench-observe/flows.jsonl";
    return s;
}

const char* kOpen =
    R"j({"action":"permit","bytes":60,"dst":"198.18.100.200","dst_port":5301,"event":"open","family":"ipv4","interface":"lan0","policy":"lan-tcp","protocol":"tcp","src":"198.18.1.10","src_port":1024,"time":"2026-12-05T23:24:39.7Z","zone_in":"trust","zone_out":"untrust"})j";
const char* kClose =
    R"j({"bytes_in":416,"bytes_out":400,"close_reason":"fin","dst":"198.18.100.200","dst_port":5314,"duration_s":1.168,"event":"close","family":"ipv4","packets_in":4,"packets_out":6,"policy":"lan-tcp","protocol":"tcp","src":"198.18.1.10","src_port":2394,"time":"2026-12-05T23:24:55.4Z","zone_in":"trust","zone_out":"untrust"})j";
const char* kDeny =
    R"j({"action":"deny","bytes":30,"dst":"198.18.100.200","dst_port":6000,"event":"deny","family":"ipv4","interface":"lan0","policy":"(default)","protocol":"udp","reason":"drop-policy-default","src":"198.18.1.10","src_port":41735,"time":"2026-12-05T23:24:39.7Z","zone_in":"trust","zone_out":"untrust"})j";

// What bpftool 7 prints for `-j map dump pinned .../capture_cfg` with BTF.
std::string capture_cfg_json(int enabled, int pid) {
    return R"([{"key":["0x00","0x00","0x00","0x00"],"value":["0x01","0x00"],"formatted":{"key":0,"value":{"enabled":)" +
           std::to_string(enabled) + R"(,"owner_pid":)" + std::to_string(pid) +
           R"(,"reason":4294967295,"sample_every":1,"snaplen":256,"pad":0}}}])";
}

ObserverEvidence on_evidence() {
    ObserverEvidence e;
    e.config = "on";
    e.seconds = 10;
    e.sessions_created = 256;
    e.log = {256, 256, 0, 0, 0};
    e.flow_log_event = 256;
    e.scrapes.ok = 9;
    e.capture_running = true;
    e.capture_pid = 4242;
    e.capture_cfg = CaptureCfg{true, 4242};
    return e;
}

}  // namespace

TEST(BenchObserveConfigs, OffMustBeAmongThemAndTheOrderIsKept) {
    auto c = parse_observe_configs("on,off log");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(*c, (std::vector<std::string>{"on", "off", "log"}));
    EXPECT_FALSE(parse_observe_configs("on log")) << "no off: nothing to take a ratio against";
    EXPECT_FALSE(parse_observe_configs("off")) << "off alone";
    auto unknown = parse_observe_configs("off loud");
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("off log on"), std::string::npos) << unknown.error().message;
    EXPECT_TRUE(observe_logs("log") && observe_logs("on") && !observe_logs("off"));
    EXPECT_TRUE(observe_scrapes_and_captures("on") && !observe_scrapes_and_captures("log"));
}

TEST(BenchObserveConfigs, TheConfigsParseAndDifferByObservabilityAlone) {
    std::map<std::string, sluice::config::Config> parsed;
    for (const auto& name : observe_configs()) {
        const std::string text = observe_sluice_config(name, spec());
        auto r = sluice::config::parse_config(text, name + ".yaml");
        std::string problems;
        for (const auto& d : r.diagnostics) problems += d.message + "\n";
        ASSERT_TRUE(r.ok()) << name << ":\n" << text << problems;
        parsed.emplace(name, *r.config);
        EXPECT_NE(text.find("xdp-mode: tc"), std::string::npos);
        EXPECT_NE(text.find("timeouts: { tcp-time-wait: 1s, tcp-closing: 1s }"), std::string::npos)
            << "the same timeouts in every configuration";
    }
    const auto& off = parsed.at("off");
    const auto& log = parsed.at("log");
    const auto& on = parsed.at("on");
    ASSERT_EQ(off.policies.size(), 2u);
    ASSERT_EQ(on.policies.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(off.policies[i].log, 0u);
        EXPECT_EQ(log.policies[i].log, 7u) << "open, close and deny";
        EXPECT_EQ(on.policies[i].log, 7u);
        EXPECT_EQ(off.policies[i].name, on.policies[i].name);
    }
    EXPECT_EQ(off.default_log, 0u);
    EXPECT_NE(on.default_log, 0u);
    EXPECT_FALSE(off.metrics.listen.has_value());
    EXPECT_FALSE(log.metrics.listen.has_value());
    EXPECT_TRUE(on.metrics.listen.has_value());
    EXPECT_EQ(on.flow_log.path, "/tmp/bench-observe/flows.jsonl");
    EXPECT_EQ(on.flow_log.rate_limit, 0u) << "no rate limit: every event is a line";
    EXPECT_GE(on.flow_log.max_bytes, 1ull << 30) << "no rotation within a run";
    const std::string off_text = observe_sluice_config("off", spec());
    EXPECT_EQ(off_text.find("flow-log"), std::string::npos);
    EXPECT_EQ(off_text.find("metrics"), std::string::npos);
    EXPECT_NE(observe_sluice_config("on", spec()).find("host-inbound: [metrics]"), std::string::npos);
}

TEST(BenchObserveReaders, FlowLogLinesCountedByEvent) {
    std::istringstream in(std::string(kOpen) + "\n" + kOpen + "\n" + kClose + "\n\n" + kDeny + "\n" +
                          R"({"event":"other"})" + "\n");
    FlowLogCounts c = count_flow_log(in);
    EXPECT_EQ(c.lines, 5u);
    EXPECT_EQ(c.open, 2u);
    EXPECT_EQ(c.close, 1u);
    EXPECT_EQ(c.deny, 1u);
    EXPECT_EQ(c.other, 1u);
    FlowLogCounts d = c - FlowLogCounts{2, 1, 1, 0, 0};
    EXPECT_EQ(d.lines, 3u);
    EXPECT_EQ(d.open, 1u);
    EXPECT_EQ(d.close, 0u);
    EXPECT_EQ(d.deny, 1u);
}

TEST(BenchObserveReaders, FlowLogFilesIncludeTheRotatedOnesAndAMissingFileIsEmpty) {
    const std::string dir = std::filesystem::temp_directory_path() / ("bench-observe-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/flows.jsonl";
    EXPECT_EQ(count_flow_log_files(path).lines, 0u);
    std::ofstream(path) << kOpen << "\n" << kClose << "\n";
    std::ofstream(path + ".1") << kOpen << "\n";
    FlowLogCounts c = count_flow_log_files(path);
    EXPECT_EQ(c.lines, 3u);
    EXPECT_EQ(c.open, 2u);
    EXPECT_EQ(c.close, 1u);
    std::filesystem::remove_all(dir);
}

TEST(BenchObserveReaders, ScrapesAreOkOnlyWith200AndABody) {
    auto s = parse_scrape_log("200 19818\n200 19820\n000 0\n200 0\n200 1");  // the last line is still being written
    EXPECT_EQ(s.ok, 2u);
    EXPECT_EQ(s.failed, 2u);
    EXPECT_EQ(s.first_failure, "000 0");
    auto d = scrapes_between(parse_scrape_log("200 1\n"), parse_scrape_log("200 1\n200 2\n200 3\n"));
    EXPECT_EQ(d.ok, 2u);
    EXPECT_EQ(d.failed, 0u);
}

TEST(BenchObserveReaders, CaptureCfgFromBpftool) {
    auto on = parse_capture_cfg(capture_cfg_json(1, 624));
    ASSERT_TRUE(on) << on.error().message;
    EXPECT_TRUE(on->enabled);
    EXPECT_EQ(on->owner_pid, 624u);
    auto off = parse_capture_cfg(capture_cfg_json(0, 0));
    ASSERT_TRUE(off);
    EXPECT_FALSE(off->enabled);
    auto plain = parse_capture_cfg(R"([{"key":0,"value":{"enabled":1,"owner_pid":7}}])");
    ASSERT_TRUE(plain) << plain.error().message;
    EXPECT_TRUE(plain->enabled);
    EXPECT_EQ(plain->owner_pid, 7u);
    EXPECT_FALSE(parse_capture_cfg(R"([{"key":["0x00"],"value":["0x01"]}])")) << "raw bytes only: no BTF";
    EXPECT_FALSE(parse_capture_cfg("Error: bpf obj get: No such file"));
}

TEST(BenchObserveReaders, CaptureSummary) {
    auto n = parse_capture_summary(
        "sluice: capturing every drop of instance default to /tmp/c.pcap; Ctrl-C stops\ncaptured 5 packets to "
        "/tmp/c.pcap\n  drop-policy-default 5\n");
    ASSERT_TRUE(n) << n.error().message;
    EXPECT_EQ(*n, 5u);
    auto one = parse_capture_summary("captured 1 packet to /tmp/c.pcap\n");
    ASSERT_TRUE(one);
    EXPECT_EQ(*one, 1u);
    EXPECT_FALSE(parse_capture_summary("sluice: capturing every drop ...\n")) << "killed before its summary";
}

TEST(BenchObserveReaders, MetricSumsTheMatchingSamples) {
    json m = json::parse(R"([
      {"name":"sluice_flow_log_events_total","help":"","type":"counter","samples":[
        {"labels":{"event":"open"},"value":10.0},{"labels":{"event":"close"},"value":9.0}]},
      {"name":"sluice_flow_log_events_dropped_total","help":"","type":"counter","samples":[
        {"labels":{"reason":"rate-limit"},"value":0.0},{"labels":{"reason":"ring-full"},"value":2.0}]}])");
    EXPECT_EQ(metric_sum(m, "sluice_flow_log_events_total").value(), 19.0);
    EXPECT_EQ(metric_sum(m, "sluice_flow_log_events_total", {{"event", "close"}}).value(), 9.0);
    EXPECT_EQ(metric_sum(m, "sluice_flow_log_events_dropped_total").value(), 2.0);
    EXPECT_EQ(metric_sum(m, "sluice_flow_log_events_total", {{"event", "deny"}}).value(), 0.0);
    EXPECT_FALSE(metric_sum(m, "sluice_missing_total"));
    EXPECT_FALSE(metric_sum(json::object(), "sluice_flow_log_events_total"));
}

TEST(BenchObserveChecks, TheFixedRateMustBeHeld) {
    EXPECT_TRUE(check_rate_held(150000, 150000));
    EXPECT_TRUE(check_rate_held(152900, 150000)) << "+1.9 %";
    EXPECT_TRUE(check_rate_held(900000, 0)) << "unlimited: any rate";
    auto fast = check_rate_held(202000, 150000);
    ASSERT_FALSE(fast);
    EXPECT_NE(fast.error().message.find("202000 packets/s offered instead of 150000 (+34.7 %)"), std::string::npos)
        << fast.error().message;
    EXPECT_FALSE(check_rate_held(132000, 150000)) << "-12 %";
}

TEST(BenchObserveReaders, ProgramRunTime) {
    auto s = parse_prog_run_stats(
        R"({"id":812,"type":"sched_cls","name":"tc_main_prog","tag":"ab","gpl_compatible":true,)"
        R"("run_time_ns":123456789,"run_cnt":2000000,"loaded_at":1,"uid":0})");
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(s->run_time_ns, 123456789u);
    EXPECT_EQ(s->run_cnt, 2000000u);
    EXPECT_FALSE(parse_prog_run_stats(R"({"id":812,"name":"tc_main_prog"})")) << "statistics off";
    EXPECT_FALSE(parse_prog_run_stats("Error: get by id (812): No such file or directory"));

}

TEST(BenchObserveReaders, ProcessCpuTimeIsUtimePlusStime) {
    // utime 250, stime 50 ticks; a COMM with a space and a parenthesis.
    const std::string stat = "4242 (sluice (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 1 2 3";
    auto s = parse_process_cpu_seconds(stat, 100);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_DOUBLE_EQ(s.value(), 3.0);
    EXPECT_FALSE(parse_process_cpu_seconds("", 100)) << "the process is gone";
    EXPECT_FALSE(parse_process_cpu_seconds("4242 (sluice) S 1 2", 100));
}

TEST(BenchObserveChecks, OnNeedsEveryObserverInThePath) {
    auto ok = check_observers(on_evidence());
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_NE(ok->find("256 open / 0 close / 0 deny lines for 256 sessions"), std::string::npos) << *ok;
    EXPECT_NE(ok->find("9 scrapes HTTP 200, capture pid 4242 running with capture_cfg enabled"), std::string::npos)
        << *ok;

    auto e = on_evidence();
    e.log.open = 200;
    EXPECT_FALSE(check_observers(e)) << "opens not logged";
    e = on_evidence();
    e.flow_log_event = 300;
    EXPECT_FALSE(check_observers(e)) << "events handed over but not written";
    e = on_evidence();
    e.flow_log_dropped = 1;
    EXPECT_FALSE(check_observers(e)) << "an event dropped";
    e = on_evidence();
    e.scrapes.ok = 4;
    EXPECT_FALSE(check_observers(e)) << "fewer than one scrape per two seconds";
    e = on_evidence();
    e.scrapes.failed = 1;
    e.scrapes.first_failure = "000 0";
    auto failed = check_observers(e);
    ASSERT_FALSE(failed);
    EXPECT_NE(failed.error().message.find("000 0"), std::string::npos);
    e = on_evidence();
    e.capture_running = false;
    EXPECT_FALSE(check_observers(e)) << "the capture died";
    e = on_evidence();
    e.capture_cfg = CaptureCfg{false, 0};
    EXPECT_FALSE(check_observers(e)) << "capture off";
    e = on_evidence();
    e.capture_cfg = CaptureCfg{true, 99};
    EXPECT_FALSE(check_observers(e)) << "someone else's capture";
    e = on_evidence();
    e.sessions_created = 0;
    e.log = {};
    e.flow_log_event = 0;
    EXPECT_FALSE(check_observers(e)) << "nothing to log";
}

TEST(BenchObserveChecks, ClosesAreRequiredWhenExpected) {
    auto e = on_evidence();
    e.expect_closes = true;
    EXPECT_FALSE(check_observers(e)) << "256 opens, no close";
    e.log = {512, 256, 254, 0, 0};
    EXPECT_TRUE(check_observers(e)) << "99 % of the opens closed";
    e.log = {500, 256, 244, 0, 0};
    EXPECT_FALSE(check_observers(e));
}

TEST(BenchObserveChecks, OffAndLogMustNotHaveWhatTheyLeaveOut) {
    ObserverEvidence off;
    off.config = "off";
    off.sessions_created = 256;
    off.capture_cfg = CaptureCfg{false, 0};
    auto ok = check_observers(off);
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(*ok, "flow-log-event +0, no flow-log line, capture off");
    off.flow_log_event = 3;
    EXPECT_FALSE(check_observers(off)) << "off logged";
    off.flow_log_event = 0;
    off.capture_cfg = CaptureCfg{true, 1};
    EXPECT_FALSE(check_observers(off)) << "a capture is on";

    auto log = on_evidence();
    log.config = "log";
    log.scrapes = {};
    log.capture_running = false;
    log.capture_pid = 0;
    log.capture_cfg = CaptureCfg{false, 0};
    auto l = check_observers(log);
    ASSERT_TRUE(l) << l.error().message;
    EXPECT_NE(l->find("capture off"), std::string::npos);
    log.capture_cfg = CaptureCfg{true, 5};
    EXPECT_FALSE(check_observers(log));
}

TEST(BenchObserveChecks, TheDeniedProbe) {
    ProbeEvidence p;
    p.config = "on";
    p.sent = 5;
    p.dropped_default = 5;
    p.deny_lines = 5;
    p.flow_log_event = 5;
    p.captured = 5;
    auto ok = check_probe(p);
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(*ok, "5 denied datagrams: drop-policy-default +5, 5 deny lines, captured 5");
    p.captured = 4;
    EXPECT_FALSE(check_probe(p));
    p.captured.reset();
    EXPECT_FALSE(check_probe(p)) << "on without the capture's summary";
    p.config = "log";
    EXPECT_TRUE(check_probe(p));
    p.deny_lines = 4;
    EXPECT_FALSE(check_probe(p));
    p.config = "off";
    p.deny_lines = 0;
    p.flow_log_event = 0;
    EXPECT_TRUE(check_probe(p));
    p.flow_log_event = 1;
    EXPECT_FALSE(check_probe(p)) << "off logged the deny";
    p.flow_log_event = 0;
    p.dropped_default = 4;
    EXPECT_FALSE(check_probe(p)) << "a datagram did not reach the default action";
}

// (a)'s windows: the probe after each says which configuration was in force.
TEST(BenchObserveChecks, EachWindowProvesItsConfiguration) {
    WindowEvidence off;
    off.config = "off";
    off.seconds = 2;
    off.probe.config = "off";
    off.probe.sent = 1;
    off.probe.dropped_default = 1;
    auto proof = check_window(off);
    ASSERT_TRUE(proof) << proof.error().message;
    EXPECT_NE(proof->find("no deny line, capture off"), std::string::npos) << *proof;
    WindowEvidence wrong = off;
    wrong.probe.deny_lines = 1;
    wrong.probe.flow_log_event = 1;
    EXPECT_FALSE(check_window(wrong)) << "off's window, but the log config was in force";
    wrong = off;
    wrong.capture_cfg = CaptureCfg{true, 42};
    EXPECT_FALSE(check_window(wrong)) << "a capture left enabled in off";
    wrong = off;
    wrong.probe.dropped_default = 0;
    EXPECT_FALSE(check_window(wrong)) << "the probe never reached the default action";
    wrong.probe.sent = 0;
    EXPECT_FALSE(check_window(wrong)) << "no probe at all";

    WindowEvidence log = off;
    log.config = log.probe.config = "log";
    EXPECT_FALSE(check_window(log)) << "log's window, but the probe was not logged: off was in force";
    log.probe.deny_lines = 1;
    log.probe.flow_log_event = 1;
    ASSERT_TRUE(check_window(log));
    log.flow_log_dropped = 3;
    EXPECT_FALSE(check_window(log)) << "events dropped";

    WindowEvidence on = log;
    on.flow_log_dropped = 0;
    on.config = on.probe.config = "on";
    EXPECT_FALSE(check_window(on)) << "no scrape, no capture";
    on.scrapes.ok = 1;
    on.capture_running = true;
    on.capture_pid = 42;
    on.capture_cfg = CaptureCfg{true, 42};
    proof = check_window(on);
    ASSERT_TRUE(proof) << proof.error().message;
    EXPECT_NE(proof->find("1 scrapes HTTP 200, capture pid 42 running with capture_cfg enabled"), std::string::npos)
        << *proof;
    on.capture_cfg = CaptureCfg{true, 7};
    EXPECT_FALSE(check_window(on)) << "capture_cfg owned by another capture";
    on.capture_cfg = CaptureCfg{true, 42};
    on.scrapes.failed = 1;
    on.scrapes.first_failure = "000 0";
    EXPECT_FALSE(check_window(on)) << "a scrape failed";
}

TEST(BenchObserveChecks, TheCaptureOfOnsWindowsSawEveryProbe) {
    EXPECT_TRUE(check_capture_stint(3, 3));
    EXPECT_TRUE(check_capture_stint(4, 3)) << "a drop of its own (e.g. an ARP) may be captured too";
    EXPECT_FALSE(check_capture_stint(2, 3));
}

namespace {

// One window of (a): the machine's CPU ns/pkt (clocked), softirq a third of it.
json established(int pass, int slot, const std::string& config, const std::string& role, const std::string& rate,
                 double cpu, double received) {
    return {{"bench", "observe"},       {"part", "established"},  {"pass", pass},
            {"slot", slot},             {"cycle", (slot + 1) / 2}, {"config", config},
            {"role", role},             {"rate", rate},           {"offered_pps", received},
            {"received_pps", received}, {"loss_percent", 0.0},    {"softirq_ns_per_packet", cpu / 3},
            {"nonidle_ns_per_packet", cpu}, {"in_path", "proof " + config}};
}

json connections(int pass, const std::string& config, double rate, uint64_t created, uint64_t lines) {
    return {{"bench", "observe"},   {"part", "connections"}, {"pass", pass},  {"config", config},
            {"conn_per_second", rate}, {"p50_us", 8000},     {"p99_us", 20000}, {"failed", 0},
            {"sessions_created", created}, {"flow_log_lines", lines}, {"in_path", "proof " + config}};
}

std::vector<json> synthetic_records() {
    std::vector<json> r;
    r.push_back({{"bench", "observe"},
                 {"event", "setup"},
                 {"passes", 2},
                 {"seconds", 10.0},
                 {"rate_pps", 150000},
                 {"configs", {"off", "on"}},
                 {"xdp_mode", "tc"},
                 {"flows", 256},
                 {"frame_bytes", 60},
                 {"conn_seconds", 10.0},
                 {"conn_threads", 2},
                 {"conn_concurrency", 32},
                 {"curl", "curl 7.88.1"},
                 {"date", "2026-12-06 01:00 UTC"},
                 {"machine", "6.18.0, 2 CPUs, Test CPU"},
                 {"load_start", "0.10 0.20 0.30"},
                 {"quiet_busy_percent", 3.4}});
    // (a) at the fixed rate, each window against the off windows either
    // side. Pass 1: off 3000 | on 3100 (3100/3100 = 1) | off 3200 | off
    // again 3200 (3300/3200 = 1.031) | off 3400 | on 3600 (its right side
    // discarded: 3400/3600 = 0.944) | [off discarded]. Pass 2: off 3000 |
    // off again 3000 (3150/3000 = 1.05) | off 3300 | on 3300 (1.000) | off
    // 3300. A pass's first window is not beside the last one of the pass
    // before.
    auto fixed_window = [&](int pass, int slot, const std::string& config, const std::string& role, double cpu) {
        r.push_back(established(pass, slot, config, role, "fixed", cpu, 150000));
    };
    fixed_window(1, 1, "off", "reference", 3000);
    fixed_window(1, 2, "on", "measured", 3100);
    r.back()["daemon_cpu_percent"] = 1.0;
    r.back()["observers_cpu_percent"] = 0.5;
    fixed_window(1, 3, "off", "reference", 3200);
    fixed_window(1, 4, "off", "control", 3200);
    fixed_window(1, 5, "off", "reference", 3400);
    fixed_window(1, 6, "on", "measured", 3600);
    r.back()["daemon_cpu_percent"] = 2.0;
    fixed_window(2, 1, "off", "reference", 3000);
    fixed_window(2, 2, "off", "control", 3000);
    fixed_window(2, 3, "off", "reference", 3300);
    fixed_window(2, 4, "on", "measured", 3300);
    fixed_window(2, 5, "off", "reference", 3300);
    // Unlimited, pass 1: received on 880 kpps against (900 + 920) / 2; BPF
    // run time 52 ns against (50 + 54) / 2.
    r.push_back(established(1, 1, "off", "reference", "unlimited", 1000, 900000));
    r.back()["bpf_ns_per_packet"] = 50.0;
    r.push_back(established(1, 2, "on", "measured", "unlimited", 1000, 880000));
    r.back()["bpf_ns_per_packet"] = 52.0;
    r.push_back(established(1, 3, "off", "reference", "unlimited", 1000, 920000));
    r.back()["bpf_ns_per_packet"] = 54.0;
    // Connections: on/off 0.85 and 0.95 -> median 0.90, met by one pass.
    r.push_back(connections(1, "off", 8000, 80000, 0));
    r.push_back(connections(1, "on", 6800, 68000, 136000));
    r.back()["daemon_cpu_percent"] = 30.0;
    r.push_back(connections(2, "on", 7600, 76000, 152000));
    r.back()["daemon_cpu_percent"] = 50.0;
    r.push_back(connections(2, "off", 8000, 80000, 0));
    r.push_back({{"bench", "observe"}, {"part", "probe"}, {"after", "connections"}, {"pass", 2}, {"config", "on"},
                 {"in_path", "5 denied datagrams"}});
    r.push_back({{"bench", "observe"}, {"event", "quiet"}, {"pass", 2}, {"busy_percent", 9.6}});
    r.push_back({{"bench", "observe"},
                 {"event", "discarded"},
                 {"of", "established"},
                 {"offered_pps", 202000.0},
                 {"busy_ns_per_packet", 99999.0},
                 {"pass", 1},
                 {"slot", 7},
                 {"cycle", 3},
                 {"config", "off"},
                 {"role", "reference"},
                 {"rate", "fixed"},
                 {"reason", "the fixed rate was not held: 202000 packets/s offered instead of 150000 (+34.7 %)"}});
    r.push_back({{"bench", "observe"}, {"event", "end"}, {"load_end", "1.00 1.10 1.20"}});
    return r;
}

}  // namespace

TEST(BenchObserveReport, RatiosPerPassAgainstOff) {
    auto r = ratios_by_pass({{1, 2.0}, {2, 3.0}, {3, 1.0}}, {{1, 4.0}, {2, 0.0}, {4, 1.0}});
    EXPECT_EQ(r, (std::map<int, double>{{1, 0.5}}));
}

TEST(BenchObserveReport, MedianIntervalFromOrderStatistics) {
    EXPECT_FALSE(median_ci95({1, 2, 3, 4, 5, 6, 7, 8, 9})) << "under 10 values: no narrower than the range";
    std::vector<double> v;
    for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
    auto ci = median_ci95(v);
    ASSERT_TRUE(ci);
    // n = 100: ranks floor(50 - 9.8) = 40 and ceil(51 + 9.8) = 61.
    EXPECT_DOUBLE_EQ(ci->low, 40);
    EXPECT_DOUBLE_EQ(ci->high, 61);
    auto small = median_ci95({5, 1, 4, 2, 3, 10, 9, 8, 7, 6});
    ASSERT_TRUE(small);
    // n = 10: ranks floor(5 - 3.1) = 1 and ceil(6 + 3.1) = 10: the range.
    EXPECT_DOUBLE_EQ(small->low, 1);
    EXPECT_DOUBLE_EQ(small->high, 10);
}

TEST(BenchObserveReport, GoalsFromTheWindowsAndPasses) {
    auto goals = observe_goals(synthetic_records());
    ASSERT_EQ(goals.size(), 5u) << "on only (log was not measured), and the control, each (a) goal two ways";
    const auto& e = goals[0];
    EXPECT_EQ(e.config, "on");
    EXPECT_EQ(e.measure, "established");
    EXPECT_DOUBLE_EQ(e.goal, 0.97);
    EXPECT_TRUE(e.no_goal.empty()) << "(a) holds the established goal";
    ASSERT_EQ(e.windows.size(), 3u);
    EXPECT_DOUBLE_EQ(e.windows[0], 1.0) << "3100 against the mean of 3000 and 3200";
    EXPECT_NEAR(e.windows[1], 3400.0 / 3600.0, 1e-9) << "the discarded side left out, the other kept";
    EXPECT_DOUBLE_EQ(e.windows[2], 1.0) << "pass 2's own off windows, not pass 1's";
    ASSERT_EQ(e.per_pass.size(), 2u);
    EXPECT_NEAR(e.per_pass.at(1), (1.0 + 3400.0 / 3600.0) / 2, 1e-9) << "the median of the pass's windows";
    EXPECT_DOUBLE_EQ(e.per_pass.at(2), 1.0);
    EXPECT_DOUBLE_EQ(e.spread->median, 1.0) << "over every window, not over the passes";
    EXPECT_EQ(e.spread->n, 3u);
    EXPECT_EQ(e.at_or_above, 2);
    EXPECT_TRUE(e.met);
    EXPECT_FALSE(e.ci95) << "3 windows: no interval";
    const auto& path = goals[1];
    EXPECT_EQ(path.measure, "established path");
    ASSERT_EQ(path.windows.size(), e.windows.size());
    for (size_t i = 0; i < e.windows.size(); ++i)
        EXPECT_NEAR(path.windows[i], e.windows[i], 1e-9) << "softirq is a third of the CPU time here: the same ratios";
    const auto& c = goals[2];
    EXPECT_EQ(c.measure, "connections");
    EXPECT_DOUBLE_EQ(c.goal, 0.90);
    EXPECT_TRUE(c.windows.empty());
    EXPECT_NEAR(c.per_pass.at(1), 0.85, 1e-9);
    EXPECT_NEAR(c.per_pass.at(2), 0.95, 1e-9);
    EXPECT_NEAR(c.spread->median, 0.90, 1e-9);
    EXPECT_EQ(c.at_or_above, 1);
    EXPECT_TRUE(c.met) << "the median reaches the goal";
    // The control: off measured between two off windows.
    EXPECT_EQ(goals[4].measure, "established path control");
    const auto& a = goals[3];
    EXPECT_EQ(a.no_goal, "— (control)");
    EXPECT_EQ(a.measure, "established control");
    ASSERT_EQ(a.windows.size(), 2u);
    EXPECT_NEAR(a.windows[0], 3300.0 / 3200.0, 1e-9);
    EXPECT_NEAR(a.windows[1], 3150.0 / 3000.0, 1e-9);
    EXPECT_NEAR(a.per_pass.at(1), 3300.0 / 3200.0, 1e-9);
}

TEST(BenchObserveReport, AnEstablishedGoalMissedByTheMedian) {
    // Ten cycles of on costing 5 % more than the off windows around it, and
    // ten of the control costing the same: on's median 0.952 is not met.
    std::vector<json> r{{{"bench", "observe"}, {"event", "setup"}, {"configs", {"off", "on"}}}};
    int slot = 0;
    for (int cycle = 1; cycle <= 10; ++cycle) {
        const double base = 3000 + 100 * cycle;  // a drift both sides share
        r.push_back(established(1, ++slot, "off", "reference", "fixed", base, 150000));
        r.push_back(established(1, ++slot, "on", "measured", "fixed", 1.05 * base, 150000));
        r.push_back(established(1, ++slot, "off", "reference", "fixed", base, 150000));
        r.push_back(established(1, ++slot, "off", "control", "fixed", base, 150000));
    }
    r.push_back(established(1, ++slot, "off", "reference", "fixed", 3000, 150000));
    auto goals = observe_goals(r);
    ASSERT_EQ(goals.size(), 4u);
    EXPECT_NEAR(goals[0].spread->median, 1 / 1.05, 1e-9);
    EXPECT_EQ(goals[0].at_or_above, 0);
    EXPECT_FALSE(goals[0].met);
    ASSERT_TRUE(goals[0].ci95);
    EXPECT_NEAR(goals[0].ci95->high, 1 / 1.05, 1e-9);
    EXPECT_FALSE(goals[1].met) << "the path's softirq too";
    EXPECT_EQ(goals[2].measure, "established control");
    ASSERT_EQ(goals[2].windows.size(), 10u);
    EXPECT_NEAR(goals[2].spread->median, 1.0, 0.02) << "the control sees only the drift";
}

// Part (c): sluice_xdp_cost --observability's records, as the harness adds them.
json datapath_record(int pass, const std::string& case_name, double plain, double observed) {
    return {{"bench", "observe"}, {"part", "datapath"}, {"case", case_name}, {"pass", pass},
            {"plain_ns_per_packet", plain}, {"observed_ns_per_packet", observed}};
}

TEST(BenchObserveReport, DatapathGoalsPerFamily) {
    auto records = synthetic_records();
    // IPv4: 60/60, 61/60 -> 1.000 and 1.017; IPv6: 70/75, 70/71 -> 0.933, 0.986;
    // a first packet's rows are not a goal.
    records.push_back(datapath_record(1, "established_v4", 60, 60));
    records.push_back(datapath_record(2, "established_v4", 61, 60));
    records.push_back(datapath_record(1, "established_v6", 70, 75));
    records.push_back(datapath_record(2, "established_v6", 70, 71));
    records.push_back(datapath_record(1, "first_packet_v4", 1300, 1400));
    // The TC build's IPv4 rows: 50/50 -> 1.000 (its IPv6 absent: no row).
    records.push_back(datapath_record(1, "tc_established_v4", 50, 50));
    records.push_back({{"bench", "observe"}, {"part", "datapath_summary"}, {"summary_markdown", "TABLE-OF-C\n"}});
    auto goals = observe_goals(records);
    ASSERT_EQ(goals.size(), 8u);
    const auto& v4 = goals[5];
    EXPECT_EQ(v4.measure, "datapath established_v4");
    EXPECT_DOUBLE_EQ(v4.goal, 0.97);
    EXPECT_DOUBLE_EQ(v4.per_pass.at(1), 1.0);
    EXPECT_NEAR(v4.per_pass.at(2), 61.0 / 60.0, 1e-9) << "off ns / on ns: above 1 when on ran faster";
    EXPECT_TRUE(v4.met);
    const auto& v6 = goals[6];
    EXPECT_NEAR(v6.per_pass.at(1), 70.0 / 75.0, 1e-9);
    EXPECT_NEAR(v6.spread->median, (70.0 / 75.0 + 70.0 / 71.0) / 2, 1e-9);
    EXPECT_EQ(v6.at_or_above, 1);
    EXPECT_FALSE(v6.met) << "median 0.960 is below 0.97";
    auto text = observe_benchmark().report(records);
    EXPECT_EQ(goals[7].measure, "datapath tc_established_v4");
    EXPECT_DOUBLE_EQ(goals[7].per_pass.at(1), 1.0);
    EXPECT_NE(text.find("| on | established packets in the datapath (BPF_PROG_TEST_RUN, XDP build), IPv6: off ns/pkt / "
                        "flow log + capture ns/pkt | ≥ 0.97 | 0.960 (0.933–0.986) over 2 passes | - | 1 of 2 | no |"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("(c) The datapath alone (tests/sluice_xdp_cost --observability). TABLE-OF-C"), std::string::npos)
        << text;
}

TEST(BenchObserveReport, TablesFromTheRecordsAlone) {
    auto text = observe_benchmark().report(synthetic_records());
    EXPECT_EQ(text.rfind("### Observability cost, 2026-12-06 01:00 UTC\n\n", 0), 0u) << text;
    EXPECT_NE(text.find("load average 0.10 0.20 0.30 at the start, 1.00 1.10 1.20 at the end; the machine 3.4 % "
                        "busy over 5 s at the quiet gate"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("| on | established packets at the fixed rate, the whole machine: CPU ns/pkt (clocked), off "
                        "(the windows either side) / on, every window | ≥ 0.97 | 1.000 (0.944–1.000) over 3 windows | "
                        "- | 2 of 3 | yes |"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("| on | new connections per second: on / off | ≥ 0.90 | 0.900 (0.850–0.950) over 2 passes | - | "
                        "1 of 2 | yes |"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("- on, established: 1: 0.972, 2: 1.000"), std::string::npos) << text;
    EXPECT_NE(text.find("| off | control, nothing different: the whole machine: CPU ns/pkt (clocked), off (the windows "
                        "either side) / off again, every window | — (control) | 1.041 (1.031–1.050) over 2 windows | - "
                        "| — | — |"),
              std::string::npos)
        << text;
    // Cells over every window of the row; ratios against the off windows either side.
    EXPECT_NE(text.find("| off (the reference, between every two) | 6 | 0.150 (0.150–0.150) | 0.150 (0.150–0.150) | "
                        "0.00 (0.00–0.00) | 3250 (3000–3400) | - | 1083 (1000–1133) | - | - | - |"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("| on (log + /metrics scraped every second + capture) | 3 | 0.150 (0.150–0.150) | "
                        "0.150 (0.150–0.150) | 0.00 (0.00–0.00) | 3300 (3100–3600) | 1.000 (0.944–1.000) | "
                        "1100 (1033–1200) | 1.000 (0.944–1.000) | 1.5 (1.0–2.0) | 0.5 (0.5–0.5) |"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("| off again (the control) | 2 | "), std::string::npos) << text;
    // Unlimited, one pass: received 880 / 910; BPF run time (50 + 54) / 2 / 52.
    EXPECT_NE(text.find("| 1000 (1000–1000) | 1.000 (1.000–1.000) | 0.967 (0.967–0.967) | 52.0 (52.0–52.0) | "
                        "1.000 (1.000–1.000) |"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("| on (log + /metrics scraped every second + capture) | 7200 (6800–7600) | "
                        "0.900 (0.850–0.950) | 8.0 (8.0–8.0) | 20.0 (20.0–20.0) | 0 (0–0) | 2.00 (2.00–2.00) | 40 (30–50) |"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("on probe after connections pass 2: 5 denied datagrams"), std::string::npos) << text;
    EXPECT_NE(text.find("off established fixed reference window 1 pass 1: proof off"), std::string::npos) << text;
    EXPECT_NE(text.find("The quiet gate, each of the 2 times it ran (before every pass), saw the machine 6.5 (3.4–9.6) % busy"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("- off (reference) pass 1 window 7: the fixed rate was not held: 202000 packets/s"),
              std::string::npos)
        << text;
}
