#include "bench/sluice_firewall.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "cluster/xdp_links.h"

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

Counters counter_delta(const Counters& before, const Counters& after) {
    Counters d;
    for (const auto& [k, v] : after) {
        auto it = before.find(k);
        uint64_t b = it == before.end() ? 0 : it->second;
        d[k] = v >= b ? v - b : 0;
    }
    return d;
}

uint64_t sum_prefixed(const Counters& counters, const std::string& prefix) {
    uint64_t sum = 0;
    for (const auto& [k, v] : counters)
        if (k.rfind(prefix, 0) == 0) sum += v;
    return sum;
}

std::string nonzero_summary(const Counters& counters, const std::vector<std::string>& prefixes, size_t max_chars) {
    std::vector<std::pair<std::string, uint64_t>> picked;
    for (const auto& [k, v] : counters) {
        if (!v) continue;
        for (const auto& p : prefixes)
            if (k.rfind(p, 0) == 0) {
                picked.emplace_back(k, v);
                break;
            }
    }
    std::stable_sort(picked.begin(), picked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string out;
    for (const auto& [k, v] : picked) out += (out.empty() ? "" : ",") + k + "=" + std::to_string(v);
    if (out.size() > max_chars) out.resize(max_chars);
    return out;
}

SluiceFirewall::SluiceFirewall(Lab& lab, std::string node, std::vector<std::string> interfaces)
    : lab_(lab), node_(std::move(node)), interfaces_(std::move(interfaces)) {
    log_path_ = lab_.tmp() + "/sluice-" + node_ + ".log";
}

SluiceFirewall::~SluiceFirewall() {
    if (process_) (void)stop();
}

Status SluiceFirewall::check(const std::string& config_path) {
    auto r = lab_.run("", {lab_.sluice_binary(), "check", "-c", config_path});
    if (!r) return r.error();
    if (r->exit_status != 0) return make_error("sluice check refused " + config_path + ":\n" + r->out + r->err);
    return {};
}

Status SluiceFirewall::start(const std::string& config_path, int cpu, const std::vector<std::string>& run_args) {
    if (process_) return make_error("sluice is already running on " + lab_.ns(node_));
    auto t0 = Clock::now();
    // The daemon runs in this machine's namespace and enters the node's
    // itself (--netns), so it sees the host's bpffs.
    std::vector<std::string> argv;
    if (cpu >= 0) argv = {"taskset", "-c", std::to_string(cpu)};
    for (const auto& a : {lab_.sluice_binary(), std::string("--netns"), lab_.ns(node_), std::string("run"),
                          std::string("-c"), config_path})
        argv.push_back(a);
    argv.insert(argv.end(), run_args.begin(), run_args.end());
    auto p = lab_.start("", argv, "sluice-" + node_ + "-" + std::to_string(Clock::now().time_since_epoch().count()));
    if (!p) return p.error();
    process_ = *p;
    log_path_ = p->log_path;
    std::string ready = "running (pid " + std::to_string(p->pid) + ")";
    while (seconds_since(t0) < 60) {
        std::string text = read_text(log_path_);
        if (auto at = text.find(ready); at != std::string::npos) {
            auto eol = text.find('\n', at);
            std::string line = text.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
            auto summary = line.find("attached: ");
            attach_summary_ = summary == std::string::npos ? line : line.substr(summary + 10);
            started_in_ = seconds_since(t0);
            if (auto s = attached(); !s) {
                (void)stop();
                return s;
            }
            return {};
        }
        if (!lab_.running(*p)) {
            process_.reset();
            return make_error("sluice on " + lab_.ns(node_) + " exited before it was running; its log:\n" + text);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    (void)stop();
    return make_error("sluice on " + lab_.ns(node_) + " did not report running within 60 s; its log:\n" +
                      read_text(log_path_));
}

Status SluiceFirewall::kill_hard() {
    if (!process_) return make_error("sluice is not running on " + lab_.ns(node_));
    ::kill(process_->pid, SIGKILL);
    auto s = lab_.stop(*process_, std::chrono::seconds(1));  // reaps it
    process_.reset();
    return s;
}

Result<double> SluiceFirewall::reload() {
    auto t0 = Clock::now();
    auto r = lab_.output("", {lab_.sluice_binary(), "--netns", lab_.ns(node_), "reload"}, std::chrono::seconds(120));
    if (!r) return with_context("sluice reload on " + lab_.ns(node_), r.error());
    return seconds_since(t0);
}

Status SluiceFirewall::stop() {
    Status result;
    if (process_) {
        if (auto s = lab_.stop(*process_); !s) result = s;
        process_.reset();
    }
    auto down = lab_.run("", {lab_.sluice_binary(), "--netns", lab_.ns(node_), "down"}, std::chrono::seconds(60));
    if (!down) return down.error();
    if (auto s = verify_no_pipeline(lab_, node_, interfaces_); !s) return with_context("after sluice down", s.error());
    return result;
}

Result<nlohmann::json> SluiceFirewall::show(const std::string& what) {
    auto out = lab_.output("", {lab_.sluice_binary(), "--netns", lab_.ns(node_), "show", what, "--json"});
    if (!out) return out.error();
    auto doc = nlohmann::json::parse(*out, nullptr, false);
    if (doc.is_discarded()) return make_error("sluice show " + what + " --json printed no JSON: " + *out);
    return doc;
}

Result<Counters> SluiceFirewall::stats() {
    auto doc = show("stats");
    if (!doc) return doc.error();
    auto it = doc->find("counters");
    if (it == doc->end() || !it->is_object()) return make_error("sluice show stats --json has no \"counters\" object");
    Counters c;
    for (const auto& [k, v] : it->items())
        if (v.is_number_unsigned() || v.is_number_integer()) c[k] = v.get<uint64_t>();
    return c;
}

Status SluiceFirewall::attached() {
    auto on = cluster::interfaces_with_sluice(
        [this](const std::vector<std::string>& argv) { return lab_.output(node_, argv); });
    if (!on) return on.error();
    for (const auto& i : interfaces_)
        if (std::find(on->begin(), on->end(), i) == on->end())
            return make_error("sluice's pipeline is not attached to " + i + " in " + lab_.ns(node_) +
                              ": the measurement would not go through sluice");
    return {};
}

std::string SluiceFirewall::log_tail(size_t lines) const {
    std::string text = read_text(log_path_);
    size_t pos = text.size();
    for (size_t n = 0; n <= lines && pos > 0; ++n) {
        auto nl = text.rfind('\n', pos - 1);
        if (nl == std::string::npos) {
            pos = 0;
            break;
        }
        pos = nl;
    }
    return text.substr(pos);
}

Status verify_no_pipeline(Lab& lab, const std::string& node, const std::vector<std::string>& interfaces) {
    auto links = lab.output(node, {"ip", "-j", "link", "show"});
    if (!links) return links.error();
    auto doc = nlohmann::json::parse(*links, nullptr, false);
    if (doc.is_discarded() || !doc.is_array()) return make_error("`ip -j link show` printed no JSON array");
    for (const auto& link : doc) {
        std::string name = link.value("ifname", "");
        if (std::find(interfaces.begin(), interfaces.end(), name) == interfaces.end()) continue;
        if (link.contains("xdp"))
            return make_error("an XDP program is attached to " + name + " in " + lab.ns(node) +
                              ": a measurement without sluice would include it");
        auto filters = lab.output(node, {"tc", "-j", "filter", "show", "dev", name, "ingress"});
        if (!filters) continue;  // no clsact qdisc: nothing at TC ingress
        auto runs = cluster::tc_filter_runs(*filters, cluster::kSluiceTcProgram);
        if (!runs) return runs.error();
        if (*runs)
            return make_error(std::string("sluice's TC pipeline (") + cluster::kSluiceTcProgram + ") is attached to " +
                              name + " in " + lab.ns(node) + ": a measurement without sluice would include it");
    }
    return {};
}

}  // namespace sluice::bench
