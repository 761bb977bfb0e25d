#include "datapath_env.h"

#include <linux/bpf.h>

#include "compiler/compile.h"
#include "config/load_config.h"
#include "loader/datapath.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>

extern "C" {
#include "map_names.h"
#include "punt.h"
}

namespace sluice::test {

const char* const kTestConfigYaml = R"yaml(
interfaces:
  lan0: { zone: trust }
  lan0.100: { zone: trust }
  wan0: { zone: untrust }

zones:
  trust: { host-inbound: [ping, ssh] }
  untrust: {}

applications:
  http:    { protocol: tcp, destination-port: [80, 8080] }
  dns:     { protocol: udp, destination-port: 53 }
  ping:    { protocol: icmp }
  ping6:   { protocol: icmpv6 }
  tcp-81:  { protocol: tcp, destination-port: 81 }
  udp-54:  { protocol: udp, destination-port: 54 }
  tcp-82:  { protocol: tcp, destination-port: 82 }

policies:
  - name: lan-out
    from: trust
    to: untrust
    application: [http, dns, ping, ping6]
    action: permit
  - name: lan-reject
    from: trust
    to: untrust
    application: [tcp-81, udp-54]
    action: reject
  - name: lan-deny
    from: trust
    to: untrust
    application: [tcp-82]
    action: deny
  - name: nothing-in
    from: untrust
    to: trust
    action: deny

default-action: deny
)yaml";

struct DatapathEnv::Impl {
    std::unique_ptr<Datapath> datapath;
};

Result<std::unique_ptr<DatapathEnv>> DatapathEnv::create(const std::string& yaml, bool cap_state_maps) {
    std::unique_ptr<DatapathEnv> env(new DatapathEnv());
    auto ns = NetnsFixture::create();
    if (!ns) return make_error("namespace: " + ns.error().message);
    env->ns_ = std::move(ns.value());
    // The config binds lan0.100. The loader keys tagged ingress by (lan0, vid)
    // and needs the VLAN device only for egress through it, so a kernel
    // without 802.1Q devices (this VM's) still runs every test.
    (void)env->ns_->add_vlan("lan0", 100);

    DatapathOptions options;  // empty pin directory: nothing pinned
    // The session maps are sized as `sluice run` sizes them, from the
    // config's limits.sessions (a config that does not parse fails in apply),
    // except that a config without a size gets kTestSessions instead of the
    // default: the kernel fills a preallocated map when it creates it, and
    // the tests create hundreds of datapaths. The other state maps get
    // as many entries as the session maps, unless `cap_state_maps` is false.
    // What tests the default sizes opens a Datapath of its own.
    options.sessions = kTestSessions;
    if (auto parsed = config::parse_config(yaml, "bpf-test.yaml");
        parsed.ok() && parsed.config->limits.sessions != config::kDefaultSessions)
        options.sessions = parsed.config->limits.sessions;
    if (cap_state_maps) options.state_map_cap = config::session_map_entries(options.sessions);
    auto datapath = Datapath::open(options);
    if (!datapath) return make_error("Datapath::open: " + datapath.error().message);
    env->impl_ = std::make_unique<Impl>();
    env->impl_->datapath = std::move(datapath.value());
    if (Status s = env->apply(yaml); !s) return make_error(s.error().message);
    return env;
}

Result<CompiledConfig> DatapathEnv::compile(const std::string& yaml, ClassifierGrouping grouping) const {
    auto parsed = config::parse_config(yaml, "bpf-test.yaml");
    if (!parsed.ok()) {
        std::string msg = "test config rejected:";
        for (const auto& d : parsed.diagnostics) msg += "\n  " + config::format_diagnostic(d);
        return make_error(msg);
    }
    auto compiled = compiler::compile(*parsed.config, impl_->datapath->inactive_generation(), grouping);
    if (!compiled) return make_error("compile: " + compiled.error().message);
    return compiled;
}

Status DatapathEnv::apply(const std::string& yaml, ClassifierGrouping grouping, uint32_t* groups) {
    auto compiled = compile(yaml, grouping);
    if (!compiled) return compiled.error();
    if (groups) *groups = compiled.value().tables.layout.groups;
    auto interfaces = Datapath::resolve(compiled.value());
    if (!interfaces) return make_error("Datapath::resolve: " + interfaces.error().message);
    if (Status s = impl_->datapath->apply(compiled.value(), interfaces.value()); !s)
        return make_error("Datapath::apply: " + s.error().message);
    return {};
}

Datapath& DatapathEnv::datapath() const { return *impl_->datapath; }

int DatapathEnv::prog_fd(const std::string& name) const { return impl_->datapath->prog_fd(name); }
int DatapathEnv::map_fd(const std::string& name) const { return impl_->datapath->map_fd(name); }


DatapathEnv::~DatapathEnv() {
    impl_.reset();  // close the datapath's fds before leaving the namespace
    ns_.reset();
}

// ---------------------------------------------------------------- DatapathTest

const Ipv4Addr DatapathTest::kLanHost4 = Ipv4Addr::parse(NetnsFixture::kLanHost4);
const Ipv4Addr DatapathTest::kWanHost4 = Ipv4Addr::parse(NetnsFixture::kWanHost4);
const Ipv4Addr DatapathTest::kWanRouter4 = Ipv4Addr::parse("198.18.100.254");
const Ipv4Addr DatapathTest::kLanFw4 = Ipv4Addr::parse(NetnsFixture::kLanAddr4);
const Ipv6Addr DatapathTest::kLanHost6 = Ipv6Addr::parse(NetnsFixture::kLanHost6);
const Ipv6Addr DatapathTest::kWanHost6 = Ipv6Addr::parse(NetnsFixture::kWanHost6);
const Ipv6Addr DatapathTest::kWanRouter6 = Ipv6Addr::parse("2001:2:0:100::254");
const Ipv6Addr DatapathTest::kLanFw6 = Ipv6Addr::parse(NetnsFixture::kLanAddr6);
const Mac DatapathTest::kLanHostMac = Mac::parse(NetnsFixture::kLanHostMac);
const Mac DatapathTest::kWanHostMac = Mac::parse(NetnsFixture::kWanHostMac);

Hook DatapathTest::hook() {
    const char* h = std::getenv("SLUICE_TEST_HOOK");
    return h && std::string(h) == "tc" ? Hook::tc : Hook::xdp;
}

XdpRunner DatapathTest::runner() const {
    return XdpRunner(env_->prog_fd(hook() == Hook::tc ? SLUICE_PROG_TC_MAIN : SLUICE_PROG_XDP_MAIN), hook());
}

void DatapathTest::SetUp() {
    SLUICE_SKIP_WITHOUT_BPF();
    auto env = DatapathEnv::create(config_yaml(), cap_state_maps());
    ASSERT_TRUE(env.ok()) << env.error().message;
    env_ = std::move(env.value());
    ASSERT_GE(env_->prog_fd(SLUICE_PROG_XDP_MAIN), 0) << "no " SLUICE_PROG_XDP_MAIN " fd";
    if (hook() == Hook::tc) {
        // The same fixtures on the pipeline's TC build (the `tc` mode).
        auto tc = env_->datapath().load_tc();
        ASSERT_TRUE(tc.ok()) << tc.error().message;
        ASSERT_GE(env_->prog_fd(SLUICE_PROG_TC_MAIN), 0) << "no " SLUICE_PROG_TC_MAIN " fd";
    }
    ASSERT_GE(env_->map_fd(SLUICE_MAP_STATS), 0) << "no " SLUICE_MAP_STATS " map fd";
    snapshot_stats();
}

void DatapathTest::TearDown() { env_.reset(); }

PacketBuilder DatapathTest::lan_to_wan4(uint8_t ttl) const {
    return std::move(PacketBuilder().eth(kLanHostMac, lan_mac()).ipv4(kLanHost4, kWanHost4).ttl(ttl));
}
PacketBuilder DatapathTest::lan_to_wan6(uint8_t ttl) const {
    return std::move(PacketBuilder().eth(kLanHostMac, lan_mac()).ipv6(kLanHost6, kWanHost6).hop_limit(ttl));
}
PacketBuilder DatapathTest::wan_to_lan4(uint8_t ttl) const {
    return std::move(PacketBuilder().eth(kWanHostMac, wan_mac()).ipv4(kWanHost4, kLanHost4).ttl(ttl));
}
PacketBuilder DatapathTest::wan_to_lan6(uint8_t ttl) const {
    return std::move(PacketBuilder().eth(kWanHostMac, wan_mac()).ipv6(kWanHost6, kLanHost6).hop_limit(ttl));
}
PacketBuilder DatapathTest::lan_to_wan4_out(uint8_t ttl_in) const {
    return std::move(PacketBuilder().eth(wan_mac(), kWanHostMac).ipv4(kLanHost4, kWanHost4).ttl(ttl_in - 1));
}
PacketBuilder DatapathTest::lan_to_wan6_out(uint8_t ttl_in) const {
    return std::move(
        PacketBuilder().eth(wan_mac(), kWanHostMac).ipv6(kLanHost6, kWanHost6).hop_limit(ttl_in - 1));
}
PacketBuilder DatapathTest::wan_to_lan4_out(uint8_t ttl_in) const {
    return std::move(PacketBuilder().eth(lan_mac(), kLanHostMac).ipv4(kWanHost4, kLanHost4).ttl(ttl_in - 1));
}
PacketBuilder DatapathTest::wan_to_lan6_out(uint8_t ttl_in) const {
    return std::move(
        PacketBuilder().eth(lan_mac(), kLanHostMac).ipv6(kWanHost6, kLanHost6).hop_limit(ttl_in - 1));
}

XdpRunResult DatapathTest::run(const Bytes& frame, uint32_t ingress_ifindex) {
    auto r = runner().run(frame, ingress_ifindex);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? r.value() : XdpRunResult{};
}

XdpRunResult DatapathTest::expect_fixture(const Fixture& fixture) {
    XdpRunResult result;
    auto verdict = check_fixture(runner(), fixture, &result);
    // The counters usually say why a verdict differs.
    EXPECT_TRUE(verdict) << "counters since the last snapshot: " << describe_delta(stats_delta());
    return result;
}

void DatapathTest::snapshot_stats() {
    auto s = read_stats(env_->map_fd(SLUICE_MAP_STATS));
    ASSERT_TRUE(s.ok()) << s.error().message;
    stats_before_ = s.value();
}

std::map<int, int64_t> DatapathTest::stats_delta() {
    auto s = read_stats(env_->map_fd(SLUICE_MAP_STATS));
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? stat_delta(stats_before_, s.value()) : std::map<int, int64_t>{};
}

void DatapathTest::set_punt_stage(bool up, bool overloaded) {
    punt_config cfg{};
    cfg.mark = 0x5e1c0001;
    cfg.stage_up = up;
    cfg.overloaded = overloaded;
    cfg.tcp_port = htons(40001);
    cfg.udp_port = htons(40002);
    uint32_t key = 0;
    ASSERT_EQ(bpf_map_update_elem(env_->map_fd(SLUICE_MAP_PUNT_CFG), &key, &cfg, BPF_ANY), 0);
}

int64_t DatapathTest::stat_change(int reason) {
    auto d = stats_delta();
    auto it = d.find(reason);
    return it == d.end() ? 0 : it->second;
}

::testing::AssertionResult DatapathTest::only_drop_or_pass_counter(int reason, int64_t times) {
    auto d = stats_delta();
    const auto& table = stat_table();
    bool ok = true;
    auto it = d.find(reason);
    if (it == d.end() || it->second != times) ok = false;
    for (auto [id, n] : d) {
        if (id == reason || id >= static_cast<int>(table.size())) continue;
        std::string kind = table[static_cast<size_t>(id)].kind;
        if (kind == "drop" || kind == "pass") ok = false;
    }
    if (ok) return ::testing::AssertionSuccess();
    std::string want = reason < static_cast<int>(table.size()) ? table[static_cast<size_t>(reason)].name
                                                               : std::to_string(reason);
    return ::testing::AssertionFailure() << "expected only " << want << " +" << times
                                         << " among drop/pass counters; counters changed: "
                                         << describe_delta(d);
}

std::optional<session_value> DatapathTest::session4(const Ipv4Addr& src, const Ipv4Addr& dst, uint16_t sport,
                                                    uint16_t dport, uint8_t proto) {
    return lookup_session(env_->map_fd(SLUICE_MAP_SESSIONS_V4), session_key(src, dst, sport, dport, proto));
}

std::optional<session_value> DatapathTest::session6(const Ipv6Addr& src, const Ipv6Addr& dst, uint16_t sport,
                                                    uint16_t dport, uint8_t proto) {
    return lookup_session(env_->map_fd(SLUICE_MAP_SESSIONS_V6), session_key(src, dst, sport, dport, proto));
}

}  // namespace sluice::test
