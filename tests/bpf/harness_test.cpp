// Self-tests of the privileged half of the harness: the namespace fixture,
// the XDP runner (on a two-instruction program) and the per-CPU stats reader.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "map_readers.h"
#include "netns_fixture.h"
#include "xdp_runner.h"

namespace sluice::test {
namespace {

ino_t current_netns_inode() {
    struct stat st;
    if (stat("/proc/thread-self/ns/net", &st) != 0) return 0;
    return st.st_ino;
}

TEST(NetnsFixture, BuildsTheTopologyAndCleansUp) {
    SLUICE_SKIP_WITHOUT_BPF();
    ino_t original = current_netns_inode();
    std::string name;
    {
        auto ns = NetnsFixture::create();
        ASSERT_TRUE(ns.ok()) << ns.error().message;
        name = ns.value()->name();
        EXPECT_EQ(name.rfind("sluice-bpft-" + std::to_string(getpid()) + "-", 0), 0u) << name;
        EXPECT_NE(current_netns_inode(), original) << "the thread should be inside the namespace";
        const auto& lan = ns.value()->lan();
        const auto& wan = ns.value()->wan();
        EXPECT_GT(lan.ifindex, 0u);
        EXPECT_GT(wan.ifindex, 0u);
        EXPECT_NE(lan.mac, Mac{});
        EXPECT_NE(lan.mac, wan.mac);

        std::string out;
        ASSERT_EQ(run_command({"ip", "-n", name, "neigh", "show", "dev", "wan0"}, &out), 0);
        EXPECT_NE(out.find("198.18.100.200 lladdr 02:00:00:00:64:c8 PERMANENT"), std::string::npos) << out;
        ASSERT_EQ(run_command({"ip", "-n", name, "-6", "neigh", "show", "dev", "lan0"}, &out), 0);
        EXPECT_NE(out.find("2001:2:0:1::10 lladdr 02:00:00:00:01:10 PERMANENT"), std::string::npos) << out;
        ASSERT_EQ(run_command({"ip", "-n", name, "-6", "addr", "show", "dev", "wan0"}, &out), 0);
        EXPECT_NE(out.find("2001:2:0:100::1/64"), std::string::npos) << out;
        ASSERT_EQ(run_command({"ip", "netns", "exec", name, "sysctl", "-n", "net.ipv4.ip_forward",
                               "net.ipv6.conf.all.forwarding"},
                              &out),
                  0);
        EXPECT_EQ(out, "1\n1\n");
    }
    EXPECT_EQ(current_netns_inode(), original) << "the thread should be back in its namespace";
    std::string list;
    run_command({"ip", "netns", "list"}, &list);
    EXPECT_EQ(list.find(name), std::string::npos) << "namespace " << name << " was not deleted";
}

// A program that returns `verdict` and touches nothing.
int load_constant_xdp(int verdict) {
    struct bpf_insn insns[] = {
        {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, verdict},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    return bpf_prog_load(BPF_PROG_TYPE_XDP, "bpft_const", "GPL", insns, 2, nullptr);
}

TEST(XdpRunner, RunsAProgramAndReturnsItsFrame) {
    SLUICE_SKIP_WITHOUT_BPF();
    auto ns = NetnsFixture::create();
    ASSERT_TRUE(ns.ok()) << ns.error().message;
    int fd = load_constant_xdp(XDP_TX);
    ASSERT_GE(fd, 0) << "loading a 2-instruction XDP program failed";
    XdpRunner runner(fd);
    Bytes frame = PacketBuilder().eth("02:00:00:00:01:10", "02:00:00:00:01:01").ipv4("198.18.1.10", "198.18.100.200")
                      .udp(1, 53).payload("x").build();
    auto r = runner.run(frame, ns.value()->lan().ifindex, 100);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value().retval, XDP_TX);
    EXPECT_EQ(r.value().output, frame);
    EXPECT_TRUE(check_fixture(runner, {"constant XDP_TX", frame, ns.value()->lan().ifindex, XDP_TX, frame}));
    auto mismatch = check_fixture(runner, {"expects a drop", frame, ns.value()->lan().ifindex, XDP_DROP, {}});
    EXPECT_FALSE(mismatch);
    EXPECT_NE(std::string(mismatch.message()).find("XDP_TX"), std::string::npos) << mismatch.message();
    EXPECT_FALSE(runner.run(Bytes(10, 0), ns.value()->lan().ifindex).ok()) << "frames < 14 bytes are refused";
    close(fd);
}

TEST(MapReaders, SumsPerCpuCounters) {
    SLUICE_SKIP_WITHOUT_BPF();
    int fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "bpft_stats", 4, 8, 3, nullptr);
    ASSERT_GE(fd, 0);
    int cpus = libbpf_num_possible_cpus();
    std::vector<uint64_t> values(static_cast<size_t>(cpus));
    for (int c = 0; c < cpus; ++c) values[static_cast<size_t>(c)] = static_cast<uint64_t>(c + 1);
    __u32 key = 1;
    ASSERT_EQ(bpf_map_update_elem(fd, &key, values.data(), BPF_ANY), 0);
    auto sums = read_stats(fd);
    ASSERT_TRUE(sums.ok()) << sums.error().message;
    ASSERT_EQ(sums.value().size(), 3u);
    EXPECT_EQ(sums.value()[0], 0u);
    EXPECT_EQ(sums.value()[1], static_cast<uint64_t>(cpus) * (cpus + 1) / 2);
    auto d = stat_delta({0, 0, 0}, sums.value());
    EXPECT_EQ(d.size(), 1u);
    close(fd);
}

TEST(MapReaders, StatTableFollowsTheAbi) {
    const auto& t = stat_table();
    ASSERT_EQ(t.size(), static_cast<size_t>(STAT_REASON_COUNT));
    EXPECT_STREQ(t[STAT_DROP_POLICY_DENY].name, "drop-policy-deny");
    EXPECT_STREQ(t[STAT_DROP_POLICY_DENY].kind, "drop");
    EXPECT_STREQ(t[STAT_RX].kind, "info");
}

}  // namespace
}  // namespace sluice::test
