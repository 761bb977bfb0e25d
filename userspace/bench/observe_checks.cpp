#include "bench/observe_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "bench/name_list.h"
#include "bench/report.h"

namespace sluice::bench {

const std::vector<std::string>& observe_configs() {
    static const std::vector<std::string> configs{"off", "log", "on"};
    return configs;
}

std::string observe_config_label(const std::string& config) {
    static const std::map<std::string, std::string> labels{
        {"off", "off (no log, no metrics, no capture)"},
        {"log", "log (open + close + deny logged to a file)"},
        {"on", "on (log + /metrics scraped every second + capture)"}};
    auto it = labels.find(config);
    return it == labels.end() ? config : it->second;
}

Result<std::vector<std::string>> parse_observe_configs(const std::string& text) {
    auto configs = parse_name_list(text, observe_configs(), "configuration");
    if (!configs) return configs;
    if (std::find(configs->begin(), configs->end(), "off") == configs->end())
        return make_error("the configurations must include off: every ratio is against it");
    if (configs->size() < 2) return make_error("off alone measures nothing against it: add log and/or on");
    return configs;
}

bool observe_logs(const std::string& config) {
    return config == "log" || config == "on";
}

bool observe_scrapes_and_captures(const std::string& config) {
    return config == "on";
}

std::string observe_sluice_config(const std::string& config, const ObserveSluiceSpec& spec) {
    const bool logs = observe_logs(config), metrics = observe_scrapes_and_captures(config);
    const std::string mode = ", xdp-mode: " + spec.xdp_mode;
    const std::string log = logs ? ",\n      log: { open: true, close: true, deny: true }" : "";
    std::string text = "interfaces:\n  lan0: { zone: trust" + mode + " }\n  wan0: { zone: untrust" + mode + " }\n";
    text += std::string("zones:\n  trust: {") + (metrics ? " host-inbound: [metrics] " : "") + "}\n  untrust: {}\n";
    text += "address-book:\n  lan-net: [198.18.1.0/24, \"2001:2:0:1::/64\"]\n";
    text += "applications:\n  discard: { protocol: udp, destination-port: " + std::to_string(spec.udp_port) +
            " }\n  conn: { protocol: tcp, destination-port: " + spec.tcp_ports + " }\n";
    text += "policies:\n";
    text += "  - { name: lan-udp, from: trust, to: untrust, source: [lan-net], application: [discard], action: permit" +
            log + " }\n";
    text += "  - { name: lan-tcp, from: trust, to: untrust, source: [lan-net], application: [conn], action: permit" +
            log + " }\n";
    text += "default-action: deny\n";
    // The same in every configuration: a connection's session is removed
    // (and, with close logging, logged) a second after it closed.
    text += "timeouts: { tcp-time-wait: 1s, tcp-closing: 1s }\n";
    if (logs) {
        text += "default-log: { deny: true }\n";
        // No rate limit: the benchmark counts a line for every event. No
        // rotation within a run: the file is counted whole.
        text += "flow-log:\n  output: file\n  path: " + spec.flow_log_path +
                "\n  max-size: 4GiB\n  keep: 5\n  rate-limit: 0\n";
    }
    if (metrics) text += "metrics:\n  listen: " + spec.metrics_listen + "\n";
    return text;
}

FlowLogCounts count_flow_log(std::istream& in) {
    FlowLogCounts c;
    std::string line;
    while (std::getline(in, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        ++c.lines;
        if (line.find("\"event\":\"open\"") != std::string::npos)
            ++c.open;
        else if (line.find("\"event\":\"close\"") != std::string::npos)
            ++c.close;
        else if (line.find("\"event\":\"deny\"") != std::string::npos)
            ++c.deny;
        else
            ++c.other;
    }
    return c;
}

FlowLogCounts count_flow_log_files(const std::string& path) {
    FlowLogCounts total;
    for (int i = 0; i <= 1000; ++i) {
        const std::string p = i == 0 ? path : path + "." + std::to_string(i);
        std::ifstream in(p);
        if (!in) {
            if (i == 0) continue;  // the file itself may be missing while a rotated one is there
            break;
        }
        FlowLogCounts c = count_flow_log(in);
        total.lines += c.lines;
        total.open += c.open;
        total.close += c.close;
        total.deny += c.deny;
        total.other += c.other;
    }
    return total;
}

FlowLogCounts operator-(const FlowLogCounts& after, const FlowLogCounts& before) {
    auto d = [](uint64_t a, uint64_t b) { return a >= b ? a - b : 0; };
    return {d(after.lines, before.lines), d(after.open, before.open), d(after.close, before.close),
            d(after.deny, before.deny), d(after.other, before.other)};
}

ScrapeLog parse_scrape_log(const std::string& text) {
    ScrapeLog s;
    size_t start = 0;
    while (start < text.size()) {
        const size_t nl = text.find('\n', start);
        if (nl == std::string::npos) break;  // a line still being written
        const std::string line = text.substr(start, nl - start);
        start = nl + 1;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        std::istringstream words(line);
        std::string code;
        uint64_t bytes = 0;
        words >> code >> bytes;
        if (code == "200" && bytes > 0) {
            ++s.ok;
        } else {
            ++s.failed;
            if (s.first_failure.empty()) s.first_failure = line;
        }
    }
    return s;
}

ScrapeLog scrapes_between(const ScrapeLog& before, const ScrapeLog& after) {
    ScrapeLog d;
    d.ok = after.ok >= before.ok ? after.ok - before.ok : 0;
    d.failed = after.failed >= before.failed ? after.failed - before.failed : 0;
    if (d.failed) d.first_failure = after.first_failure;
    return d;
}

Result<CaptureCfg> parse_capture_cfg(const std::string& bpftool_json) {
    auto doc = nlohmann::json::parse(bpftool_json, nullptr, false);
    if (doc.is_discarded() || !doc.is_array() || doc.empty() || !doc[0].is_object())
        return make_error("bpftool map dump of capture_cfg printed no entry: " + bpftool_json.substr(0, 200));
    const auto& entry = doc[0];
    const nlohmann::json* value = nullptr;
    if (entry.contains("formatted") && entry["formatted"].is_object() && entry["formatted"].contains("value"))
        value = &entry["formatted"]["value"];
    else if (entry.contains("value") && entry["value"].is_object())
        value = &entry["value"];
    if (!value || !value->contains("enabled") || !(*value)["enabled"].is_number())
        return make_error("capture_cfg has no readable \"enabled\" field (bpftool without BTF?): " +
                          bpftool_json.substr(0, 200));
    CaptureCfg c;
    c.enabled = (*value)["enabled"].get<uint64_t>() != 0;
    if (value->contains("owner_pid") && (*value)["owner_pid"].is_number())
        c.owner_pid = (*value)["owner_pid"].get<uint32_t>();
    return c;
}

Result<uint64_t> parse_capture_summary(const std::string& text) {
    static const std::regex summary(R"(captured ([0-9]+) packets? to )");
    std::smatch m;
    if (!std::regex_search(text, m, summary))
        return make_error("the capture printed no summary (\"captured N packets to ...\"): " +
                          text.substr(text.size() > 300 ? text.size() - 300 : 0));
    return std::stoull(m[1].str());
}

Result<double> metric_sum(const nlohmann::json& show_metrics, const std::string& name,
                          const std::map<std::string, std::string>& labels) {
    if (!show_metrics.is_array()) return make_error("`sluice show metrics --json` printed no list of families");
    for (const auto& family : show_metrics) {
        if (!family.is_object() || family.value("name", "") != name) continue;
        double sum = 0;
        for (const auto& sample : family.value("samples", nlohmann::json::array())) {
            const auto& have = sample.contains("labels") ? sample["labels"] : nlohmann::json::object();
            bool all = true;
            for (const auto& [k, v] : labels)
                if (!have.is_object() || have.value(k, std::string("\x01")) != v) {
                    all = false;
                    break;
                }
            if (all && sample.contains("value") && sample["value"].is_number()) sum += sample["value"].get<double>();
        }
        return sum;
    }
    return make_error("`sluice show metrics` has no family " + name);
}

Status check_rate_held(double offered_pps, uint64_t target, double tolerance) {
    if (target == 0) return {};
    const double off = offered_pps / static_cast<double>(target) - 1;
    if (off > tolerance || off < -tolerance) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%.0f packets/s offered instead of %llu (%+.1f %%)", offered_pps,
                      static_cast<unsigned long long>(target), 100 * off);
        return make_error(std::string("the fixed rate was not held: ") + buf);
    }
    return {};
}

Result<ProgRunStats> parse_prog_run_stats(const std::string& text) {
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_array() && doc.size() == 1) doc = doc[0];
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("id"))
        return make_error("bpftool prog show printed no program: " + text.substr(0, 200));
    ProgRunStats s;
    // Without statistics enabled bpftool leaves both fields out.
    if (!doc.contains("run_cnt") || !doc["run_cnt"].is_number())
        return make_error("program " + doc["id"].dump() + " has no run_cnt: BPF statistics are not enabled");
    s.run_cnt = doc["run_cnt"].get<uint64_t>();
    s.run_time_ns = doc.value("run_time_ns", uint64_t{0});
    return s;
}

Result<double> parse_process_cpu_seconds(const std::string& stat, long user_hz) {
    // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses,
    // so the fields are counted from the last ')'; utime and stime are
    // fields 14 and 15, the 12th and 13th after it.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos || user_hz <= 0) return make_error("not a /proc/PID/stat line: " + stat.substr(0, 100));
    std::istringstream fields(stat.substr(close + 1));
    std::vector<std::string> f;
    for (std::string w; f.size() < 13 && fields >> w;) f.push_back(w);
    if (f.size() < 13) return make_error("a /proc/PID/stat line without utime and stime: " + stat.substr(0, 100));
    try {
        return static_cast<double>(std::stoull(f[11]) + std::stoull(f[12])) / static_cast<double>(user_hz);
    } catch (...) {
        return make_error("utime/stime are not numbers in " + stat.substr(0, 100));
    }
}

namespace {

std::string n(uint64_t v) {
    return std::to_string(v);
}

// on's observers in the path over a window of `seconds`: every scrape
// answered 200 (at least one per two seconds), the capture process alive
// with capture_cfg enabled and owned by it.
Result<std::string> scrapes_and_capture_in_path(const std::string& what, double seconds, const ScrapeLog& scrapes,
                                                bool capture_running, int capture_pid,
                                                const std::optional<CaptureCfg>& cfg) {
    const uint64_t need = std::max<uint64_t>(1, static_cast<uint64_t>(std::floor(seconds / 2)));
    if (scrapes.failed)
        return make_error(what + ": " + n(scrapes.failed) + " scrape(s) of /metrics failed during the window (" +
                          scrapes.first_failure + ")");
    if (scrapes.ok < need)
        return make_error(what + ": " + n(scrapes.ok) + " scrape(s) of /metrics answered 200 during the " +
                          fixed(seconds, 1) + " s window, " + n(need) + " at least expected");
    if (!capture_running) return make_error(what + ": the capture process is not running");
    if (!cfg) return make_error(what + ": capture_cfg was not read");
    if (!cfg->enabled) return make_error(what + ": the capture runs but capture_cfg is not enabled");
    if (capture_pid > 0 && cfg->owner_pid != static_cast<uint32_t>(capture_pid))
        return make_error(what + ": capture_cfg is owned by pid " + n(cfg->owner_pid) +
                          ", not by the capture this benchmark started (pid " + std::to_string(capture_pid) + ")");
    return n(scrapes.ok) + " scrapes HTTP 200, capture pid " + std::to_string(capture_pid) +
           " running with capture_cfg enabled";
}

// The end of a proof for a configuration that logs: off's capture and
// scraper absent (capture_cfg not enabled), or on's in the path. Evidence:
// ObserverEvidence or WindowEvidence (config, seconds, scrapes, capture_*).
template <typename Evidence>
Result<std::string> with_observers(const std::string& what, const Evidence& e, const std::string& summary) {
    if (!observe_scrapes_and_captures(e.config)) {
        if (e.capture_cfg && e.capture_cfg->enabled)
            return make_error(what + ": capture_cfg is enabled, but no capture runs in this configuration");
        return summary + ", capture off";
    }
    auto observers = scrapes_and_capture_in_path(what, e.seconds, e.scrapes, e.capture_running, e.capture_pid,
                                                 e.capture_cfg);
    if (!observers) return observers.error();
    return summary + ", " + *observers;
}

}  // namespace

Result<std::string> check_observers(const ObserverEvidence& e) {
    const std::string what = "configuration " + e.config;
    const bool capture_on = e.capture_cfg && e.capture_cfg->enabled;
    if (!observe_logs(e.config)) {
        if (e.flow_log_event != 0 || e.log.lines != 0)
            return make_error(what + " logs nothing, yet flow-log-event moved by " + n(e.flow_log_event) + " and " +
                              n(e.log.lines) + " flow-log lines were written: another config is in the path");
        if (capture_on) return make_error(what + ": capture_cfg is enabled, but no capture runs in this configuration");
        return std::string("flow-log-event +0, no flow-log line, capture off");
    }
    if (e.sessions_created == 0)
        return make_error(what + ": no session was created while the log counted: nothing to log");
    if (e.log.open < e.sessions_created)
        return make_error(what + ": " + n(e.log.open) + " open lines for " + n(e.sessions_created) +
                          " sessions created: opens were not logged");
    if (e.flow_log_event < e.sessions_created)
        return make_error(what + ": flow-log-event moved by " + n(e.flow_log_event) + " for " + n(e.sessions_created) +
                          " sessions created: the datapath did not log every open");
    if (e.flow_log_event > e.log.lines)
        return make_error(what + ": the datapath handed over " + n(e.flow_log_event) + " events but only " +
                          n(e.log.lines) + " lines were written");
    if (e.flow_log_dropped != 0)
        return make_error(what + ": " + n(e.flow_log_dropped) +
                          " flow events were dropped (rate limit, ring full, write error): not every event was "
                          "logged");
    if (e.expect_closes && static_cast<double>(e.log.close) < 0.99 * static_cast<double>(e.log.open))
        return make_error(what + ": " + n(e.log.close) + " close lines for " + n(e.log.open) +
                          " opens: the closes were not logged");
    std::string summary = "flow log " + n(e.log.open) + " open / " + n(e.log.close) + " close / " + n(e.log.deny) +
                          " deny lines for " + n(e.sessions_created) + " sessions (flow-log-event +" +
                          n(e.flow_log_event) + ", 0 dropped)";
    return with_observers(what, e, summary);
}

Result<std::string> check_probe(const ProbeEvidence& e) {
    const std::string what = "the denied probe of configuration " + e.config;
    if (e.sent == 0) return make_error(what + ": nothing was sent");
    if (e.dropped_default < e.sent)
        return make_error(what + ": drop-policy-default moved by " + n(e.dropped_default) + " for " + n(e.sent) +
                          " datagrams sent: they did not reach the default action");
    std::string summary = n(e.sent) + " denied datagrams: drop-policy-default +" + n(e.dropped_default);
    if (!observe_logs(e.config)) {
        if (e.deny_lines || e.flow_log_event)
            return make_error(what + ": " + n(e.deny_lines) + " deny lines, flow-log-event +" + n(e.flow_log_event) +
                              " in a configuration that logs nothing");
        return summary + ", no deny line, flow-log-event +0";
    }
    if (e.deny_lines < e.sent)
        return make_error(what + ": " + n(e.deny_lines) + " deny lines for " + n(e.sent) + " denied datagrams");
    summary += ", " + n(e.deny_lines) + " deny lines";
    if (!observe_scrapes_and_captures(e.config)) return summary;
    if (!e.captured) return make_error(what + ": the capture's summary was not read");
    if (*e.captured < e.sent)
        return make_error(what + ": the capture wrote " + n(*e.captured) + " packets for " + n(e.sent) +
                          " denied datagrams");
    return summary + ", captured " + n(*e.captured);
}

Result<std::string> check_window(const WindowEvidence& e) {
    const std::string what = "the window of configuration " + e.config;
    const ProbeEvidence& p = e.probe;
    if (p.sent == 0) return make_error(what + ": no probe was sent for it");
    if (p.dropped_default < p.sent)
        return make_error(what + ": drop-policy-default moved by " + n(p.dropped_default) + " for the " + n(p.sent) +
                          " denied datagram(s) sent for it: they did not reach the default action");
    const bool capture_on = e.capture_cfg && e.capture_cfg->enabled;
    std::string summary = n(p.sent) + " denied datagram(s) before it: drop-policy-default +" + n(p.dropped_default);
    if (!observe_logs(e.config)) {
        if (p.deny_lines || p.flow_log_event)
            return make_error(what + ": " + n(p.deny_lines) + " deny line(s), flow-log-event +" +
                              n(p.flow_log_event) + " in a configuration that logs nothing: another config is in force");
        if (capture_on) return make_error(what + ": capture_cfg is enabled, but no capture runs in this configuration");
        return summary + ", no deny line, capture off";
    }
    if (p.deny_lines < p.sent)
        return make_error(what + ": " + n(p.deny_lines) + " deny line(s) for " + n(p.sent) +
                          " denied datagram(s): the flow log is not in force");
    if (e.flow_log_dropped)
        return make_error(what + ": " + n(e.flow_log_dropped) + " flow events were dropped (rate limit, ring full)");
    summary += ", " + n(p.deny_lines) + " deny line(s)";
    return with_observers(what, e, summary);
}

Status check_capture_stint(uint64_t captured, uint64_t probes) {
    if (captured < probes)
        return make_error("the capture wrote " + n(captured) + " packet(s) for the " + n(probes) +
                          " denied datagram(s) sent while it ran: it did not see every drop");
    return {};
}

}  // namespace sluice::bench
