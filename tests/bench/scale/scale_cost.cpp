// sluice_scale_cost: the first-packet cost of the XDP pipeline as the policy
// grows, for `sluice bench scale` part (c) (docs/scale.md).
//
//   sluice_scale_cost --config LABEL=FILE [--config LABEL=FILE ...]
//                     [--passes 5] [--calls 2000] [--warmup 100]
//
// Each FILE is a sluice config (userspace/bench/scale_rules.h sluice_policy_config: N
// `deny` policies that match nothing of what is sent here, then a permit of
// LAN -> 198.18.100.0/24). The datapath is loaded once, unpinned, in a
// throwaway namespace (NetnsFixture: lan0/wan0, permanent neighbours, plus a
// route to 198.18.101.0/24 via the WAN host). Pass p applies the configs in
// the order given (odd passes) or reversed (even passes), each the way the
// daemon does (compile for the inactive generation, apply, flip), and right
// after each apply measures, with BPF_PROG_TEST_RUN at repeat 1 on one CPU
// (the thread is pinned: the flow cache is per CPU):
//
//   first_packet  a TCP SYN LAN host -> WAN host :5301, a new source port
//                 on every call (a flow never seen under this config), so
//                 every call classifies and creates a session (both entries
//                 are deleted after the call, outside the measured time);
//                 verdict XDP_REDIRECT, session-created = forward = calls
//   deny_miss     a SYN to 198.18.101.200 :5301 (routed via wan0, outside
//                 the permit), a new source port on every call: the flow
//                 cache misses, the classifier finds no rule, default deny;
//                 XDP_DROP, drop-policy-default = calls, flow-cache-hit = 0
//   deny_hit      one such flow again and again after one warm-up call: the
//                 per-CPU flow cache answers, no classification;
//                 XDP_DROP, flow-cache-hit = drop-policy-default = calls
//   classify      the classification alone: bpf/classify_cost.bpf.c (sharing
//                 the datapath's maps) parses the first_packet SYN, sets the
//                 zone pair trust -> untrust and runs the shipped
//                 classify_policy() 64 times per program run, at repeat
//                 --classify-repeat; ns per classification = run time / 64.
//                 The deciding rule must be the permit (index N for a config
//                 of N deny rules, labelled KIND:N).
//
// deny_miss - deny_hit of the same pass is the classification (classify(),
// the winning rule's lookup) plus one flow-cache update, which does not
// depend on the rule count: the closest figure to "classification only" the
// pipeline offers without instrumenting it.
//
// The measures of one config rotate their order from pass to pass. Output:
// one JSON object per line on stdout:
//   {"type":"apply","pass":1,"label":"src:512","compile_ms":..,"apply_ms":..}
//   {"type":"cost","pass":1,"label":"src:512","measure":"first_packet",
//    "calls":2000,"iqm_ns":..,"mean_ns":..,"median_ns":..}
// The per-call time is the kernel's (BPF_PROG_TEST_RUN's duration); iqm_ns is
// the mean of the middle half of the calls (a call is now and then
// interrupted: tens of µs), mean_ns the plain mean.
//
// Needs root (namespaces, BPF). kernel.bpf_stats_enabled must be 0.
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "classify_cost.skel.h"
#include "compiler/compile.h"
#include "config/load_config.h"
#include "loader/datapath.h"
#include "map_readers.h"
#include "netns_fixture.h"
#include "packet_builder.h"
#include "xdp_runner.h"

extern "C" {
#include "map_names.h"
}

namespace {

using namespace sluice;
using test::Bytes;
using test::Ipv4Addr;
using test::Mac;
using test::NetnsFixture;
using test::PacketBuilder;

constexpr const char* kDenyNet = "198.18.101.0/24";
constexpr const char* kDenyHost = "198.18.101.200";
constexpr uint16_t kServerPort = 5301;

// Thrown, not exit(): the namespace fixture's destructor must run.
struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};
[[noreturn]] void die(const std::string& message) { throw Failure(message); }

struct Options {
    std::vector<std::pair<std::string, std::string>> configs;  // label, file
    int passes = 5;
    int calls = 2000;
    int warmup = 100;
    int classify_repeat = 200;   // program runs per BPF_PROG_TEST_RUN call, classify measure
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string flag = argv[i];
        if (flag == "-h" || flag == "--help") {
            std::cout << "usage: sluice_scale_cost --config LABEL=FILE [...] [--passes N] [--calls N] [--warmup N]\n"
                         "(see the comment at the top of tests/bench/scale/scale_cost.cpp)\n";
            std::exit(0);
        }
        if (i + 1 >= argc) die("missing value after " + flag);
        std::string value = argv[++i];
        try {
            if (flag == "--config") {
                auto eq = value.find('=');
                if (eq == std::string::npos || eq == 0) die("--config takes LABEL=FILE, got " + value);
                o.configs.emplace_back(value.substr(0, eq), value.substr(eq + 1));
            } else if (flag == "--passes") {
                o.passes = std::stoi(value);
            } else if (flag == "--calls") {
                o.calls = std::stoi(value);
            } else if (flag == "--warmup") {
                o.warmup = std::stoi(value);
            } else {
                die("unknown option " + flag);
            }
        } catch (const std::logic_error&) {
            die("bad value for " + flag + ": " + value);
        }
    }
    if (o.configs.empty()) die("no --config given");
    if (o.passes < 1 || o.calls < 4 || o.warmup < 0) die("--passes >= 1, --calls >= 4, --warmup >= 0");
    return o;
}

double interquartile_mean(std::vector<uint32_t> v) {
    std::sort(v.begin(), v.end());
    const size_t lo = v.size() / 4, hi = v.size() - v.size() / 4;
    double sum = 0;
    for (size_t i = lo; i < hi; ++i) sum += v[i];
    return hi > lo ? sum / static_cast<double>(hi - lo) : 0;
}

double median(std::vector<uint32_t> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double mean(const std::vector<uint32_t>& v) {
    double sum = 0;
    for (uint32_t d : v) sum += d;
    return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

class Bench {
public:
    explicit Bench(Options options) : o_(std::move(options)) {}

    void setup() {
        if (auto reason = test::bpf_unavailable_reason()) die(*reason);
        int stats_enabled = 0;
        if (std::ifstream in("/proc/sys/kernel/bpf_stats_enabled"); in >> stats_enabled && stats_enabled != 0)
            die("kernel.bpf_stats_enabled is 1: it adds two clock reads per program run; set it to 0");
        // NetnsFixture::create keeps this thread on one CPU (the flow cache is
        // per CPU and BPF_PROG_TEST_RUN runs on the caller's CPU).
        auto ns = NetnsFixture::create();
        if (!ns) die("namespace: " + ns.error().message);
        ns_ = std::move(ns.value());
        // A destination outside the permit, routed like the WAN host.
        if (Status s = ns_->ip({"route", "add", kDenyNet, "via", NetnsFixture::kWanHost4, "dev", "wan0"}); !s)
            die(s.error().message);
        auto dp = Datapath::open(DatapathOptions{});
        if (!dp) die("Datapath::open: " + dp.error().message);
        dp_ = std::move(dp.value());
        prog_fd_ = dp_->prog_fd(SLUICE_PROG_XDP_MAIN);
        stats_fd_ = dp_->map_fd(SLUICE_MAP_STATS);
        sessions_fd_ = dp_->map_fd(SLUICE_MAP_SESSIONS_V4);
        if (prog_fd_ < 0 || stats_fd_ < 0 || sessions_fd_ < 0) die("the datapath has no xdp_main_prog, stats or sessions_v4");

        // The classification-only program, on the datapath's own maps.
        classify_ = classify_cost::open();
        if (!classify_) die("cannot open classify_cost.bpf.o");
        classify_->rodata->zone_in = 1;   // trust (scale_rules.cpp: zones in this order)
        classify_->rodata->zone_out = 2;  // untrust
        bpf_map* map;
        bpf_object__for_each_map(map, classify_->obj) {
            if (bpf_map__set_pin_path(map, nullptr) != 0) die(std::string("cannot unpin ") + bpf_map__name(map));
            const int fd = dp_->map_fd(bpf_map__name(map));
            if (fd >= 0 && bpf_map__reuse_fd(map, fd) != 0) die(std::string("cannot share map ") + bpf_map__name(map));
        }
        if (classify_cost::load(classify_) != 0) die("cannot load classify_cost.bpf.o");
    }

    ~Bench() {
        if (classify_) classify_cost::destroy(classify_);
        dp_.reset();  // close the BPF fds inside the namespace, then leave it
        ns_.reset();
    }

    void run() {
        // Every config must load before anything is measured.
        for (const auto& [label, file] : o_.configs)
            if (auto loaded = config::load_config(file); !loaded) die(label + ": " + loaded.error().message);
        const size_t n = o_.configs.size();
        for (int pass = 1; pass <= o_.passes; ++pass) {
            for (size_t k = 0; k < n; ++k) {
                const auto& [label, file] = o_.configs[pass % 2 ? k : n - 1 - k];
                apply(pass, label, file);
                static const char* const kMeasures[] = {"first_packet", "deny_miss", "deny_hit", "classify"};
                for (int m = 0; m < 4; ++m) {
                    const char* kind = kMeasures[(m + pass - 1) % 4];
                    if (std::string(kind) == "classify") measure_classify(pass, label);
                    else measure(pass, label, kind);
                }
            }
        }
    }

private:
    void apply(int pass, const std::string& label, const std::string& file) {
        auto loaded = config::load_config(file);
        if (!loaded) die(label + ": " + loaded.error().message);
        auto t0 = std::chrono::steady_clock::now();
        auto compiled = compiler::compile(loaded.value(), dp_->inactive_generation());
        if (!compiled) die(label + ": compile: " + compiled.error().message);
        const double compile_ms = ms_since(t0);
        auto interfaces = Datapath::resolve(compiled.value());
        if (!interfaces) die(label + ": resolve: " + interfaces.error().message);
        t0 = std::chrono::steady_clock::now();
        if (Status s = dp_->apply(compiled.value(), interfaces.value()); !s) die(label + ": apply: " + s.error().message);
        const double apply_ms = ms_since(t0);
        std::printf("{\"type\":\"apply\",\"pass\":%d,\"label\":%s,\"compile_ms\":%.1f,\"apply_ms\":%.1f}\n", pass,
                    json_string(label).c_str(), compile_ms, apply_ms);
        std::fflush(stdout);
    }

    uint16_t next_port() {
        port_ = port_ >= 65000 ? 1024 : port_ + 1;
        return port_;
    }

    Bytes syn(const char* dst, uint16_t sport) const {
        return PacketBuilder()
            .eth(Mac::parse(NetnsFixture::kLanHostMac), ns_->lan().mac)
            .ipv4(NetnsFixture::kLanHost4, dst)
            .ttl(64)
            .tcp(sport, kServerPort)
            .seq(1000)
            .syn()
            .window(64240)
            .build();
    }

    void delete_sessions(uint16_t sport) const {
        const Ipv4Addr lan = Ipv4Addr::parse(NetnsFixture::kLanHost4);
        const Ipv4Addr wan = Ipv4Addr::parse(NetnsFixture::kWanHost4);
        auto fwd = test::session_key(lan, wan, sport, kServerPort, test::proto::kTcp);
        auto rev = test::session_key(wan, lan, kServerPort, sport, test::proto::kTcp);
        bpf_map_delete_elem(sessions_fd_, &fwd);
        bpf_map_delete_elem(sessions_fd_, &rev);
    }

    // One call; the verdict must be `want`.
    uint32_t call(const test::XdpRunner& runner, const Bytes& frame, int want, const std::string& what) {
        auto r = runner.run(frame, ns_->lan().ifindex, 1);
        if (!r) die(what + ": " + r.error().message);
        if (r->retval != want)
            die(what + ": verdict " + test::xdp_verdict_name(r->retval) + ", expected " + test::xdp_verdict_name(want) +
                " (" + test::summarize_frame(frame) + ")");
        return r->duration_ns;
    }

    void measure(int pass, const std::string& label, const std::string& kind) {
        test::XdpRunner runner(prog_fd_);
        const std::string what = label + " " + kind + " pass " + std::to_string(pass);
        const bool permit = kind == "first_packet";
        const int want = permit ? XDP_REDIRECT : XDP_DROP;
        const char* dst = permit ? NetnsFixture::kWanHost4 : kDenyHost;

        // Frames are built before the loop; a fixed one for deny_hit.
        auto frames_for = [&](int count) {
            std::vector<std::pair<uint16_t, Bytes>> frames;
            const uint16_t fixed = kind == "deny_hit" ? next_port() : 0;
            for (int i = 0; i < count; ++i) {
                uint16_t sport = fixed ? fixed : next_port();
                frames.emplace_back(sport, syn(dst, sport));
            }
            return frames;
        };
        auto warm = frames_for(o_.warmup + 1);
        for (const auto& [sport, frame] : warm) {
            call(runner, frame, want, what + " (warm-up)");
            if (permit) delete_sessions(sport);
        }
        // deny_hit: the warm-up left the flow in this CPU's cache; reuse its port.
        std::vector<std::pair<uint16_t, Bytes>> frames;
        if (kind == "deny_hit")
            frames.assign(static_cast<size_t>(o_.calls), warm.back());
        else
            frames = frames_for(o_.calls);

        auto before = test::read_stats(stats_fd_);
        if (!before) die("reading stats: " + before.error().message);
        std::vector<uint32_t> durations;
        durations.reserve(frames.size());
        for (const auto& [sport, frame] : frames) {
            durations.push_back(call(runner, frame, want, what));
            if (permit) delete_sessions(sport);
        }
        auto after = test::read_stats(stats_fd_);
        if (!after) die("reading stats: " + after.error().message);
        check(what, test::stat_delta(before.value(), after.value()), kind);

        std::printf(
            "{\"type\":\"cost\",\"pass\":%d,\"label\":%s,\"measure\":\"%s\",\"calls\":%d,\"iqm_ns\":%.1f,"
            "\"mean_ns\":%.1f,\"median_ns\":%.1f}\n",
            pass, json_string(label).c_str(), kind.c_str(), o_.calls, interquartile_mean(durations), mean(durations),
            median(durations));
        std::fflush(stdout);
    }

    void measure_classify(int pass, const std::string& label) {
        test::XdpRunner runner(bpf_program__fd(classify_->progs.xdp_classify_cost));
        const std::string what = label + " classify pass " + std::to_string(pass);
        const Bytes frame = syn(NetnsFixture::kWanHost4, next_port());
        const int calls = std::max(1, o_.calls / 10);
        std::vector<uint32_t> durations;
        for (int i = 0; i < calls + o_.warmup / 10; ++i) {
            auto r = runner.run(frame, ns_->lan().ifindex, o_.classify_repeat);
            if (!r) die(what + ": " + r.error().message);
            if (r->retval != XDP_PASS) die(what + ": verdict " + test::xdp_verdict_name(r->retval));
            if (i >= o_.warmup / 10) durations.push_back(r->duration_ns);  // per run, i.e. per 64 classifications
        }
        // The permit after N deny rules is rule N.
        const auto colon = label.rfind(':');
        const uint32_t rule = classify_->data->last_rule;
        if (colon != std::string::npos && std::to_string(rule) != label.substr(colon + 1))
            die(what + ": classified as rule " + std::to_string(rule) + ", expected the permit, rule " +
                label.substr(colon + 1));
        std::printf(
            "{\"type\":\"cost\",\"pass\":%d,\"label\":%s,\"measure\":\"classify\",\"calls\":%d,\"repeat\":%d,"
            "\"iqm_ns\":%.2f,\"mean_ns\":%.2f,\"median_ns\":%.2f,\"rule\":%u}\n",
            pass, json_string(label).c_str(), calls, o_.classify_repeat, interquartile_mean(durations) / 64.0,
            mean(durations) / 64.0, median(durations) / 64.0, rule);
        std::fflush(stdout);
    }

    // Every call took the path its measure names, and nothing else happened.
    void check(const std::string& what, const std::map<int, int64_t>& delta, const std::string& kind) const {
        const int64_t calls = o_.calls;
        auto got = [&](int id) {
            auto it = delta.find(id);
            return it == delta.end() ? 0 : it->second;
        };
        std::string problems;
        auto want = [&](int id, int64_t n) {
            if (got(id) != n)
                problems += std::string(" ") + test::stat_table()[static_cast<size_t>(id)].name + " +" +
                            std::to_string(got(id)) + " (expected +" + std::to_string(n) + ")";
        };
        want(STAT_RX, calls);
        if (kind == "first_packet") {
            want(STAT_SESSION_CREATED, calls);
            want(STAT_FORWARD, calls);
            want(STAT_FLOW_CACHE_HIT, 0);
        } else {
            want(STAT_DROP_POLICY_DEFAULT, calls);
            want(STAT_FLOW_CACHE_HIT, kind == "deny_hit" ? calls : 0);
            want(STAT_SESSION_CREATED, 0);
        }
        for (auto [id, n] : delta) {
            if (id >= static_cast<int>(test::stat_table().size()) || id == STAT_DROP_POLICY_DEFAULT) continue;
            const std::string k = test::stat_table()[static_cast<size_t>(id)].kind;
            if (k == "drop" || k == "pass")
                problems += std::string(" ") + test::stat_table()[static_cast<size_t>(id)].name + " +" + std::to_string(n);
        }
        if (!problems.empty()) die(what + ": not the measured path:" + problems);
    }

    Options o_;
    std::unique_ptr<NetnsFixture> ns_;  // first: outlives the BPF objects
    std::unique_ptr<Datapath> dp_;
    int prog_fd_ = -1, stats_fd_ = -1, sessions_fd_ = -1;
    classify_cost* classify_ = nullptr;
    uint16_t port_ = 1024;
};

}  // namespace

int main(int argc, char** argv) {
    try {
        Bench bench(parse(argc, argv));
        bench.setup();
        bench.run();
    } catch (const Failure& e) {
        std::cerr << "sluice_scale_cost: " << e.what() << std::endl;
        return 1;
    }
    return 0;
}
