#include "bench_env.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "baseline_redirect.skel.h"
#include "checksum_verify.h"
#include "compiler/compile.h"
#include "config/load_config.h"
#include "loader/datapath.h"
#include "loader/map_io.h"
#include "loader/nat_ifaddrs.h"
#include "map_readers.h"
#include "observe/capture_events_reader.h"
#include "xdp_runner.h"

extern "C" {
#include "map_names.h"
#include "observe.h"
}

namespace sluice::bench {

using test::Ipv4Addr;
using test::Ipv6Addr;
using test::Mac;
using test::NetnsFixture;
using test::PacketBuilder;

namespace {

// `policy_log` goes at the end of the policy's mapping; `observe_sections`
// after the rest.
std::string bench_config_text(const std::string& policy_log, const std::string& observe_sections) {
    return R"yaml(
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }

zones:
  trust: {}
  untrust: {}

address-book:
  lan-net: [198.18.1.0/24, "2001:2:0:1::/64"]
  nat-peer: [198.18.100.201/32, "2001:2:0:100::201/128"]

applications:
  http: { protocol: tcp, destination-port: 80 }

policies:
  - name: lan-web
    from: trust
    to: untrust
    source: [lan-net]
    application: [http]
    action: permit
)yaml" + policy_log +
           R"yaml(
default-action: deny

# Only flows to the NAT peer are translated: the two established flows of a
# family differ by the source NAT alone.
nat:
  source:
    - { name: to-nat-peer, from: trust, to: untrust, source: [lan-net], destination: [nat-peer],
        translate: interface }
)yaml" + observe_sections;
}

}  // namespace

std::string bench_config_yaml(bool observed) {
    if (!observed) return bench_config_text("", "");
    // Every event logged, none rate-limited: the most the datapath does for
    // a flow log. The output is never opened (no daemon here).
    return bench_config_text("    log: { open: true, close: true, deny: true }\n",
                             "default-log: { deny: true }\n"
                             "flow-log: { output: stdout, rate-limit: 0 }\n");
}

const char* family_name(Family f) { return f == Family::v4 ? "v4" : "v6"; }

std::string bpf_stats_problem() {
    std::ifstream in("/proc/sys/kernel/bpf_stats_enabled");
    int value = 0;
    if (in >> value && value != 0)
        return "kernel.bpf_stats_enabled is 1: it adds two clock reads per program run and roughly "
               "halves the packet rate; set it to 0 for this benchmark";
    return {};
}

namespace {

struct BaselineDeleter {
    void operator()(baseline_redirect* skel) const { baseline_redirect::destroy(skel); }
};

constexpr uint16_t kEstablishedPort = 40000;
constexpr uint16_t kFirstPacketPort = 40001;
constexpr uint16_t kNatPort = 40002;

const Mac kLanHostMac = Mac::parse(NetnsFixture::kLanHostMac);
const Mac kWanHostMac = Mac::parse(NetnsFixture::kWanHostMac);
const Ipv4Addr kLanHost4 = Ipv4Addr::parse(NetnsFixture::kLanHost4);
const Ipv4Addr kWanHost4 = Ipv4Addr::parse(NetnsFixture::kWanHost4);
const Ipv6Addr kLanHost6 = Ipv6Addr::parse(NetnsFixture::kLanHost6);
const Ipv6Addr kWanHost6 = Ipv6Addr::parse(NetnsFixture::kWanHost6);
const Mac kNatPeerMacAddr = Mac::parse(kNatPeerMac);
const Ipv4Addr kNatPeerAddr4 = Ipv4Addr::parse(kNatPeer4);
const Ipv6Addr kNatPeerAddr6 = Ipv6Addr::parse(kNatPeer6);
const Ipv4Addr kFwWan4 = Ipv4Addr::parse(NetnsFixture::kWanAddr4);
const Ipv6Addr kFwWan6 = Ipv6Addr::parse(NetnsFixture::kWanAddr6);

using Addr16 = std::array<uint8_t, 16>;

Addr16 addr16(const Ipv4Addr& a) {
    Addr16 out{};
    std::copy(a.bytes.begin(), a.bytes.end(), out.begin());
    return out;
}
Addr16 addr16(const Ipv6Addr& a) {
    return a.bytes;
}
Ipv4Addr v4_of(const Addr16& a) {
    Ipv4Addr out;
    std::copy_n(a.begin(), 4, out.bytes.begin());
    return out;
}
Ipv6Addr v6_of(const Addr16& a) {
    Ipv6Addr out;
    out.bytes = a;
    return out;
}
std::string addr_text(Family f, const Addr16& a) {
    return f == Family::v4 ? v4_of(a).str() : v6_of(a).str();
}

// fn(map name, forward key, reply key) for the flow's two session entries: the
// initiator's (original tuple) and the reply's (the reverse of the tuple the
// server sees, which differs from the original one by the translation).
template <class Fn>
auto with_session_keys(Family f, const FlowFrames& flow, Fn fn) {
    if (f == Family::v4) {
        const Ipv4Addr server = v4_of(flow.server);
        return fn(SLUICE_MAP_SESSIONS_V4, test::session_key(kLanHost4, server, flow.client_port, 80, test::proto::kTcp),
                  test::session_key(server, v4_of(flow.seen_addr), 80, flow.seen_port, test::proto::kTcp));
    }
    const Ipv6Addr server = v6_of(flow.server);
    return fn(SLUICE_MAP_SESSIONS_V6, test::session_key(kLanHost6, server, flow.client_port, 80, test::proto::kTcp),
              test::session_key(server, v6_of(flow.seen_addr), 80, flow.seen_port, test::proto::kTcp));
}

}  // namespace

struct RingBufferDeleter {
    void operator()(ring_buffer* rb) const { ring_buffer__free(rb); }
};

struct BenchEnv::Impl {
    std::unique_ptr<Datapath> datapath;
    std::unique_ptr<baseline_redirect, BaselineDeleter> baseline;
    // Observability's readers (create(true)).
    std::unique_ptr<ring_buffer, RingBufferDeleter> flow_events;
    std::unique_ptr<observe::CaptureEventsReader> captures;  // what `sluice capture` reads it with
    FlowEventCounts drained;         // filled by on_flow_event during a drain
    CaptureCounts captured;          // filled by the capture reader during a drain

    static int on_flow_event(void* self, void* data, size_t size) {
        auto& counts = static_cast<Impl*>(self)->drained;
        if (size < sizeof(flow_event)) {
            ++counts.other;
            return 0;
        }
        switch (static_cast<const flow_event*>(data)->type) {
            case FLOW_EVENT_OPEN: ++counts.open; break;
            case FLOW_EVENT_CLOSE: ++counts.close; break;
            case FLOW_EVENT_DENY: ++counts.deny; break;
            default: ++counts.other; break;
        }
        return 0;
    }
};

Result<std::unique_ptr<BenchEnv>> BenchEnv::create(bool observability) {
    if (auto reason = test::bpf_unavailable_reason()) return make_error(*reason);
    if (auto problem = bpf_stats_problem(); !problem.empty()) return make_error(problem);
    std::unique_ptr<BenchEnv> env(new BenchEnv());
    if (Status s = env->setup(observability); !s) return s.error();
    return env;
}

BenchEnv::~BenchEnv() {
    impl_.reset();  // close the BPF fds inside the namespace, then leave it
    ns_.reset();
}

Status BenchEnv::setup(bool observability) {
    auto ns = NetnsFixture::create();
    if (!ns) return make_error("namespace: " + ns.error().message);
    ns_ = std::move(ns.value());
    impl_ = std::make_unique<Impl>();
    if (Status s = add_nat_peer(); !s) return s;
    if (Status s = load_datapath(observability); !s) return s;
    if (Status s = write_nat_ifaddrs(); !s) return s;
    if (observability)
        if (Status s = open_observability_readers(); !s) return s;
    if (Status s = load_baseline(); !s) return s;

    // Frames from the LAN host to a WAN-side host. TCP payload sizes make the
    // IP packet kDataIpPacketSize bytes (20 + 20 + 1460, 40 + 20 + 1440).
    const Mac fw_lan = ns_->lan().mac;
    auto make_flow = [&](Family f, bool to_nat_peer, uint16_t port) {
        FlowFrames flow;
        flow.client_port = port;
        flow.nat = to_nat_peer;
        flow.seen_port = port;
        auto lan_to_server = [&] {
            PacketBuilder b;
            b.eth(kLanHostMac, fw_lan);
            if (f == Family::v4)
                b.ipv4(kLanHost4, v4_of(flow.server)).ttl(kBenchTtl);
            else
                b.ipv6(kLanHost6, v6_of(flow.server)).hop_limit(kBenchTtl);
            return b;
        };
        if (f == Family::v4) {
            flow.server = addr16(to_nat_peer ? kNatPeerAddr4 : kWanHost4);
            flow.seen_addr = addr16(kLanHost4);
        } else {
            flow.server = addr16(to_nat_peer ? kNatPeerAddr6 : kWanHost6);
            flow.seen_addr = addr16(kLanHost6);
        }
        const size_t payload = kDataIpPacketSize - (f == Family::v4 ? 40 : 60);
        flow.syn = lan_to_server().tcp(port, 80).seq(1000).syn().window(64240).build();
        flow.data = lan_to_server().tcp(port, 80).seq(1001).ack_seq(5001).ack().psh().payload_pattern(payload).build();
        return flow;
    };
    est4_ = make_flow(Family::v4, false, kEstablishedPort);
    est6_ = make_flow(Family::v6, false, kEstablishedPort);
    nat4_ = make_flow(Family::v4, true, kNatPort);
    nat6_ = make_flow(Family::v6, true, kNatPort);
    first4_ = make_flow(Family::v4, false, kFirstPacketPort);
    first6_ = make_flow(Family::v6, false, kFirstPacketPort);
    first4_.data.clear();
    first6_.data.clear();
    denied4_ = PacketBuilder()
                   .eth(kLanHostMac, fw_lan)
                   .ipv4(kLanHost4, kWanHost4)
                   .ttl(kBenchTtl)
                   .tcp(kFirstPacketPort, 81)
                   .seq(1000)
                   .syn()
                   .window(64240)
                   .build();
    denied6_ = PacketBuilder()
                   .eth(kLanHostMac, fw_lan)
                   .ipv6(kLanHost6, kWanHost6)
                   .hop_limit(kBenchTtl)
                   .tcp(kFirstPacketPort, 81)
                   .seq(1000)
                   .syn()
                   .window(64240)
                   .build();

    for (FlowFrames* flow : {&est4_, &nat4_})
        if (Status s = handshake(Family::v4, *flow); !s) return s;
    for (FlowFrames* flow : {&est6_, &nat6_})
        if (Status s = handshake(Family::v6, *flow); !s) return s;
    if (observability) {
        // Logging was on: each handshake's SYN opened a session and logged it.
        auto events = drain_flow_events();
        if (!events) return events.error();
        if (events->open != 4 || events->total() != 4)
            return make_error("flow logging wrote " + std::to_string(events->open) + " open events of " +
                              std::to_string(events->total()) + " for the 4 handshakes, expected 4 of 4");
    }
    return {};
}

// The TC build, the readers, and flow logging and capture on.
Status BenchEnv::open_observability_readers() {
    if (Status s = impl_->datapath->load_tc(); !s) return make_error("the TC build: " + s.error().message);
    impl_->flow_events.reset(
        ring_buffer__new(map_fd(SLUICE_MAP_FLOW_EVENTS), &Impl::on_flow_event, impl_.get(), nullptr));
    if (!impl_->flow_events) return make_error(std::string("flow_events ring: ") + std::strerror(errno));
    Impl* impl = impl_.get();
    auto reader = observe::CaptureEventsReader::open(
        map_fd(SLUICE_MAP_CAPTURE_EVENTS), [impl](std::span<const uint8_t>) { ++impl->captured.records; },
        [impl](uint64_t n) { impl->captured.lost += n; });
    if (!reader) return make_error("capture: " + reader.error().message);
    impl_->captures = std::move(reader.value());
    return set_observability(true);
}

// On: what the observed config compiled to (runtime_cfg.flow_log 1) and what
// `sluice capture` writes while it runs (every drop, every packet, the
// longest snap length). Off: runtime_cfg.flow_log 0, what a config without
// `log:` compiles to (the policies' log flags are then never read), and
// capture_cfg cleared, what `sluice capture` leaves when it ends.
Status BenchEnv::set_observability(bool on) {
    if (!impl_->flow_events) return make_error("no observability (BenchEnv::create(true))");
    runtime_config cfg{};
    if (Status r = read_runtime_config(map_fd(SLUICE_MAP_RUNTIME_CONFIG), cfg); !r) return r;
    cfg.flow_log = on ? 1 : 0;
    if (Status w = write_runtime_config(map_fd(SLUICE_MAP_RUNTIME_CONFIG), cfg); !w) return w;
    capture_config capture{};
    if (on) {
        capture.enabled = 1;
        capture.owner_pid = static_cast<uint32_t>(getpid());
        capture.reason = CAPTURE_ANY_DROP;
        capture.sample_every = 1;
        capture.snaplen = CAPTURE_SNAPLEN_MAX;
    }
    const uint32_t key = 0;
    if (bpf_map_update_elem(map_fd(SLUICE_MAP_CAPTURE_CFG), &key, &capture, BPF_ANY) != 0)
        return make_error(std::string("capture_cfg: ") + std::strerror(errno));
    return {};
}

Result<BenchEnv::CaptureCounts> BenchEnv::drain_captures() {
    if (!impl_->captures) return make_error("no observability (BenchEnv::create(true))");
    impl_->captured = {};
    if (Status s = impl_->captures->consume(); !s) return s.error();
    return impl_->captured;
}

Result<FlowEventCounts> BenchEnv::drain_flow_events() {
    if (!impl_->flow_events) return make_error("no observability (BenchEnv::create(true))");
    impl_->drained = {};
    if (int n = ring_buffer__consume(impl_->flow_events.get()); n < 0)
        return make_error(std::string("reading flow_events: ") + std::strerror(-n));
    return impl_->drained;
}

Status BenchEnv::add_nat_peer() {
    // Reachable through wan0 like the WAN host, so the two flows take the same
    // route and differ only by the translation.
    if (Status s = ns_->ip({"neigh", "replace", kNatPeer4, "lladdr", kNatPeerMac, "dev", "wan0", "nud", "permanent"});
        !s)
        return s;
    return ns_->ip({"-6", "neigh", "replace", kNatPeer6, "lladdr", kNatPeerMac, "dev", "wan0", "nud", "permanent"});
}

// What the daemon does after applying a config (Daemon::refresh_nat_ifaddrs):
// `translate: interface` takes the egress interface's address from nat_ifaddrs.
Status BenchEnv::write_nat_ifaddrs() {
    const uint32_t wan = ns_->wan().ifindex;
    auto written = sync_nat_ifaddrs(map_fd(SLUICE_MAP_NAT_IFADDRS), {ns_->lan().ifindex, wan});
    if (!written) return make_error("nat_ifaddrs: " + written.error().message);
    for (const auto& [ifindex, addr] : written.value()) {
        if (ifindex != wan) continue;
        if (!addr.has_v4 || std::memcmp(&addr.v4, kFwWan4.bytes.data(), 4) != 0 || !addr.has_v6 ||
            std::memcmp(addr.v6, kFwWan6.bytes.data(), 16) != 0)
            return make_error(std::string("nat_ifaddrs for wan0 does not hold ") + NetnsFixture::kWanAddr4 + " and " +
                              NetnsFixture::kWanAddr6);
        return {};
    }
    return make_error("nat_ifaddrs: no entry written for wan0");
}

Status BenchEnv::load_datapath(bool observability) {
    const std::string text = bench_config_yaml(observability);
    auto parsed = config::parse_config(text, observability ? "bench-observability.yaml" : "bench.yaml");
    if (!parsed.ok()) {
        std::string msg = "bench config rejected:";
        for (const auto& d : parsed.diagnostics) msg += "\n  " + config::format_diagnostic(d);
        return make_error(msg);
    }
    auto datapath = Datapath::open(DatapathOptions{});  // empty pin_dir: nothing pinned
    if (!datapath) return make_error("Datapath::open: " + datapath.error().message);
    impl_->datapath = std::move(datapath.value());
    Datapath& dp = *impl_->datapath;
    auto compiled = compiler::compile(*parsed.config, dp.inactive_generation());
    if (!compiled) return make_error("compile: " + compiled.error().message);
    auto interfaces = Datapath::resolve(compiled.value());
    if (!interfaces) return make_error("Datapath::resolve: " + interfaces.error().message);
    if (Status s = dp.apply(compiled.value(), interfaces.value()); !s)
        return make_error("Datapath::apply: " + s.error().message);
    if (dp.prog_fd(SLUICE_PROG_XDP_MAIN) < 0) return make_error("no fd for " SLUICE_PROG_XDP_MAIN);
    return {};
}

Status BenchEnv::load_baseline() {
    impl_->baseline.reset(baseline_redirect::open());
    if (!impl_->baseline) return make_error(std::string("baseline_redirect open: ") + std::strerror(errno));
    baseline_redirect& skel = *impl_->baseline;
    // .rodata is frozen at load: the egress port must be set before.
    skel.rodata->egress_ifindex = ns_->wan().ifindex;
    if (int err = baseline_redirect::load(&skel); err != 0)
        return make_error(std::string("baseline_redirect load: ") + std::strerror(-err));
    __u32 key = ns_->wan().ifindex;
    struct bpf_devmap_val value;
    std::memset(&value, 0, sizeof value);
    value.ifindex = ns_->wan().ifindex;
    if (bpf_map_update_elem(bpf_map__fd(skel.maps.baseline_ports), &key, &value, BPF_ANY) != 0)
        return make_error(std::string("baseline devmap entry for wan0: ") + std::strerror(errno));
    return {};
}

int BenchEnv::sluice_prog_fd() const { return impl_->datapath->prog_fd(SLUICE_PROG_XDP_MAIN); }
int BenchEnv::sluice_tc_prog_fd() const { return impl_->datapath->prog_fd(SLUICE_PROG_TC_MAIN); }
int BenchEnv::baseline_prog_fd() const { return bpf_program__fd(impl_->baseline->progs.xdp_baseline_redirect); }
int BenchEnv::map_fd(const std::string& name) const { return impl_->datapath->map_fd(name); }

namespace {

// The server's answer (SYN-ACK) to the client as it sees it, and the client's ACK.
Bytes synack_frame(Family f, const Mac& fw_wan, const FlowFrames& flow) {
    PacketBuilder b;
    b.eth(flow.nat ? kNatPeerMacAddr : kWanHostMac, fw_wan);
    if (f == Family::v4)
        b.ipv4(v4_of(flow.server), v4_of(flow.seen_addr)).ttl(64);
    else
        b.ipv6(v6_of(flow.server), v6_of(flow.seen_addr)).hop_limit(64);
    return b.tcp(80, flow.seen_port).seq(5000).ack_seq(1001).syn().ack().build();
}

Bytes ack_frame(Family f, const Mac& fw_lan, const FlowFrames& flow) {
    PacketBuilder b;
    b.eth(kLanHostMac, fw_lan);
    if (f == Family::v4)
        b.ipv4(kLanHost4, v4_of(flow.server)).ttl(64);
    else
        b.ipv6(kLanHost6, v6_of(flow.server)).hop_limit(64);
    return b.tcp(flow.client_port, 80).seq(1001).ack_seq(5001).ack().build();
}

const char* tcp_state_name(int state) {
    switch (state) {
        case TCP_SESSION_NONE: return "NONE";
        case TCP_SESSION_SYN_SENT: return "SYN_SENT";
        case TCP_SESSION_SYN_RECV: return "SYN_RECV";
        case TCP_SESSION_ESTABLISHED: return "ESTABLISHED";
        case TCP_SESSION_FIN_WAIT: return "FIN_WAIT";
        case TCP_SESSION_CLOSING: return "CLOSING";
        case TCP_SESSION_TIME_WAIT: return "TIME_WAIT";
        case TCP_SESSION_CLOSED: return "CLOSED";
        default: return "?";
    }
}

}  // namespace

Status BenchEnv::handshake(Family f, FlowFrames& flow) {
    test::XdpRunner runner(sluice_prog_fd());
    const std::string who = std::string("handshake ") + family_name(f) + (flow.nat ? " (source NAT)" : "") + " ";
    auto run_step = [&](const char* what, const Bytes& frame, uint32_t ingress) -> Result<Bytes> {
        auto r = runner.run(frame, ingress);
        if (!r) return make_error(who + what + ": " + r.error().message);
        if (r->retval != XDP_REDIRECT)
            return make_error(who + what + ": verdict " + test::xdp_verdict_name(r->retval) +
                              ", expected XDP_REDIRECT (" + test::summarize_frame(frame) + ")");
        return std::move(r->output);
    };

    auto syn_out = run_step("SYN lan->wan", flow.syn, ns_->lan().ifindex);
    if (!syn_out) return syn_out.error();
    if (flow.nat) {
        // The translation the SYN chose: wan0's address and a reserved port.
        auto fwd = with_session_keys(
            f, flow, [&](const char* map, auto key, auto) { return test::lookup_session(map_fd(map), key); });
        if (!fwd) return make_error(who + "no forward session entry after the SYN");
        if (!(fwd->nat.flags & SESSION_NAT_SRC))
            return make_error(who + "the SYN's session carries no source translation (nat flags " +
                              std::to_string(fwd->nat.flags) + "); is the nat.source rule compiled?");
        Addr16 translated{};
        std::memcpy(translated.data(), fwd->nat.new_src_addr, f == Family::v4 ? 4 : 16);
        if (translated != (f == Family::v4 ? addr16(kFwWan4) : addr16(kFwWan6)))
            return make_error(who + "translated to " + addr_text(f, translated) + ", expected wan0's address");
        flow.seen_addr = translated;
        flow.seen_port = ntohs(fwd->nat.new_src_port);
    }
    if (std::string bad = check_output(f, flow, syn_out.value()); !bad.empty()) return make_error(who + "SYN: " + bad);
    if (auto r = run_step("SYN-ACK wan->lan", synack_frame(f, ns_->wan().mac, flow), ns_->wan().ifindex); !r)
        return r.error();
    if (auto r = run_step("ACK lan->wan", ack_frame(f, ns_->lan().mac, flow), ns_->lan().ifindex); !r) return r.error();
    return check_established(f, flow);
}

Status BenchEnv::check_established(Family f, const FlowFrames& flow) const {
    auto [fwd, rev] = with_session_keys(f, flow, [&](const char* map, auto fkey, auto rkey) {
        int fd = map_fd(map);
        return std::make_pair(test::lookup_session(fd, fkey), test::lookup_session(fd, rkey));
    });
    std::string who = std::string("TCP session ") + family_name(f) + " :" + std::to_string(flow.client_port) + "->" +
                      addr_text(f, flow.server) + ":80" + (flow.nat ? " (source NAT)" : "");
    if (!fwd) return make_error(who + ": no forward entry in the session map");
    if (!rev) return make_error(who + ": no reply entry in the session map");
    if (fwd->tcp_state != TCP_SESSION_ESTABLISHED || rev->tcp_state != TCP_SESSION_ESTABLISHED)
        return make_error(who + ": state " + tcp_state_name(fwd->tcp_state) + " / " + tcp_state_name(rev->tcp_state) +
                          " (forward / reply), expected ESTABLISHED");
    const bool translated = fwd->nat.flags & SESSION_NAT_SRC;
    if (translated != flow.nat)
        return make_error(who + (flow.nat ? ": not source-translated" : ": source-translated, expected no NAT"));
    return {};
}

std::string BenchEnv::check_output(Family f, const FlowFrames& flow, const Bytes& out) const {
    std::string error;
    auto p = test::parse_frame(out, &error);
    if (!p) return "output unreadable: " + error;
    auto same = [&](const std::string& text, const Addr16& want) {
        try {
            return f == Family::v4 ? Ipv4Addr::parse(text) == v4_of(want) : Ipv6Addr::parse(text) == v6_of(want);
        } catch (const std::exception&) {
            return false;
        }
    };
    std::string problems;
    if (!same(p->src_ip, flow.seen_addr) || p->sport != flow.seen_port)
        problems += " source " + p->src_ip + ":" + std::to_string(p->sport) + ", expected " +
                    addr_text(f, flow.seen_addr) + ":" + std::to_string(flow.seen_port);
    if (!same(p->dst_ip, flow.server) || p->dport != 80)
        problems += " destination " + p->dst_ip + ":" + std::to_string(p->dport) + ", expected " +
                    addr_text(f, flow.server) + ":80";
    if (auto report = test::verify_checksums(out); !report.ok()) problems += " checksums: " + report.describe();
    return problems.empty() ? "" : "output" + problems + " (" + test::summarize_frame(out) + ")";
}

// For flows without NAT (a translated flow also holds a port reservation).
void BenchEnv::delete_sessions(Family f, const FlowFrames& flow) const {
    with_session_keys(f, flow, [&](const char* map, auto fkey, auto rkey) {
        int fd = map_fd(map);
        bpf_map_delete_elem(fd, &fkey);
        bpf_map_delete_elem(fd, &rkey);
        return 0;
    });
}

bool BenchEnv::session_exists(Family f, const FlowFrames& flow) const {
    return with_session_keys(f, flow, [&](const char* map, auto fkey, auto) {
        return test::lookup_session(map_fd(map), fkey).has_value();
    });
}

}  // namespace sluice::bench
