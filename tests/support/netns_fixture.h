// A throwaway network namespace for BPF program tests, entered by the calling
// thread for the fixture's lifetime (BPF_PROG_TEST_RUN resolves ingress_ifindex
// and bpf_fib_lookup in the caller's namespace). It is the bpf-test lab
// topology (cluster/topology.h), built by the one topology builder:
//
//   lan0 (198.18.1.1/24, 2001:2:0:1::1/64)     <-veth->  lan0p
//   wan0 (198.18.100.1/24, 2001:2:0:100::1/64) <-veth->  wan0p
//   permanent neighbours: 198.18.1.10, 2001:2:0:1::10          -> 02:00:00:00:01:10 (lan0)
//                         198.18.100.200, 2001:2:0:100::200    -> 02:00:00:00:64:c8 (wan0)
//   forwarding on for IPv4 and IPv6.
//
// The namespace is named sluice-bpft-<pid>-<n>-fw; the destructor returns the thread
// to its original namespace and deletes this one, also after a failed create().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/topology.h"
#include "common/result.h"
#include "packet_builder.h"

namespace sluice::test {

// Why privileged BPF tests cannot run here (not root, bpf() refused, no `ip`),
// or nullopt when they can.
std::optional<std::string> bpf_unavailable_reason();

// SLUICE_REQUIRE_BPF=1 (.ci/run and scripts/ci-incus.sh set it): this machine
// is known to run the BPF and namespace tests, so a reason to skip one is a
// failure, not a skip that would pass CI silently.
bool bpf_required();

// In a test body or SetUp: skip with the reason when BPF tests cannot run
// here, or fail with it when they must.
#define SLUICE_SKIP_WITHOUT_BPF()                                                                  \
    do {                                                                                           \
        if (auto sluice_reason_ = ::sluice::test::bpf_unavailable_reason()) {                     \
            if (::sluice::test::bpf_required()) FAIL() << "SLUICE_REQUIRE_BPF=1, but " << *sluice_reason_; \
            GTEST_SKIP() << "skipped: " << *sluice_reason_;                                       \
        }                                                                                          \
    } while (0)

// Runs argv (no shell) and returns its exit status; output is captured into *output.
int run_command(const std::vector<std::string>& argv, std::string* output = nullptr);

struct InterfaceInfo {
    std::string name;
    uint32_t ifindex = 0;
    Mac mac;
};

class NetnsFixture {
public:
    // Creates, enters and configures the namespace. On failure the error says
    // which step failed; whatever was made is undone by the destructor.
    static Result<std::unique_ptr<NetnsFixture>> create();
    ~NetnsFixture();
    NetnsFixture(const NetnsFixture&) = delete;
    NetnsFixture& operator=(const NetnsFixture&) = delete;

    const std::string& name() const { return name_; }
    const InterfaceInfo& lan() const { return lan_; }
    const InterfaceInfo& wan() const { return wan_; }

    // An interface's index/MAC in the namespace, looked up now.
    Result<InterfaceInfo> interface(const std::string& name) const;

    // Adds an 802.1Q sub-interface (e.g. lan0.100) and brings it up.
    Result<InterfaceInfo> add_vlan(const std::string& parent, uint16_t vid);

    // Runs `ip -n <ns> args...`; the error carries ip's output.
    Status ip(const std::vector<std::string>& args) const;

    // The fixed addresses the namespace is built with.
    static constexpr const char* kLanAddr4 = cluster::kFw0Lan4;
    static constexpr const char* kLanAddr6 = cluster::kFw0Lan6;
    static constexpr const char* kWanAddr4 = cluster::kFw0Wan4;
    static constexpr const char* kWanAddr6 = cluster::kFw0Wan6;
    static constexpr const char* kLanHost4 = cluster::kLanHost4;
    static constexpr const char* kLanHost6 = cluster::kLanHost6;
    static constexpr const char* kLanHostMac = cluster::kLanHostMac;
    static constexpr const char* kWanHost4 = cluster::kWanHost4;
    static constexpr const char* kWanHost6 = cluster::kWanHost6;
    static constexpr const char* kWanHostMac = cluster::kWanHostMac;

private:
    NetnsFixture() = default;
    Status setup();

    std::string prefix_, name_;
    bool created_ = false;
    int original_netns_fd_ = -1;
    bool entered_ = false;
    InterfaceInfo lan_, wan_;
};

}  // namespace sluice::test
