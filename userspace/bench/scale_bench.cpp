// `sluice bench scale` (docs/scale.md): the nf-hipac tables (bridging
// results on the nf-hipac v0.8 thread, 2003) on the single lab (LAN host ->
// firewall namespace -> WAN host), with N rules that match none of the
// traffic, for three systems side by side:
//   sluice      the XDP datapath (`sluice --netns <fw> run -c FILE`)
//   nft-linear  kernel forwarding, the N rules one per line in a forward chain
//   nft-set     kernel forwarding, the N rules as one set lookup
// and two kinds of rule (scale_rules.h):
//   src         rule i drops source 198.19.x.y/32 (the traffic comes from 198.18.1.x)
//   port        rule i drops destination port 20000+i of the traffic's protocol
//               (the traffic goes to 5201 and 5301-5316)
//
//   (a) throughput through a STATELESS filter: sluice's `filters:` stage on
//       lan0 (N drop rules, then a permit policy); nft with the N rules in a
//       forward chain and `notrack` in a raw prerouting chain (no conntrack
//       at all). iperf3 UDP (`-u -b 0`, fixed datagram size: Gbit/s and Mpps
//       forwarded, counted at the WAN host's interface, and the loss before
//       it) and TCP (`-P 4`, Gbit/s received), IPv4;
//   (b) new connections per second through the STATEFUL policy: sluice with N
//       `deny` policies before the permit; nft with `ct state
//       established,related accept` first, then the N rules, then the accept.
//       tests/sluice_connrate (open, 80 B request, 200 B answer, close);
//   (c) sluice only (nftables has no equivalent): the cost of the first packet
//       of a flow from BPF_PROG_TEST_RUN (tests/sluice_scale_cost) at each
//       rule count and at 8 rules, with the (b) configs; also the
//       classification alone.
// Every pass measures every point (kind x count x system) once. Counts go up
// on odd passes and down on even ones; at each point the systems rotate which
// goes first. Cells are median (min–max) over passes; ratios are per pass, to
// the same system's 0-rule value of the same pass ((c): to the 8-rule value).
//
// Checks that the system measured was in the path: every sluice config
// passes `sluice check`; the first time a rule set is in force, a probe of its
// LAST rule must be dropped and a control must pass (scale_probe.h); every
// sluice run's counters show XDP saw and forwarded the traffic and no deny or
// filter drop hit it, with sluice's XDP program attached (and none left after
// it stops); every nftables run has no XDP program attached, no nftables rule
// is left when sluice runs, and a stateless run created no conntrack entry;
// the iperf3 server saw the LAN host as its client.
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "common/option_checks.h"
#include "bench/benchmark.h"
#include "bench/connrate_run.h"
#include "bench/interrupt.h"
#include "bench/iperf_run.h"
#include "bench/lab.h"
#include "bench/nft_firewall.h"
#include "bench/report.h"
#include "bench/scale_checks.h"
#include "bench/scale_probe.h"
#include "bench/scale_report.h"
#include "bench/scale_rules.h"
#include "bench/schedule.h"
#include "bench/sluice_firewall.h"
#include "cluster/process.h"
#include "cluster/topology.h"

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;

// 0 / "" = not given: the default, or the --quick value.
struct Options {
    std::string counts;                                 // "0 512 1024 2048 3072 10000"; --quick "0 64 512"
    std::string kinds = "src port";
    std::string systems = "sluice nft-linear nft-set";
    int passes = 0;                                     // 3; --quick 1
    int time = 0;                                       // 3; --quick 1
    int streams = 4;
    int udp_len = 1400;
    int udp_streams = 1;
    int port_width = 1;
    double conn_time = 0;                               // 2; --quick 1
    int conn_concurrency = 32;
    int cost_passes = 0;                                // 5; --quick 1
    int cost_calls = 0;                                 // 2000; --quick 300
    bool skip_a = false, skip_b = false, skip_c = false;
    std::string svg;                                    // <build>/scale-bench.svg
};

constexpr int kConnThreads = 2;
constexpr double kConnWarmup = 0.5;
// Ports: iperf3 5201 (UDP and TCP), short connections 5301-5316, probe
// control port 5999; the port rules start at 20000.
constexpr int kIperfPort = 5201;
constexpr const char* kConnPorts = "5301-5316";
constexpr int kProbePort = 5999;
// (b) spreads its client tuples over four source addresses.
const std::vector<std::string> kLanSources{"198.18.1.10", "198.18.1.11", "198.18.1.12", "198.18.1.13"};

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

void pause(double seconds) {
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(seconds * 1000)));
}

std::string pad(const std::string& s, size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

std::string head(std::string text, size_t n) {
    if (text.size() > n) text.resize(n);
    for (auto& c : text)
        if (c == '\n') c = ' ';
    return text;
}

// The source tree of a build tree (CMakeCache.txt), "" if unknown.
std::string source_dir(const std::string& build_dir) {
    std::ifstream in(build_dir + "/CMakeCache.txt");
    std::string line;
    const std::string key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return line.substr(key.size());
    return "";
}

std::string git_revision(const std::string& build_dir) {
    std::string src = source_dir(build_dir);
    if (src.empty()) return "unknown";
    auto rev = cluster::run_local({"git", "-C", src, "rev-parse", "--short", "HEAD"}, std::chrono::seconds(10));
    if (!rev || rev->exit_status != 0) return "unknown";
    std::string text = first_line(rev->out);
    auto diff = cluster::run_local({"git", "-C", src, "diff", "--quiet", "HEAD"}, std::chrono::seconds(30));
    if (!diff || diff->exit_status != 0) text += " (with uncommitted changes)";
    return text;
}

class ScaleRun {
public:
    ScaleRun(BenchRun& run, const Options& o) : run_(run), o_(o) {}

    Status execute();

private:
    // Resolved options.
    std::vector<int> counts_;
    std::vector<std::string> kinds_, systems_;
    int passes_ = 0, time_ = 0, cost_passes_ = 0, cost_calls_ = 0;
    double conn_time_ = 0;
    bool run_a_ = true, run_b_ = true, run_c_ = true;
    std::string svg_;

    BenchRun& run_;
    const Options& o_;
    std::unique_ptr<Lab> lab_;
    std::unique_ptr<SluiceFirewall> fw_;
    std::unique_ptr<NftFirewall> nft_;
    std::string connrate_, scalecost_;
    bool nft_installed_ = false;
    int server_cpu_ = 0;
    std::string current_;                       // what is in force in the firewall: "" | "sluice:FILE" | "nft-…:FILE"
    std::map<std::string, std::string> files_;  // cfg key -> path
    std::map<std::string, std::string> texts_;  // path -> text
    std::map<std::string, bool> sluice_ok_;     // path -> sluice check accepted it
    std::set<std::string> probed_;
    uint64_t conn_offset_ = 0;
    bool conn_server_ = false;

    bool has_system(const std::string& s) const {
        return std::find(systems_.begin(), systems_.end(), s) != systems_.end();
    }
    std::ostream& out() { return run_.out(); }

    Status resolve();
    Status setup_lab();
    Result<std::string> cfg_file(const std::string& part, const std::string& kind, int n, std::string proto);
    Status check_sluice_config(const std::string& part, const std::string& kind, int n, const std::string& proto);
    bool sluice_config_ok(const std::string& part, const std::string& kind, int n, const std::string& proto);
    Status sluice_stop();
    Status nft_clear();
    Status use_system(const std::string& system, const std::string& file, const std::string& what);
    Status system_off();
    Status probe(const std::string& part, const std::string& system, const std::string& kind, int n,
                 const std::string& proto);
    std::string conntrack_entries(uint64_t* count = nullptr);
    Status iperf_point(const std::string& system, const std::string& kind, int n, const std::string& proto, int pass);
    Status conn_point(const std::string& system, const std::string& kind, int n, int pass);
    Status run_point(const std::string& part, const std::string& system, const std::string& kind, int n, int pass);
    Status run_part(const std::string& part);
    Status run_cost();
};

Status ScaleRun::resolve() {
    const bool q = run_.quick;
    auto counts = parse_counts(o_.counts.empty() ? (q ? "0 64 512" : "0 512 1024 2048 3072 10000") : o_.counts);
    if (!counts) return counts.error();
    counts_ = *counts;
    kinds_ = split_words(o_.kinds);
    systems_ = split_words(o_.systems);
    passes_ = o_.passes ? o_.passes : q ? 1 : 3;
    time_ = o_.time ? o_.time : q ? 1 : 3;
    conn_time_ = o_.conn_time > 0 ? o_.conn_time : q ? 1 : 2;
    cost_passes_ = o_.cost_passes ? o_.cost_passes : q ? 1 : 5;
    cost_calls_ = o_.cost_calls ? o_.cost_calls : q ? 300 : 2000;
    run_a_ = !o_.skip_a;
    run_b_ = !o_.skip_b;
    run_c_ = !o_.skip_c;
    svg_ = o_.svg.empty() ? run_.build_dir + "/scale-bench.svg" : o_.svg;
    if (counts_.empty() || kinds_.empty() || systems_.empty())
        return make_error("--counts, --kinds and --systems must not be empty");
    for (const auto& k : kinds_) {
        if (k == "src" || k == "port") continue;
        // mixed: three rule shapes (scale_rules.h), sluice's (c) only.
        if (k == "mixed" && !run_a_ && !run_b_) continue;
        return make_error("--kinds: src or port (or mixed, with --skip-a --skip-b), not " + k);
    }
    for (const auto& s : systems_)
        if (s != "sluice" && s != "nft-linear" && s != "nft-set")
            return make_error("--systems: sluice, nft-linear or nft-set, not " + s);
    for (int n : counts_)
        if (n >= 250 * 256) return make_error("--counts: at most 64000 rules (198.19.0.0/16), not " + std::to_string(n));
    return {};
}

Status ScaleRun::setup_lab() {
    auto lab = Lab::create("single", run_.prefix, out());
    if (!lab) return lab.error();
    lab_ = std::move(*lab);
    fw_ = std::make_unique<SluiceFirewall>(*lab_);
    nft_ = std::make_unique<NftFirewall>(*lab_, kScaleTable);
    for (size_t i = 1; i < kLanSources.size(); ++i)
        if (auto s = lab_->must("lan", {"ip", "addr", "add", kLanSources[i] + "/24", "dev", "eth0"}); !s) return s;
    // The probes send from the source rules' addresses (198.19.0.0/16, added
    // to the LAN host one at a time): a probe that got through must be
    // answered, or it would look blocked.
    if (auto s = lab_->must("fw", {"ip", "route", "add", "198.19.0.0/16", "via", cluster::kLanHost4, "dev", "lan0"}); !s)
        return s;
    if (auto s = lab_->must("wan", {"ip", "route", "add", "198.19.0.0/16", "via", cluster::kFw0Wan4}); !s) return s;
    // Conntrack (used by (b)'s nftables runs only) keeps TIME_WAIT as long as
    // the sluice configs do (tcp-time-wait: 10s), so that neither table fills.
    auto tw = lab_->run("fw", {"sysctl", "-qw", "net.netfilter.nf_conntrack_tcp_timeout_time_wait=10"});
    if (!tw || tw->exit_status != 0)
        out() << "bench scale: note: cannot set nf_conntrack_tcp_timeout_time_wait in " << lab_->ns("fw") << "\n";
    return {};
}

// The file of one point's config, made once.
//   part a: sluice filter config (proto matters for port rules only)
//   part b: sluice policy config (TCP; also (c)'s)
//   nft-a-linear / nft-a-set / nft-b-linear / nft-b-set: nftables scripts
Result<std::string> ScaleRun::cfg_file(const std::string& part, const std::string& kind, int n, std::string proto) {
    if (kind != "port") proto = "any";
    const bool nft = part.rfind("nft-", 0) == 0;
    const std::string key = "cfg-" + part + "-" + kind + "-" + std::to_string(n) + "-" + proto + (nft ? ".nft" : ".yaml");
    if (auto it = files_.find(key); it != files_.end()) return it->second;
    ScaleRules r{.kind = kind, .count = n, .proto = proto == "any" ? "udp" : proto, .port_width = o_.port_width};
    Result<std::string> text = make_error("unknown config part " + part);
    if (part == "a") {
        text = sluice_filter_config(r);
    } else if (part == "b") {
        r.proto = "tcp";
        text = sluice_policy_config(r);
    } else if (nft) {
        const bool stateful = part.rfind("nft-b-", 0) == 0;
        const NftLayout layout = part.ends_with("-set") ? NftLayout::Set : NftLayout::Linear;
        text = nft_scale_ruleset(r, layout, stateful);
    }
    if (!text) return text.error();
    auto path = lab_->write_file(key, *text);
    if (!path) return path.error();
    files_[key] = *path;
    texts_[*path] = *text;
    return *path;
}

// `sluice check --json` on a sluice config, once: validity (a config that
// does not fit is reported, and its points are left out), its wall time, and
// compile_ms / classifier_bytes when this build prints them.
Status ScaleRun::check_sluice_config(const std::string& part, const std::string& kind, int n,
                                     const std::string& proto) {
    auto file = cfg_file(part, kind, n, proto);
    if (!file) return file.error();
    if (sluice_ok_.count(*file)) return {};
    auto t0 = Clock::now();
    auto r = lab_->run("", {lab_->sluice_binary(), "check", "--json", "-c", *file}, std::chrono::seconds(600));
    double wall = seconds_since(t0);
    if (!r) return r.error();
    ScaleConfigCheck c = read_sluice_check(r->out);
    nlohmann::json rec{{"type", "check"}, {"part", part}, {"kind", kind}, {"n", n}, {"proto", proto},
                       {"status", c.ok ? "ok" : "invalid"}, {"wall_s", wall}, {"compile_ms", c.compile_ms},
                       {"classifier_bytes", c.classifier_bytes}};
    sluice_ok_[*file] = c.ok;
    if (!c.ok) {
        rec["detail"] = "sluice check " + part + " " + kind + " n=" + std::to_string(n) + " " + proto + ": " + c.why +
                        " " + head(r->err, 300);
        out() << "bench scale: sluice check rejected the " << part << "/" << kind << "/" << n << "/" << proto
              << " config: " << c.why << "\n";
    }
    run_.results->add(rec);
    return {};
}

bool ScaleRun::sluice_config_ok(const std::string& part, const std::string& kind, int n, const std::string& proto) {
    auto file = cfg_file(part, kind, n, proto);
    if (!file) return false;
    auto it = sluice_ok_.find(*file);
    return it != sluice_ok_.end() && it->second;
}

Status ScaleRun::sluice_stop() {
    if (!fw_->running()) return {};
    return fw_->stop();  // sluice down, and no XDP program left on lan0 / wan0
}

Status ScaleRun::nft_clear() {
    if (nft_->loaded())
        if (auto s = nft_->unload(); !s) return s;
    if (!nft_installed_) return {};
    auto text = lab_->output("fw", {"nft", "-j", "list", "ruleset"});
    if (!text) return text.error();
    auto doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_discarded() || !doc.contains("nftables") || !doc["nftables"].is_array())
        return make_error("`nft -j list ruleset` in " + lab_->ns("fw") + " printed no nftables JSON");
    for (const auto& item : doc["nftables"])
        if (item.contains("table"))
            return make_error("nftables rules left in " + lab_->ns("fw") + ": table " + item["table"].dump());
    return {};
}

// Makes FILE (a sluice config or an nft script) the one thing in force in
// the firewall namespace; records its load time.
Status ScaleRun::use_system(const std::string& system, const std::string& file, const std::string& what) {
    if (current_ == system + ":" + file) return {};
    std::string part = what.substr(0, what.find('/'));
    // what = PART/KIND/n=N/PROTO
    std::vector<std::string> f;
    for (size_t at = 0;;) {
        auto slash = what.find('/', at);
        f.push_back(what.substr(at, slash == std::string::npos ? std::string::npos : slash - at));
        if (slash == std::string::npos) break;
        at = slash + 1;
    }
    nlohmann::json rec{{"type", "load"}, {"system", system}, {"part", f.at(0)}, {"kind", f.at(1)},
                       {"n", std::stoi(f.at(2).substr(2))}, {"proto", f.at(3)}};
    if (auto s = sluice_stop(); !s) return s;
    if (system == "sluice") {
        if (auto s = nft_clear(); !s) return s;
        if (auto s = fw_->start(file); !s) return with_context("sluice start (" + what + ")", s.error());
        rec["seconds"] = fw_->started_in();
        run_.results->add(rec);
        out() << "   sluice started in " << fixed(fw_->started_in(), 2) << "s (" << what << ")\n";
        pause(1);  // let the start's CPU burst pass before the traffic
    } else {
        auto t0 = Clock::now();
        if (auto s = nft_->load(texts_.at(file)); !s) return with_context("nft -f for " + what, s.error());
        rec["seconds"] = seconds_since(t0);
        run_.results->add(rec);
        if (auto s = verify_no_pipeline(*lab_, "fw", {"lan0", "wan0"}); !s) return s;
        pause(0.5);
    }
    current_ = system + ":" + file;
    return {};
}

Status ScaleRun::system_off() {
    if (auto s = sluice_stop(); !s) return s;
    if (auto s = nft_clear(); !s) return s;
    current_.clear();
    return {};
}

// The first time a point's rules are in force, a probe must be dropped by its
// LAST rule (all N rules are loaded and enforced) and a control must pass (the
// probe itself works). For sluice's filter (part a) a probe that passes does
// not stop the run: it is recorded, and the report says the filter stage did
// not enforce the rules. Anything else that fails a probe stops the run.
Status ScaleRun::probe(const std::string& part, const std::string& system, const std::string& kind, int n,
                       const std::string& proto) {
    const std::string key = part + "/" + system + "/" + kind + "/" + std::to_string(n) + "/" + proto;
    if (n <= 0 || probed_.count(key)) return {};
    probed_.insert(key);
    auto last = scale_last_rule({.kind = kind, .count = n, .proto = proto, .port_width = o_.port_width});
    if (!last) return last.error();
    std::string src = cluster::kLanHost4;
    int port = kProbePort;
    if (kind == "src") {
        src = *last;
        if (auto s = lab_->must("lan", {"ip", "addr", "add", src + "/32", "dev", "eth0"}); !s) return s;
    } else {
        port = std::stoi(*last);
    }
    ProbeVerdict v;
    if (proto == "udp") {
        UdpProbe p;
        p.lan_ns = lab_->ns("lan");
        p.wan_ns = lab_->ns("wan");
        p.dest = cluster::kWanHost4;
        p.source = src;
        p.port = port;
        p.control_source = cluster::kLanHost4;
        p.control_port = kProbePort;
        auto counts = run_udp_probe(p);
        if (!counts) return with_context("probe " + key, counts.error());
        v = udp_probe_verdict(*counts, src, port, cluster::kLanHost4, kProbePort);
    } else {
        auto p = run_tcp_probe(lab_->ns("lan"), src, cluster::kWanHost4, port);
        if (!p) return with_context("probe " + key, p.error());
        auto c = run_tcp_probe(lab_->ns("lan"), cluster::kLanHost4, cluster::kWanHost4, kProbePort);
        if (!c) return with_context("probe " + key + " (control)", c.error());
        v = tcp_probe_verdict(*p, *c);
    }
    if (kind == "src")
        if (auto s = lab_->must("lan", {"ip", "addr", "del", src + "/32", "dev", "eth0"}); !s) return s;
    if (!v.error.empty()) return make_error("probe " + key + ": " + v.error);
    run_.results->add({{"type", "probe"}, {"part", part}, {"system", system}, {"kind", kind}, {"n", n},
                       {"proto", proto}, {"verdict", v.verdict}, {"last", *last},
                       {"detail", "probe " + key + ": last rule (" + *last + ") " + v.verdict}});
    switch (probe_consequence(part, system, v.verdict)) {
        case ProbeConsequence::Fine: break;
        case ProbeConsequence::Warn:
            out() << "bench scale: WARNING: sluice let through what the last of its " << n << " filter rules drops ("
                  << kind << ", " << proto
                  << "): this build does not enforce filters; part (a) for sluice measures the permit policy alone\n";
            break;
        case ProbeConsequence::Fatal:
            return make_error("probe " + key + ": what the last rule (" + *last + ") matches got through " + system +
                              ": not all " + std::to_string(n) + " rules are in force");
    }
    return {};
}

std::string ScaleRun::conntrack_entries(uint64_t* count) {
    auto n = nft_->conntrack_count();
    if (!n) return "?";
    if (count) *count = *n;
    return std::to_string(*n);
}

// One iperf3 run of part (a).
Status ScaleRun::iperf_point(const std::string& system, const std::string& kind, int n, const std::string& proto,
                             int pass) {
    const std::string what =
        "iperf3 " + proto + " " + system + " " + kind + " n=" + std::to_string(n) + " pass " + std::to_string(pass);
    const bool sluice = system == "sluice";
    Counters before;
    if (sluice) {
        if (auto s = fw_->attached(); !s) return with_context(what, s.error());
        auto b = fw_->stats();
        if (!b) return b.error();
        before = *b;
    }
    const bool udp = proto == "udp";
    IperfSpec spec;
    spec.target = cluster::kWanHost4;
    spec.bind = cluster::kLanHost4;
    spec.port = kIperfPort;
    spec.seconds = time_;
    spec.streams = udp ? o_.udp_streams : o_.streams;
    // The server on the last CPU, the client on the first: on veth the
    // sender's CPU also does the forwarding (the firewall's work), and a
    // server the scheduler puts on that CPU now and then would make the
    // figures swing by tens of percent from run to run.
    spec.client_cpu = 0;
    spec.server_cpu = server_cpu_;
    // A slow point (10,000 linear rules) must still end.
    spec.connect_timeout_ms = 5000;
    if (udp) {
        spec.udp = true;
        spec.bitrate = "0";
        spec.length = o_.udp_len;
        // What got through the firewall is counted at the WAN host's
        // interface: iperf3's own "received" counts what its server read from
        // the socket, and on this machine the server loses most of a -b 0
        // flood to its socket buffer whatever the firewall does.
        spec.count_rx_device = "eth0";
    }
    auto o = run_iperf(*lab_, spec);
    if (!o) return with_context(what + " failed", o.error());
    if (o->server_saw != cluster::kLanHost4)
        return make_error(what + ": the server saw " + o->server_saw + " as the client, expected " +
                          cluster::kLanHost4);
    nlohmann::json rec{{"type", "a"}, {"system", system}, {"kind", kind}, {"n", n}, {"proto", proto}, {"pass", pass},
                       {"server_saw", o->server_saw}};
    UdpFigures f;
    if (udp) {
        f = udp_figures(o->rx_packets, o->sent_packets, o->sent_seconds, o->client.sender_bps, o->client.receiver_bps,
                        o_.udp_len);
        rec.update({{"gbps", f.gbps}, {"sent_gbps", f.sent_gbps}, {"mpps", f.mpps}, {"loss_pct", f.loss_pct},
                    {"app_gbps", f.app_gbps}, {"rx_packets", o->rx_packets}, {"sent_packets", o->sent_packets}});
    } else {
        rec.update({{"gbps", o->client.receiver_bps / 1e9}, {"sent_gbps", o->client.sender_bps / 1e9}});
    }
    std::string extra;
    if (sluice) {
        if (auto s = fw_->attached(); !s) return with_context(what + ", after the run", s.error());
        auto after = fw_->stats();
        if (!after) return after.error();
        ScaleRunCheck c = check_sluice_run(counter_delta(before, *after));
        if (!c.bad.empty())
            return make_error(what + " did not take the measured path: " + c.summary + "; " + c.bad.front());
        extra = c.summary;
    } else {
        uint64_t entries = 0;
        std::string text = conntrack_entries(&entries);
        // Stateless: the notrack chain was in the path, nothing was tracked.
        if (text != "?" && entries != 0)
            return make_error(what + ": the stateless nftables run left " + text + " conntrack entries in " +
                              lab_->ns("fw") + ": the notrack chain was not in the path");
        extra = "conntrack entries in " + lab_->ns("fw") + " after the run: " + text;
    }
    rec["detail"] = "a " + system + " " + kind + " " + std::to_string(n) + " " + proto + " pass " +
                    std::to_string(pass) + ": " + extra;
    run_.results->add(rec);
    out() << "   pass " << pass << "  " << pad(system, 10) << " " << pad(kind, 4) << " n=" << pad(std::to_string(n), 6)
          << " " << proto << " ";
    if (udp)
        out() << fixed(f.gbps, 4) << " Gbit/s forwarded (" << fixed(f.mpps, 4) << " Mpps; sent "
              << fixed(f.sent_gbps, 4) << ", lost before the WAN host " << fixed(f.loss_pct, 2)
              << "%, iperf3 received " << fixed(f.app_gbps, 4) << ")\n";
    else
        out() << fixed(o->client.receiver_bps / 1e9, 4) << " Gbit/s\n";
    return {};
}

// One short-connection run of part (b).
Status ScaleRun::conn_point(const std::string& system, const std::string& kind, int n, int pass) {
    const std::string what = system + " " + kind + " n=" + std::to_string(n) + " pass " + std::to_string(pass);
    const bool sluice = system == "sluice";
    if (!conn_server_) {
        ConnrateServer srv;
        srv.addresses = {cluster::kWanHost4};
        srv.ports = kConnPorts;
        srv.threads = 2;
        auto p = start_connrate_server(*lab_, connrate_, srv, "connrate-server");
        if (!p) return p.error();
        conn_server_ = true;
    }
    Counters before;
    if (sluice) {
        if (auto s = fw_->attached(); !s) return with_context("short connections " + what, s.error());
        auto b = fw_->stats();
        if (!b) return b.error();
        before = *b;
    }
    ConnrateClient c;
    c.address = cluster::kWanHost4;
    c.ports = kConnPorts;
    c.sources = kLanSources;
    c.duration = conn_time_;
    c.warmup = kConnWarmup;
    c.threads = kConnThreads;
    c.concurrency = o_.conn_concurrency;
    auto o = run_connrate(*lab_, connrate_, c, &conn_offset_);
    if (!o) return with_context("sluice_connrate client failed (" + what + ")", o.error());
    std::string extra;
    if (sluice) {
        pause(0.2);
        auto after = fw_->stats();
        if (!after) return after.error();
        ScaleRunCheck chk = check_sluice_run(counter_delta(before, *after));
        if (!chk.bad.empty())
            return make_error("short connections " + what + " did not take the measured path: " + chk.summary + "; " +
                              chk.bad.front());
        extra = chk.summary;
    } else {
        extra = "conntrack entries in " + lab_->ns("fw") + " after the run: " + conntrack_entries();
    }
    if (o->failures) extra += " ; " + std::to_string(o->failures) + " failed connections: " + head(o->json, 300);
    run_.results->add({{"type", "b"}, {"system", system}, {"kind", kind}, {"n", n}, {"pass", pass},
                       {"rate", o->per_second}, {"completed", o->completed}, {"failed", o->failures},
                       {"p50", o->p50_us}, {"p99", o->p99_us},
                       {"detail", "b " + system + " " + kind + " " + std::to_string(n) + " pass " +
                                      std::to_string(pass) + ": " + extra}});
    out() << "   pass " << pass << "  " << pad(system, 10) << " " << pad(kind, 4) << " n=" << pad(std::to_string(n), 6)
          << " " << fixed(o->per_second, 1) << " conn/s  (p50 " << o->p50_us << " µs, p99 " << o->p99_us << " µs, "
          << o->failures << " failed)\n";
    return {};
}

// One point of part a or b for one system: load its rules, probe, measure.
Status ScaleRun::run_point(const std::string& part, const std::string& system, const std::string& kind, int n,
                           int pass) {
    std::vector<std::string> protos = part == "a" ? scale_protocols(pass) : std::vector<std::string>{"tcp"};
    for (const auto& proto : protos) {
        if (auto s = check_interrupted(); !s) return s;
        Result<std::string> file = make_error("unknown system " + system);
        if (system == "sluice") {
            if (!sluice_config_ok(part, kind, n, proto)) {
                run_.results->add({{"type", "skip"}, {"part", part}, {"system", system}, {"kind", kind}, {"n", n},
                                   {"proto", proto}, {"pass", pass}});
                continue;
            }
            file = cfg_file(part, kind, n, proto);
        } else {
            file = cfg_file("nft-" + part + "-" + (system == "nft-linear" ? "linear" : "set"), kind, n, proto);
        }
        if (!file) return file.error();
        // Source rules have no protocol: one config serves UDP and TCP.
        const std::string what = part + "/" + kind + "/n=" + std::to_string(n) + "/" +
                                 (kind == "src" && part == "a" ? std::string("any") : proto);
        if (auto s = use_system(system, *file, what); !s) return s;
        if (auto s = probe(part, system, kind, n, proto); !s) return s;
        if (auto s = part == "a" ? iperf_point(system, kind, n, proto, pass) : conn_point(system, kind, n, pass); !s)
            return s;
    }
    return {};
}

Status ScaleRun::run_part(const std::string& part) {
    for (int pass = 1; pass <= passes_; ++pass) {
        int j = pass - 1;
        for (const auto& point : scale_points(kinds_, counts_, pass)) {
            for (const auto& system : rotated(systems_, j + 1))
                if (auto s = run_point(part, system, point.kind, point.count, pass); !s) return s;
            ++j;
        }
    }
    return system_off();
}

Status ScaleRun::run_cost() {
    out() << "\n== (c) first-packet cost (BPF_PROG_TEST_RUN, sluice only): " << cost_passes_ << " passes x "
          << cost_calls_ << " calls per measure\n";
    std::vector<std::string> argv{scalecost_};
    std::set<int> counts(counts_.begin(), counts_.end());
    counts.insert(8);
    for (const auto& kind : kinds_)
        for (int n : counts) {
            if (sluice_config_ok("b", kind, n, "tcp")) {
                auto file = cfg_file("b", kind, n, "tcp");
                if (!file) return file.error();
                argv.push_back("--config");
                argv.push_back(kind + ":" + std::to_string(n) + "=" + *file);
            } else {
                run_.results->add({{"type", "skip"}, {"part", "c"}, {"system", "sluice"}, {"kind", kind}, {"n", n},
                                   {"proto", "tcp"}});
            }
        }
    if (argv.size() == 1) return {};
    for (const auto& a : {std::string("--passes"), std::to_string(cost_passes_), std::string("--calls"),
                          std::to_string(cost_calls_)})
        argv.push_back(a);
    auto r = lab_->run("", argv, std::chrono::seconds(4 * 3600));
    if (!r) return r.error();
    if (r->exit_status != 0 || r->timed_out) {
        std::string err = r->err;
        return make_error("sluice_scale_cost failed: " + err.substr(err.size() > 600 ? err.size() - 600 : 0));
    }
    std::istringstream lines(r->out);
    for (std::string line; std::getline(lines, line);) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("type"))
            return make_error("sluice_scale_cost printed a line that is not its JSON: " + head(line, 200));
        j["part"] = "c";
        run_.results->add(j);
        if (j["type"] == "cost")
            out() << "   pass " << j.value("pass", 0) << "  " << pad(j.value("label", ""), 11) << " "
                  << pad(j.value("measure", ""), 13) << " " << fixed(j.value("iqm_ns", 0.0), 1)
                  << " ns (interquartile mean; mean " << fixed(j.value("mean_ns", 0.0), 1) << ")\n";
    }
    return {};
}

Status ScaleRun::execute() {
    if (auto s = resolve(); !s) return s;
    const bool sluice = has_system("sluice");
    const bool nft = has_system("nft-linear") || has_system("nft-set");
    std::vector<std::string> programs;
    if (run_a_) programs.push_back("iperf3");
    if (nft) programs.insert(programs.end(), {"nft", "conntrack"});
    if (auto s = check_machine(programs); !s) return s;
    if (run_b_) {
        auto t = run_.tool("sluice_connrate");
        if (!t) return t.error();
        connrate_ = *t;
    }
    if (run_c_ && sluice) {
        auto t = run_.tool("sluice_scale_cost");
        if (!t) return t.error();
        scalecost_ = *t;
    }
    auto has_nft = cluster::run_local({"sh", "-c", "command -v nft"}, std::chrono::seconds(5));
    nft_installed_ = has_nft && has_nft->exit_status == 0;
    server_cpu_ = std::max(0, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)) - 1);

    const auto t_start = Clock::now();
    std::string nft_version = "nft not installed";
    if (nft_installed_)
        if (auto v = cluster::run_local({"nft", "--version"}, std::chrono::seconds(5)); v && v->exit_status == 0)
            nft_version = first_line(v->out);
    std::string ct_max = first_line(read_text("/proc/sys/net/netfilter/nf_conntrack_max"));
    run_.results->add({{"type", "setup"}, {"date", utc_now()}, {"rev", git_revision(run_.build_dir)},
                       {"machine", machine_line()}, {"load_start", load_average()}, {"nft_version", nft_version},
                       {"ct_max", ct_max.empty() ? "?" : ct_max}, {"counts", counts_}, {"kinds", kinds_},
                       {"systems", systems_}, {"passes", passes_}, {"time", time_}, {"streams", o_.streams},
                       {"udp_len", o_.udp_len}, {"udp_streams", o_.udp_streams}, {"port_width", o_.port_width},
                       {"conn_time", conn_time_}, {"conn_threads", kConnThreads},
                       {"conn_concurrency", o_.conn_concurrency}, {"cost_passes", cost_passes_},
                       {"cost_calls", cost_calls_}, {"quick", run_.quick}, {"svg", svg_}});

    if (auto s = setup_lab(); !s) return s;
    Status result = [&]() -> Status {
        if (sluice) {
            for (const auto& kind : kinds_) {
                for (int n : counts_) {
                    if (auto s = check_interrupted(); !s) return s;
                    if (run_a_) {
                        if (kind == "src") {
                            if (auto s = check_sluice_config("a", "src", n, "any"); !s) return s;
                        } else {
                            if (auto s = check_sluice_config("a", kind, n, "udp"); !s) return s;
                            if (auto s = check_sluice_config("a", kind, n, "tcp"); !s) return s;
                        }
                    }
                    if (run_b_ || run_c_)
                        if (auto s = check_sluice_config("b", kind, n, "tcp"); !s) return s;
                }
                if (run_c_)
                    if (auto s = check_sluice_config("b", kind, 8, "tcp"); !s) return s;
            }
        }
        auto list = [](const auto& v) {
            std::string s;
            for (const auto& x : v) {
                std::ostringstream w;
                w << x;
                s += (s.empty() ? "" : " ") + w.str();
            }
            return s;
        };
        if (run_a_) {
            out() << "== (a) stateless filter: iperf3 UDP (-u -b 0 -l " << o_.udp_len << " -P " << o_.udp_streams
                  << ") and TCP (-P " << o_.streams << "), -t " << time_ << ", IPv4; systems: " << list(systems_)
                  << "; kinds: " << list(kinds_) << "; counts: " << list(counts_) << "; " << passes_ << " passes\n";
            if (auto s = run_part("a"); !s) return s;
        }
        if (run_b_) {
            out() << "\n== (b) stateful policy: new connections per second (sluice_connrate, " << conn_time_
                  << "s per run, " << kConnThreads << " threads x " << o_.conn_concurrency << " in flight); "
                  << passes_ << " passes\n";
            if (auto s = run_part("b"); !s) return s;
        }
        if (run_c_ && sluice)
            if (auto s = run_cost(); !s) return s;
        return {};
    }();
    if (!result) {
        std::string tail = fw_->log_tail();
        if (!tail.empty() && tail.find_first_not_of("\n ") != std::string::npos)
            out() << "--- sluice daemon log (last 30 lines) ---\n" << tail << "\n";
        return result;
    }
    run_.results->add({{"type", "end"}, {"load_end", load_average()},
                       {"elapsed_s", static_cast<int>(seconds_since(t_start))}});
    std::string chart = scale_report_svg(run_.results->records());
    if (!chart.empty()) {
        if (auto s = write_report(svg_, chart); !s) return s;
        out() << "bench scale: chart written to " << svg_ << "\n";
    }
    return {};
}

}  // namespace

Benchmark scale_benchmark() {
    auto o = std::make_shared<Options>();
    Benchmark b;
    b.name = "scale";
    b.summary = "policy at scale: N rules that match nothing, sluice vs nftables linear and sets";
    b.doc = "docs/scale.md";
    b.add_options = [o](CLI::App& app) {
        app.add_option("--counts", o->counts,
                       "rule counts, e.g. \"0 512 1024 2048 3072 10000\" (the default; --quick \"0 64 512\"); (c) "
                       "adds 8, its yardstick");
        app.add_option("--kinds", o->kinds,
                       "src and/or port; mixed (three rule shapes) with --skip-a --skip-b")
            ->capture_default_str();
        app.add_option("--systems", o->systems, "any of sluice nft-linear nft-set")->capture_default_str();
        app.add_option("--passes", o->passes, "passes of (a) and (b) (default 3, --quick 1)")
            ->check(positive_number());
        app.add_option("--time", o->time, "iperf3 -t (default 3, --quick 1)")->check(positive_number());
        app.add_option("--streams", o->streams, "iperf3 TCP -P")->capture_default_str()->check(positive_number());
        app.add_option("--udp-len", o->udp_len, "iperf3 UDP -l, the datagram payload (1428-byte IP packets)")
            ->capture_default_str()
            ->check(CLI::Range(16, 65000));
        app.add_option("--udp-streams", o->udp_streams, "iperf3 UDP -P")
            ->capture_default_str()
            ->check(positive_number());
        app.add_option("--port-width", o->port_width,
                       "ports per port rule (>1 makes ranges, and the nft set gets `flags interval`)")
            ->capture_default_str()
            ->check(positive_number());
        app.add_option("--conn-time", o->conn_time,
                       "seconds counted per short-connection run, after 0.5 s of warm-up (default 2, --quick 1)")
            ->check(positive_number());
        app.add_option("--conn-concurrency", o->conn_concurrency, "connections in flight per client thread (2 threads)")
            ->capture_default_str()
            ->check(positive_number());
        app.add_option("--cost-passes", o->cost_passes, "passes of (c) (default 5, --quick 1)")
            ->check(positive_number());
        app.add_option("--cost-calls", o->cost_calls,
                       "BPF_PROG_TEST_RUN calls per measure and pass in (c) (default 2000, --quick 300)")
            ->check(positive_number());
        app.add_flag("--skip-a", o->skip_a, "leave out (a), throughput through the stateless filter");
        app.add_flag("--skip-b", o->skip_b, "leave out (b), new connections per second");
        app.add_flag("--skip-c", o->skip_c, "leave out (c), the first-packet cost");
        app.add_option("--svg", o->svg,
                       "the chart (default: <build>/scale-bench.svg; docs/scale-bench.svg to record a run in the docs)");
    };
    b.run = [o](BenchRun& run) -> Status {
        ScaleRun r(run, *o);
        return r.execute();
    };
    b.report = scale_report_markdown;
    return b;
}

}  // namespace sluice::bench
