// A TCP connection the inspection stage handed back to the fast path
// (inspect-bytes): XDP renumbers every segment for its receiver — sequence
// and acknowledgment numbers, SACK blocks, both timestamps, the window in the
// receiver's scale — with a valid checksum, then forwards it. While the stage
// drains its sockets (hold), segments that carry data are dropped and pure
// ACKs still reach it; punted segments leave their TSval in the session. The
// stage's side (userspace/inspect/tcp_relay.cpp) is played by writing the
// session entries directly.
#include <bpf/bpf.h>

#include <arpa/inet.h>

#include <cstring>

#include "datapath_env.h"
#include "loader/punt_tables.h"
#include "loader/map_io.h"
#include "map_readers.h"

extern "C" {
#include "punt.h"
}

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 41000;

const char* const kSpliceConfigYaml = R"yaml(
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
zones:
  trust: {}
  untrust: {}
applications:
  web: { protocol: tcp, destination-port: [8080] }
policies:
  - { name: inspected, from: trust, to: untrust, application: [web], action: { inspect: rs } }
inspect:
  rulesets:
    rs:
      inspect-bytes: 1000
      patterns: [{ name: p, regex: 'x', action: reject }]
default-action: deny
)yaml";

Bytes be32(uint32_t v) { return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)}; }

// NOP NOP TS(tsval, tsecr) NOP NOP SACK(blocks)
Bytes ts_and_sack(uint32_t tsval, uint32_t tsecr, std::vector<std::pair<uint32_t, uint32_t>> blocks) {
    Bytes o = {1, 1, 8, 10};
    for (uint32_t v : {tsval, tsecr})
        for (uint8_t b : be32(v)) o.push_back(b);
    if (blocks.empty()) return o;
    o.insert(o.end(), {1, 1, 5, uint8_t(2 + 8 * blocks.size())});
    for (auto [l, r] : blocks)
        for (uint32_t v : {l, r})
            for (uint8_t b : be32(v)) o.push_back(b);
    return o;
}

// NOP TS(tsval, tsecr): the timestamp at an odd offset of the header.
Bytes ts_odd(uint32_t tsval, uint32_t tsecr) {
    Bytes o = {1, 8, 10};
    for (uint32_t v : {tsval, tsecr})
        for (uint8_t b : be32(v)) o.push_back(b);
    return o;
}

class TcpSpliceTest : public DatapathTest, public ::testing::WithParamInterface<bool> {
protected:
    std::string config_yaml() const override { return kSpliceConfigYaml; }

    void SetUp() override {
        DatapathTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        config::Config c;
        c.rulesets.resize(1);
        c.rulesets[0].name = "rs";
        ASSERT_TRUE(write_punt_rulesets(env_->map_fd(SLUICE_MAP_PUNT_RULESETS), c));
        set_punt_stage(true);
    }

    bool v6() const { return GetParam(); }
    PacketBuilder from_client() const { return v6() ? lan_to_wan6() : lan_to_wan4(); }
    PacketBuilder from_client_out() const { return v6() ? lan_to_wan6_out() : lan_to_wan4_out(); }
    PacketBuilder from_server() const { return v6() ? wan_to_lan6() : wan_to_lan4(); }
    PacketBuilder from_server_out() const { return v6() ? wan_to_lan6_out() : wan_to_lan4_out(); }

    // Reads, changes and writes back one direction's entry.
    template <typename F>
    void edit_entry(bool reply, F change) {
        int fd = env_->map_fd(v6() ? SLUICE_MAP_SESSIONS_V6 : SLUICE_MAP_SESSIONS_V4);
        auto edit = [&](const auto& key) {
            auto v = lookup_session(fd, key);
            ASSERT_TRUE(v) << "no session entry";
            change(*v);
            ASSERT_EQ(bpf_map_update_elem(fd, &key, &*v, BPF_EXIST), 0);
        };
        if (v6()) {
            edit(reply ? session_key(kWanHost6, kLanHost6, 8080, kClientPort, proto::kTcp)
                       : session_key(kLanHost6, kWanHost6, kClientPort, 8080, proto::kTcp));
        } else {
            edit(reply ? session_key(kWanHost4, kLanHost4, 8080, kClientPort, proto::kTcp)
                       : session_key(kLanHost4, kWanHost4, kClientPort, 8080, proto::kTcp));
        }
    }

    std::optional<session_value> entry(bool reply) {
        int fd = env_->map_fd(v6() ? SLUICE_MAP_SESSIONS_V6 : SLUICE_MAP_SESSIONS_V4);
        if (v6())
            return lookup_session(fd, reply ? session_key(kWanHost6, kLanHost6, 8080, kClientPort, proto::kTcp)
                                              : session_key(kLanHost6, kWanHost6, kClientPort, 8080, proto::kTcp));
        return lookup_session(fd, reply ? session_key(kWanHost4, kLanHost4, 8080, kClientPort, proto::kTcp)
                                          : session_key(kLanHost4, kWanHost4, kClientPort, 8080, proto::kTcp));
    }

    // A punted connection, established (SYN, SYN-ACK, ACK through the stage).
    void open_punted() {
        Bytes syn = from_client().tcp(kClientPort, 8080).seq(1000).syn().build();
        run(syn, lan_if());
        Bytes synack = from_server().tcp(8080, kClientPort).seq(5000).ack_seq(1001).syn().ack().build();
        run(synack, wan_if());
        Bytes ack = from_client().tcp(kClientPort, 8080).seq(1001).ack_seq(5001).ack().build();
        run(ack, lan_if());
        auto s = entry(false);
        ASSERT_TRUE(s);
        ASSERT_TRUE(s->punt_flags & SESSION_PUNT_INSPECT);
        ASSERT_EQ(s->tcp_state, TCP_SESSION_ESTABLISHED);
    }

};

TEST_P(TcpSpliceTest, HoldDropsDataAndLetsPureAcksReachTheStage) {
    open_punted();
    edit_entry(false, [](session_value& v) { v.punt_flags |= SESSION_PUNT_HOLD; });
    edit_entry(true, [](session_value& v) { v.punt_flags |= SESSION_PUNT_HOLD; });
    snapshot_stats();
    Bytes data = from_client().tcp(kClientPort, 8080).seq(1001).ack_seq(5001).ack().psh().payload("more data").build();
    expect_fixture({"data while the stage drains", data, lan_if(), XDP_DROP, {}});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_INSPECT_HANDOFF_HOLD));
    Bytes fin = from_server().tcp(8080, kClientPort).seq(5001).ack_seq(1001).ack().fin().build();
    expect_fixture({"FIN while the stage drains", fin, wan_if(), XDP_DROP, {}});
    Bytes ack = from_server()
                    .tcp(8080, kClientPort)
                    .seq(5001)
                    .ack_seq(1001)
                    .ack()
                    .tcp_options(ts_and_sack(777777, 123, {}))
                    .build();
    auto r = run(ack, wan_if());
    EXPECT_EQ(r.retval, XDP_PASS) << "a pure ACK still goes to the stage";
    auto rev = entry(true);
    ASSERT_TRUE(rev);
    EXPECT_EQ(rev->splice.last_tsval, 777777u) << "the server's newest TSval, for the hand-off";
}

TEST_P(TcpSpliceTest, HoldYieldsToTheFailModeWhenTheStageIsDown) {
    open_punted();
    edit_entry(false, [](session_value& v) { v.punt_flags |= SESSION_PUNT_HOLD; });
    set_punt_stage(false);  // the stage died in the middle of a hand-off
    snapshot_stats();
    Bytes data = from_client().tcp(kClientPort, 8080).seq(1001).ack_seq(5001).ack().payload("x").build();
    expect_fixture({"data, hold set, stage down (fail-closed ruleset)", data, lan_if(), XDP_DROP, {}});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_INSPECT_FAIL_CLOSED));
}

TEST_P(TcpSpliceTest, SplicedSegmentsAreRenumberedForTheirReceiver) {
    open_punted();
    // As the stage writes them (inspect/tcp_handoff.cpp splice_between).
    edit_entry(false, [](session_value& v) {
        v.punt_flags = SESSION_PUNT_SPLICED;
        v.splice.seq_delta = 0x10000000;
        v.splice.ack_delta = 0u - 5;
        v.splice.tsval_delta = 1000;
        v.splice.tsecr_delta = 0u - 2000;
        v.splice.window_shift = -2;
    });
    edit_entry(true, [](session_value& v) {
        v.punt_flags = SESSION_PUNT_SPLICED;
        v.splice.seq_delta = 5;
        v.splice.ack_delta = 0u - 0x10000000;
        v.splice.tsval_delta = 2000;
        v.splice.tsecr_delta = 0u - 1000;
        v.splice.window_shift = 3;
    });
    snapshot_stats();

    // Client → server: timestamps and a SACK block at even offsets; the
    // sequence number wraps.
    auto c2s = [&](PacketBuilder b, uint32_t seq, uint32_t ack, uint16_t win, Bytes opts) {
        return b.tcp(kClientPort, 8080).seq(seq).ack_seq(ack).ack().psh().window(win).tcp_options(opts)
            .payload("after inspect-bytes").build();
    };
    expect_fixture({"client data, renumbered", c2s(from_client(), 0xf0000100, 7000, 4003,
                                                   ts_and_sack(100000, 5000, {{3000, 4000}, {0xfffffffe, 2}})),
                    lan_if(), XDP_REDIRECT,
                    c2s(from_client_out(), 0x00000100, 6995, 1000,
                        ts_and_sack(101000, 3000, {{2995, 3995}, {0xfffffff9, 0xfffffffd}}))});

    // Server → client: the timestamp at an odd offset; the window saturates.
    auto s2c = [&](PacketBuilder b, uint32_t seq, uint32_t ack, uint16_t win, Bytes opts) {
        return b.tcp(8080, kClientPort).seq(seq).ack_seq(ack).ack().window(win).tcp_options(opts)
            .payload_pattern(333).build();
    };
    expect_fixture({"server data, renumbered", s2c(from_server(), 9000, 0x10000200, 20000, ts_odd(424242, 101000)),
                    wan_if(), XDP_REDIRECT, s2c(from_server_out(), 9005, 0x200, 65535, ts_odd(426242, 100000))});
    EXPECT_EQ(stat_change(STAT_TCP_SPLICED), 2);
    EXPECT_EQ(stat_change(STAT_PUNT_INSPECT), 0) << "the stage sees nothing of a spliced flow";
    auto fwd = entry(false);
    ASSERT_TRUE(fwd);
    EXPECT_EQ(fwd->packets, 3u) << "SYN, ACK and the spliced segment";
}

TEST_P(TcpSpliceTest, ResetWithoutAckKeepsItsAckFieldAndIsRenumbered) {
    open_punted();
    edit_entry(false, [](session_value& v) {
        v.punt_flags = SESSION_PUNT_SPLICED;
        v.splice.seq_delta = 77;
        v.splice.ack_delta = 99;
    });
    Bytes rst = from_client().tcp(kClientPort, 8080).seq(2000).ack_seq(1234).rst().build();
    Bytes out = from_client_out().tcp(kClientPort, 8080).seq(2077).ack_seq(1234).rst().build();
    expect_fixture({"RST without ACK", rst, lan_if(), XDP_REDIRECT, out});
}

INSTANTIATE_TEST_SUITE_P(Families, TcpSpliceTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "IPv6" : "IPv4"; });

}  // namespace
}  // namespace sluice::test
