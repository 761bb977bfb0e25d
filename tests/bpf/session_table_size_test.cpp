// limits.sessions: the session maps are created at the configured size, a
// full table drops new flows (counted) while established ones keep passing,
// the memory `sluice check` estimates is what the kernel reports, and a
// pinned table of another size is refused with a way out.
#include <bpf/bpf.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "config/session_table_size.h"
#include "datapath_env.h"
#include "loader/datapath.h"
#include "loader/pin_abi.h"

extern "C" {
#include "abi.h"
#include "map_names.h"
}

namespace sluice::test {
namespace {

constexpr uint32_t kSessions = 1024;
constexpr uint16_t kServerPort = 80;
constexpr uint16_t kEstablishedPort = 40000;
constexpr uint16_t kFillFirstPort = 41000;

uint32_t max_entries_of(int fd) {
    bpf_map_info info{};
    uint32_t len = sizeof(info);
    EXPECT_EQ(bpf_obj_get_info_by_fd(fd, &info, &len), 0) << std::strerror(errno);
    return info.max_entries;
}

// The kernel's own figure for a map: "memlock:" in the fd's fdinfo, which
// since 6.4 is the map type's memory usage (htab_map_mem_usage).
uint64_t kernel_memlock(int fd) {
    std::ifstream in("/proc/self/fdinfo/" + std::to_string(fd));
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("memlock:", 0) == 0) return std::stoull(line.substr(8));
    }
    ADD_FAILURE() << "no memlock: line in /proc/self/fdinfo/" << fd;
    return 0;
}

// The estimate must hold within 5% of what the kernel says, so a wrong
// element header, rounding or a forgotten bucket array (7% of the total)
// fails here.
void expect_estimate_close(int fd, uint32_t key_size, const char* name) {
    const uint32_t entries = max_entries_of(fd);
    const uint64_t estimate = config::hash_map_bytes_estimate(entries, key_size, sizeof(session_value));
    const uint64_t kernel = kernel_memlock(fd);
    const double ratio = static_cast<double>(estimate) / static_cast<double>(kernel);
    std::cout << "[ memory   ] " << name << ", " << entries << " entries: estimate " << estimate << " bytes, kernel "
              << kernel << " bytes (ratio " << ratio << ")\n";
    EXPECT_GT(ratio, 0.95) << name;
    EXPECT_LT(ratio, 1.05) << name;
}

class SessionTableSizeTest : public DatapathTest {
protected:
    std::string config_yaml() const override {
        return std::string(kTestConfigYaml) + "limits: { sessions: " + std::to_string(kSessions) + " }\n";
    }
    PacketBuilder out(bool v6) const { return v6 ? lan_to_wan6() : lan_to_wan4(); }
    PacketBuilder out_fwd(bool v6) const { return v6 ? lan_to_wan6_out() : lan_to_wan4_out(); }
    PacketBuilder in(bool v6) const { return v6 ? wan_to_lan6() : wan_to_lan4(); }
    PacketBuilder in_fwd(bool v6) const { return v6 ? wan_to_lan6_out() : wan_to_lan4_out(); }
    void fill_then_new_flow(bool v6);
};

TEST_F(SessionTableSizeTest, BothMapsHoldTwoEntriesPerConfiguredSession) {
    EXPECT_EQ(max_entries_of(env_->map_fd(SLUICE_MAP_SESSIONS_V4)), 2 * kSessions);
    EXPECT_EQ(max_entries_of(env_->map_fd(SLUICE_MAP_SESSIONS_V6)), 2 * kSessions);
}

TEST_F(SessionTableSizeTest, MemoryEstimateMatchesTheKernel) {
    expect_estimate_close(env_->map_fd(SLUICE_MAP_SESSIONS_V4), sizeof(session_key_v4), "sessions_v4");
    expect_estimate_close(env_->map_fd(SLUICE_MAP_SESSIONS_V6), sizeof(session_key_v6), "sessions_v6");
}

// One established flow, then the table filled with SYNs of other flows: a
// new flow's SYN is dropped as drop-session-table-full and leaves nothing;
// the established flow still passes both ways.
void SessionTableSizeTest::fill_then_new_flow(bool v6) {
    const int fd = env_->map_fd(v6 ? SLUICE_MAP_SESSIONS_V6 : SLUICE_MAP_SESSIONS_V4);
    auto syn = [](PacketBuilder b, uint16_t sport) { return b.tcp(sport, kServerPort).seq(1000).syn().build(); };
    auto synack = [](PacketBuilder b) {
        return b.tcp(kServerPort, kEstablishedPort).seq(5000).ack_seq(1001).syn().ack().build();
    };
    auto data = [](PacketBuilder b) {
        return b.tcp(kEstablishedPort, kServerPort).seq(1001).ack_seq(5001).ack().psh().payload("still here").build();
    };
    auto reply = [](PacketBuilder b) {
        return b.tcp(kServerPort, kEstablishedPort).seq(5001).ack_seq(1011).ack().payload("ok").build();
    };
    expect_fixture({"SYN of the established flow", syn(out(v6), kEstablishedPort), lan_if(), XDP_REDIRECT,
                    syn(out_fwd(v6), kEstablishedPort)});
    expect_fixture({"SYN-ACK", synack(in(v6)), wan_if(), XDP_REDIRECT, synack(in_fwd(v6))});

    const XdpRunner runner = this->runner();
    for (uint32_t i = 1; i < kSessions; ++i) {
        auto r = runner.run(syn(out(v6), static_cast<uint16_t>(kFillFirstPort + i)), lan_if());
        ASSERT_TRUE(r.ok()) << r.error().message;
        ASSERT_EQ(r.value().retval, XDP_REDIRECT) << "filling SYN " << i << ": " << describe_delta(stats_delta());
    }
    ASSERT_EQ(count_entries(fd), 2 * kSessions) << "the table should be exactly full";

    snapshot_stats();
    expect_fixture({"SYN of a new flow, table full", syn(out(v6), kFillFirstPort), lan_if(), XDP_DROP, {}});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_SESSION_TABLE_FULL, 1));
    EXPECT_EQ(count_entries(fd), 2 * kSessions);
    if (v6) EXPECT_FALSE(session6(kLanHost6, kWanHost6, kFillFirstPort, kServerPort, proto::kTcp));
    else EXPECT_FALSE(session4(kLanHost4, kWanHost4, kFillFirstPort, kServerPort, proto::kTcp));

    snapshot_stats();
    expect_fixture({"established flow, lan->wan", data(out(v6)), lan_if(), XDP_REDIRECT, data(out_fwd(v6))});
    expect_fixture({"established flow, wan->lan", reply(in(v6)), wan_if(), XDP_REDIRECT, reply(in_fwd(v6))});
    EXPECT_EQ(stat_change(STAT_DROP_SESSION_TABLE_FULL), 0);
}

TEST_F(SessionTableSizeTest, FullTableDropsNewIpv4FlowsAndKeepsEstablishedOnes) { fill_then_new_flow(false); }
TEST_F(SessionTableSizeTest, FullTableDropsNewIpv6FlowsAndKeepsEstablishedOnes) { fill_then_new_flow(true); }

// A datapath at the default size (no limits section), unpinned: the
// estimate `sluice check` prints for it against the kernel's figure.
TEST(SessionTableDefaultSize, MemoryEstimateMatchesTheKernel) {
    SLUICE_SKIP_WITHOUT_BPF();
    auto dp = Datapath::open(DatapathOptions{});
    ASSERT_TRUE(dp.ok()) << dp.error().message;
    const int v4 = dp.value()->map_fd(SLUICE_MAP_SESSIONS_V4), v6 = dp.value()->map_fd(SLUICE_MAP_SESSIONS_V6);
    EXPECT_EQ(max_entries_of(v4), 262144u);
    EXPECT_EQ(dp.value()->session_capacity(), config::kDefaultSessions);
    expect_estimate_close(v4, sizeof(session_key_v4), "sessions_v4");
    expect_estimate_close(v6, sizeof(session_key_v6), "sessions_v6");
    const uint64_t both = kernel_memlock(v4) + kernel_memlock(v6);
    const double ratio = static_cast<double>(config::session_table_bytes_estimate(config::kDefaultSessions)) / both;
    EXPECT_GT(ratio, 0.95);
    EXPECT_LT(ratio, 1.05);
}

// A pin directory of its own under /sys/fs/bpf, removed (with whatever was
// pinned in it) even when the test fails.
class PinDir {
public:
    PinDir() : path_("/sys/fs/bpf/sluice-test-session-size-" + std::to_string(getpid())) {}
    ~PinDir() { (void)remove_pins(path_); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

std::optional<std::string> bpffs_unavailable_reason() {
    struct statfs fs {};
    if (statfs("/sys/fs/bpf", &fs) != 0 || fs.f_type != BPF_FS_MAGIC)
        return "bpffs is not mounted at /sys/fs/bpf (mount -t bpf bpf /sys/fs/bpf)";
    return std::nullopt;
}

// BPF and bpffs, or a skip (a failure under SLUICE_REQUIRE_BPF=1) saying why not.
#define SKIP_WITHOUT_PINNING()                                                        \
    do {                                                                              \
        SLUICE_SKIP_WITHOUT_BPF();                                                    \
        if (auto reason = bpffs_unavailable_reason()) {                               \
            if (bpf_required()) FAIL() << "SLUICE_REQUIRE_BPF=1, but " << *reason;    \
            GTEST_SKIP() << "skipped: " << *reason;                                   \
        }                                                                             \
    } while (0)

TEST(SessionTablePinned, AnotherSizeIsRefusedBeforeLoading) {
    SKIP_WITHOUT_PINNING();
    PinDir pins;
    {
        auto first = Datapath::open(DatapathOptions{.pin_dir = pins.path(), .sessions = 1024});
        ASSERT_TRUE(first.ok()) << first.error().message;
    }  // closed: the pinned maps stay, as after a daemon's SIGTERM
    auto resized = Datapath::open(DatapathOptions{.pin_dir = pins.path(), .sessions = 2048});
    ASSERT_FALSE(resized.ok());
    const std::string& message = resized.error().message;
    EXPECT_NE(message.find("the pinned session table " + pins.path() + "/sessions_v4 holds 1024 sessions per family "
                           "(2048 entries); the config asks for 2048 sessions per family (4096 entries) "
                           "(limits.sessions)"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("`sluice down`"), std::string::npos) << message;
    EXPECT_NE(message.find("dropping every session"), std::string::npos) << message;

    // The same size reuses the pins.
    auto again = Datapath::open(DatapathOptions{.pin_dir = pins.path(), .sessions = 1024});
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again.value()->session_capacity(), 1024u);
    EXPECT_EQ(max_entries_of(again.value()->map_fd(SLUICE_MAP_SESSIONS_V6)), 2048u);
}

// Pins carry their ABI version (loader/pin_abi.h): pins of another version,
// or of none, are refused before libbpf reuses a map, and left alone.
TEST(PinnedAbi, PinsOfAnotherAbiAreRefused) {
    SKIP_WITHOUT_PINNING();
    PinDir pins;
    {
        auto first = Datapath::open(DatapathOptions{.pin_dir = pins.path(), .sessions = 1024});
        ASSERT_TRUE(first.ok()) << first.error().message;
    }
    const std::string marker = pins.path() + "/" + pin_abi_marker();
    ASSERT_TRUE(std::filesystem::is_directory(marker)) << marker;

    ASSERT_EQ(rmdir(marker.c_str()), 0);
    ASSERT_EQ(mkdir((pins.path() + "/abi-999").c_str(), 0700), 0);
    auto other = Datapath::open(DatapathOptions{.pin_dir = pins.path(), .sessions = 1024});
    ASSERT_FALSE(other.ok());
    EXPECT_EQ(other.error().code, ErrorCode::Incompatible);
    EXPECT_NE(other.error().message.find("with ABI 999; this sluice uses ABI " + std::to_string(SLUICE_ABI_VERSION)),
              std::string::npos)
        << other.error().message;
    EXPECT_TRUE(std::filesystem::exists(pins.path() + "/" SLUICE_MAP_SESSIONS_V4)) << "the old pins were touched";

    ASSERT_EQ(rmdir((pins.path() + "/abi-999").c_str()), 0);
    auto none = Datapath::open(DatapathOptions{.pin_dir = pins.path(), .sessions = 1024});
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().message.find("with no ABI version"), std::string::npos) << none.error().message;

    ASSERT_EQ(mkdir(marker.c_str(), 0700), 0);
    auto again = Datapath::open(DatapathOptions{.pin_dir = pins.path(), .sessions = 1024});
    EXPECT_TRUE(again.ok()) << again.error().message;
}

}  // namespace
}  // namespace sluice::test
