#include "bench_env.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "baseline_redirect.skel.h"
#include "compiler/compile.h"
#include "config/load_config.h"
#include "loader/datapath.h"
#include "map_readers.h"
#include "xdp_runner.h"

extern "C" {
#include "map_names.h"
}

namespace sluice::bench {

using test::Ipv4Addr;
using test::Ipv6Addr;
using test::Mac;
using test::NetnsFixture;
using test::PacketBuilder;

const char* const kBenchConfigYaml = R"yaml(
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }

zones:
  trust: {}
  untrust: {}

address-book:
  lan-net: [198.18.1.0/24, "2001:2:0:1::/64"]

applications:
  http: { protocol: tcp, destination-port: 80 }

policies:
  - name: lan-web
    from: trust
    to: untrust
    source: [lan-net]
    application: [http]
    action: permit

default-action: deny
)yaml";

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

const Mac kLanHostMac = Mac::parse(NetnsFixture::kLanHostMac);
const Mac kWanHostMac = Mac::parse(NetnsFixture::kWanHostMac);
const Ipv4Addr kLanHost4 = Ipv4Addr::parse(NetnsFixture::kLanHost4);
const Ipv4Addr kWanHost4 = Ipv4Addr::parse(NetnsFixture::kWanHost4);
const Ipv6Addr kLanHost6 = Ipv6Addr::parse(NetnsFixture::kLanHost6);
const Ipv6Addr kWanHost6 = Ipv6Addr::parse(NetnsFixture::kWanHost6);

}  // namespace

struct BenchEnv::Impl {
    std::unique_ptr<Datapath> datapath;
    std::unique_ptr<baseline_redirect, BaselineDeleter> baseline;
};

Result<std::unique_ptr<BenchEnv>> BenchEnv::create() {
    if (auto reason = test::bpf_unavailable_reason()) return make_error(*reason);
    if (auto problem = bpf_stats_problem(); !problem.empty()) return make_error(problem);
    std::unique_ptr<BenchEnv> env(new BenchEnv());
    if (Status s = env->setup(); !s) return s.error();
    return env;
}

BenchEnv::~BenchEnv() {
    impl_.reset();  // close the BPF fds inside the namespace, then leave it
    ns_.reset();
}

Status BenchEnv::setup() {
    auto ns = NetnsFixture::create();
    if (!ns) return make_error("namespace: " + ns.error().message);
    ns_ = std::move(ns.value());
    impl_ = std::make_unique<Impl>();
    if (Status s = load_datapath(); !s) return s;
    if (Status s = load_baseline(); !s) return s;

    // Frames from the LAN host to the WAN host. TCP payload sizes make the IP
    // packet kDataIpPacketSize bytes (20 + 20 + 1460, 40 + 20 + 1440).
    const Mac fw_lan = ns_->lan().mac;
    auto v4 = [&] { return std::move(PacketBuilder().eth(kLanHostMac, fw_lan).ipv4(kLanHost4, kWanHost4).ttl(kBenchTtl)); };
    auto v6 = [&] {
        return std::move(PacketBuilder().eth(kLanHostMac, fw_lan).ipv6(kLanHost6, kWanHost6).hop_limit(kBenchTtl));
    };
    auto syn = [](PacketBuilder b, uint16_t port) { return b.tcp(port, 80).seq(1000).syn().window(64240).build(); };
    auto data = [](PacketBuilder b, uint16_t port, size_t payload) {
        return b.tcp(port, 80).seq(1001).ack_seq(5001).ack().psh().payload_pattern(payload).build();
    };
    est4_ = {syn(v4(), kEstablishedPort), data(v4(), kEstablishedPort, kDataIpPacketSize - 40), kEstablishedPort};
    est6_ = {syn(v6(), kEstablishedPort), data(v6(), kEstablishedPort, kDataIpPacketSize - 60), kEstablishedPort};
    first4_ = {syn(v4(), kFirstPacketPort), {}, kFirstPacketPort};
    first6_ = {syn(v6(), kFirstPacketPort), {}, kFirstPacketPort};

    for (Family f : {Family::v4, Family::v6})
        if (Status s = handshake(f); !s) return s;
    return {};
}

Status BenchEnv::load_datapath() {
    auto parsed = config::parse_config(kBenchConfigYaml, "bench.yaml");
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
int BenchEnv::baseline_prog_fd() const { return bpf_program__fd(impl_->baseline->progs.xdp_baseline_redirect); }
int BenchEnv::map_fd(const std::string& name) const { return impl_->datapath->map_fd(name); }

namespace {

// The WAN host's answer (SYN-ACK) and the client's ACK for `flow`.
Bytes synack_frame(Family f, const Mac& fw_wan, uint16_t port) {
    PacketBuilder b;
    b.eth(kWanHostMac, fw_wan);
    if (f == Family::v4)
        b.ipv4(kWanHost4, kLanHost4).ttl(64);
    else
        b.ipv6(kWanHost6, kLanHost6).hop_limit(64);
    return b.tcp(80, port).seq(5000).ack_seq(1001).syn().ack().build();
}

Bytes ack_frame(Family f, const Mac& fw_lan, uint16_t port) {
    PacketBuilder b;
    b.eth(kLanHostMac, fw_lan);
    if (f == Family::v4)
        b.ipv4(kLanHost4, kWanHost4).ttl(64);
    else
        b.ipv6(kLanHost6, kWanHost6).hop_limit(64);
    return b.tcp(port, 80).seq(1001).ack_seq(5001).ack().build();
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

Status BenchEnv::handshake(Family f) {
    test::XdpRunner runner(sluice_prog_fd());
    const FlowFrames& flow = established(f);
    struct Step {
        const char* what;
        Bytes frame;
        uint32_t ingress;
    };
    const Step steps[] = {
        {"SYN lan->wan", flow.syn, ns_->lan().ifindex},
        {"SYN-ACK wan->lan", synack_frame(f, ns_->wan().mac, flow.client_port), ns_->wan().ifindex},
        {"ACK lan->wan", ack_frame(f, ns_->lan().mac, flow.client_port), ns_->lan().ifindex},
    };
    for (const Step& step : steps) {
        auto r = runner.run(step.frame, step.ingress);
        if (!r) return make_error(std::string("handshake ") + family_name(f) + " " + step.what + ": " + r.error().message);
        if (r->retval != XDP_REDIRECT)
            return make_error(std::string("handshake ") + family_name(f) + " " + step.what + ": verdict " +
                              test::xdp_verdict_name(r->retval) + ", expected XDP_REDIRECT (" +
                              test::summarize_frame(step.frame) + ")");
    }
    return check_established(f);
}

Status BenchEnv::check_established(Family f) const {
    const FlowFrames& flow = established(f);
    std::optional<session_value> fwd, rev;
    if (f == Family::v4) {
        int fd = map_fd(SLUICE_MAP_SESSIONS_V4);
        fwd = test::lookup_session(fd, test::session_key(kLanHost4, kWanHost4, flow.client_port, 80, test::proto::kTcp));
        rev = test::lookup_session(fd, test::session_key(kWanHost4, kLanHost4, 80, flow.client_port, test::proto::kTcp));
    } else {
        int fd = map_fd(SLUICE_MAP_SESSIONS_V6);
        fwd = test::lookup_session(fd, test::session_key(kLanHost6, kWanHost6, flow.client_port, 80, test::proto::kTcp));
        rev = test::lookup_session(fd, test::session_key(kWanHost6, kLanHost6, 80, flow.client_port, test::proto::kTcp));
    }
    std::string who = std::string("TCP session ") + family_name(f) + " :" + std::to_string(flow.client_port) + "->:80";
    if (!fwd) return make_error(who + ": no forward entry in the session map");
    if (!rev) return make_error(who + ": no reply entry in the session map");
    if (fwd->tcp_state != TCP_SESSION_ESTABLISHED || rev->tcp_state != TCP_SESSION_ESTABLISHED)
        return make_error(who + ": state " + tcp_state_name(fwd->tcp_state) + " / " + tcp_state_name(rev->tcp_state) +
                          " (forward / reply), expected ESTABLISHED");
    return {};
}

void BenchEnv::delete_sessions(Family f, const FlowFrames& flow) const {
    if (f == Family::v4) {
        int fd = map_fd(SLUICE_MAP_SESSIONS_V4);
        auto k1 = test::session_key(kLanHost4, kWanHost4, flow.client_port, 80, test::proto::kTcp);
        auto k2 = test::session_key(kWanHost4, kLanHost4, 80, flow.client_port, test::proto::kTcp);
        bpf_map_delete_elem(fd, &k1);
        bpf_map_delete_elem(fd, &k2);
    } else {
        int fd = map_fd(SLUICE_MAP_SESSIONS_V6);
        auto k1 = test::session_key(kLanHost6, kWanHost6, flow.client_port, 80, test::proto::kTcp);
        auto k2 = test::session_key(kWanHost6, kLanHost6, 80, flow.client_port, test::proto::kTcp);
        bpf_map_delete_elem(fd, &k1);
        bpf_map_delete_elem(fd, &k2);
    }
}

bool BenchEnv::session_exists(Family f, const FlowFrames& flow) const {
    if (f == Family::v4)
        return test::lookup_session(map_fd(SLUICE_MAP_SESSIONS_V4),
                                    test::session_key(kLanHost4, kWanHost4, flow.client_port, 80, test::proto::kTcp))
            .has_value();
    return test::lookup_session(map_fd(SLUICE_MAP_SESSIONS_V6),
                                test::session_key(kLanHost6, kWanHost6, flow.client_port, 80, test::proto::kTcp))
        .has_value();
}

}  // namespace sluice::bench
