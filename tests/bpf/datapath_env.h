// The datapath under test, set up the way the daemon would: the test config
// (YAML) → config model → compiled tables → Datapath::open + apply, inside a
// fresh network namespace (NetnsFixture) so that interface names, FIB lookups
// and ingress ifindexes resolve against lan0/wan0 there.
//
// DatapathTest is the gtest base: it skips with a reason when BPF or root is
// unavailable, and offers frame templates for the LAN and WAN hosts, a runner,
// counter snapshots and session lookups.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checksum_verify.h"
#include "common/result.h"
#include "map_readers.h"
#include "netns_fixture.h"
#include "packet_builder.h"
#include "xdp_runner.h"

#include "compiler/compiled_config.h"

namespace sluice {
class Datapath;
}

namespace sluice::test {

// The policy every BPF test runs against (addresses: benchmarking ranges only).
extern const char* const kTestConfigYaml;
// The session table of a DatapathEnv whose config does not size it (flows per
// family); its other hash maps are capped at the session maps' entries.
inline constexpr uint32_t kTestSessions = 4096;

class DatapathEnv {
public:
    // Creates the namespace (with lan0.100), loads and applies `yaml`.
    // `cap_state_maps`: see DatapathTest::cap_state_maps.
    static Result<std::unique_ptr<DatapathEnv>> create(const std::string& yaml, bool cap_state_maps = true);
    ~DatapathEnv();

    // Parses, compiles (for the inactive generation, with `grouping`) and
    // applies `yaml` the way `sluice reload` does; *groups (if given) is the
    // number of classifier groups the compiled rules use.
    Status apply(const std::string& yaml, ClassifierGrouping grouping = ClassifierGrouping::when_needed,
                 uint32_t* groups = nullptr);
    // The first half of apply: `yaml` parsed and compiled for the inactive
    // generation, nothing written.
    Result<CompiledConfig> compile(const std::string& yaml,
                                   ClassifierGrouping grouping = ClassifierGrouping::when_needed) const;
    // The datapath, for a test that drives the loader itself.
    Datapath& datapath() const;

    NetnsFixture& ns() { return *ns_; }
    int prog_fd(const std::string& name) const;
    int map_fd(const std::string& name) const;

private:
    struct Impl;
    DatapathEnv() = default;
    std::unique_ptr<NetnsFixture> ns_;  // declared first: outlives the datapath
    std::unique_ptr<Impl> impl_;
};

class DatapathTest : public ::testing::Test {
protected:
    void SetUp() override;
    void TearDown() override;
    // The config the datapath is set up with; kTestConfigYaml unless a
    // fixture needs other policies (e.g. the NAT tests).
    virtual std::string config_yaml() const { return kTestConfigYaml; }
    // Whether the preallocated state maps and the classifier tables are
    // capped at the session maps' size (DatapathOptions::state_map_cap):
    // a fixture that fills a table the config does not size says false.
    virtual bool cap_state_maps() const { return true; }

    // Addresses and MACs of the topology.
    static const Ipv4Addr kLanHost4, kWanHost4, kWanRouter4, kLanFw4;
    static const Ipv6Addr kLanHost6, kWanHost6, kWanRouter6, kLanFw6;
    static const Mac kLanHostMac, kWanHostMac;
    Mac lan_mac() const { return env_->ns().lan().mac; }
    Mac wan_mac() const { return env_->ns().wan().mac; }
    uint32_t lan_if() const { return env_->ns().lan().ifindex; }
    uint32_t wan_if() const { return env_->ns().wan().ifindex; }

    // Frame starts: Ethernet from the host to the firewall, IP header between
    // the hosts; the caller adds L4. `ttl` is the TTL / hop limit.
    PacketBuilder lan_to_wan4(uint8_t ttl = 64) const;
    PacketBuilder lan_to_wan6(uint8_t ttl = 64) const;
    PacketBuilder wan_to_lan4(uint8_t ttl = 64) const;
    PacketBuilder wan_to_lan6(uint8_t ttl = 64) const;
    // The same packets as the firewall forwards them (MACs rewritten, TTL - 1).
    PacketBuilder lan_to_wan4_out(uint8_t ttl_in = 64) const;
    PacketBuilder lan_to_wan6_out(uint8_t ttl_in = 64) const;
    PacketBuilder wan_to_lan4_out(uint8_t ttl_in = 64) const;
    PacketBuilder wan_to_lan6_out(uint8_t ttl_in = 64) const;

    // The hook the tests run on: SLUICE_TEST_HOOK=tc runs the same
    // fixtures on the pipeline's TC build (tc_main_prog), else XDP.
    static Hook hook();
    // A runner for the entry program of hook().
    XdpRunner runner() const;

    // Runs the entry program (xdp_main_prog, or tc_main_prog) on a frame.
    XdpRunResult run(const Bytes& frame, uint32_t ingress_ifindex);

    // Runs a fixture and checks verdict and output; returns the run.
    XdpRunResult expect_fixture(const Fixture& fixture);

    // Counters: snapshot, then the change since the snapshot.
    void snapshot_stats();
    std::map<int, int64_t> stats_delta();
    int64_t stat_change(int reason);
    // The only drop/pass counter that changed since the snapshot is `reason`,
    // by exactly `times` (info counters may change freely).
    ::testing::AssertionResult only_drop_or_pass_counter(int reason, int64_t times = 1);

    // The controller's punt_cfg as an inspection stage would leave it: up or
    // down, overloaded or not, listener ports 40001 (TCP) / 40002 (UDP).
    void set_punt_stage(bool up, bool overloaded = false);

    std::optional<session_value> session4(const Ipv4Addr& src, const Ipv4Addr& dst, uint16_t sport,
                                          uint16_t dport, uint8_t proto);
    std::optional<session_value> session6(const Ipv6Addr& src, const Ipv6Addr& dst, uint16_t sport,
                                          uint16_t dport, uint8_t proto);

    std::unique_ptr<DatapathEnv> env_;
    std::vector<uint64_t> stats_before_;
};

}  // namespace sluice::test
