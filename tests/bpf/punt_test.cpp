// The punt path in XDP: a flow an `inspect` policy admits is handed to the
// kernel (XDP_PASS) with a punt_meta in front (or, on a kernel that refuses
// bpf_xdp_adjust_meta, in this CPU's tc_handoff slot), in both directions; with the
// stage down (or overloaded, for new flows) its ruleset's fail-mode decides:
// closed drops, open un-punts the flow for good and forwards it; a verdict the
// stage wrote drops what is still in flight. The controller's side is played
// here by writing punt_cfg and punt_rulesets (loader/punt_tables) directly.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>

#include "datapath_env.h"
#include "loader/datapath.h"
#include "loader/map_io.h"
#include "loader/punt_tables.h"

extern "C" {
#include "punt.h"
}

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 40000;

const char* const kPuntConfigYaml = R"yaml(
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
zones:
  trust: {}
  untrust: {}
applications:
  web: { protocol: tcp, destination-port: [8080] }
  dns: { protocol: udp, destination-port: [5353] }
  http: { protocol: tcp, destination-port: [80] }
  soft: { protocol: tcp, destination-port: [8443] }
policies:
  - { name: inspected, from: trust, to: untrust, application: [web, dns], action: { inspect: strict } }
  - { name: inspected-open, from: trust, to: untrust, application: [soft], action: { inspect: lenient } }
  - { name: plain, from: trust, to: untrust, application: [http], action: permit }
inspect:
  rulesets:
    strict:
      patterns: [{ name: p, regex: 'x', action: reject }]
    lenient:
      fail-mode: open
      patterns: [{ name: p, regex: 'x', action: reject }]
default-action: deny
)yaml";

class PuntTest : public DatapathTest {
protected:
    std::string config_yaml() const override { return kPuntConfigYaml; }

    void SetUp() override {
        DatapathTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        config::Config c;
        c.rulesets.resize(2);
        c.rulesets[0].name = "strict";
        c.rulesets[1].name = "lenient";
        c.rulesets[1].fail_closed = false;
        ASSERT_TRUE(write_punt_rulesets(env_->map_fd(SLUICE_MAP_PUNT_RULESETS), c));
        set_punt_stage(true, false);
    }

    punt_ruleset_stats ruleset_stats(uint16_t id) {
        punt_ruleset_stats s{};
        auto words = read_percpu_words(env_->map_fd(SLUICE_MAP_PUNT_STATS), id, sizeof(s) / 8);
        EXPECT_TRUE(words) << (words ? "" : words.error().message);
        if (words) std::memcpy(&s, words->data(), sizeof(s));
        return s;
    }

    // What a punted packet looks like leaving XDP: punt_meta, then the frame untouched.
    static Bytes punted(const Bytes& frame, uint16_t ruleset_id, bool reply) {
        punt_meta meta{};
        meta.magic = PUNT_META_MAGIC;
        meta.ruleset_id = ruleset_id;
        meta.reply = reply;
        // One allocation, then two copies (GCC 12's -Warray-bounds misreads
        // an insert after a fixed-size start at -O3).
        Bytes out(sizeof(meta) + frame.size());
        std::memcpy(out.data(), &meta, sizeof(meta));
        std::copy(frame.begin(), frame.end(), out.begin() + sizeof(meta));
        return out;
    }

    // The records in tc_handoff (one per CPU that holds one), all cleared.
    std::vector<tc_handoff> take_handoffs() {
        const int cpus = libbpf_num_possible_cpus();
        const size_t stride = (sizeof(tc_handoff) + 7) / 8 * 8;
        std::vector<uint8_t> values(stride * static_cast<size_t>(cpus > 0 ? cpus : 1));
        const uint32_t key = 0;
        const int fd = env_->map_fd("tc_handoff");
        std::vector<tc_handoff> found;
        if (bpf_map_lookup_elem(fd, &key, values.data()) != 0) {
            ADD_FAILURE() << "cannot read tc_handoff: " << std::strerror(errno);
            return found;
        }
        for (size_t off = 0; off < values.size(); off += stride) {
            tc_handoff h{};
            std::memcpy(&h, values.data() + off, sizeof(h));
            if (h.punt.magic) found.push_back(h);
        }
        std::fill(values.begin(), values.end(), 0);
        EXPECT_EQ(bpf_map_update_elem(fd, &key, values.data(), BPF_ANY), 0);
        return found;
    }

    // A packet the pipeline must punt: XDP_PASS, the frame untouched, and
    // its record where tc_punt_prog looks for it: in front of the frame, or
    // (the kernel refuses bpf_xdp_adjust_meta to XDP) in the tc_handoff slot,
    // tagged with the ingress interface and the frame's length.
    void expect_punted(const std::string& what, const Bytes& frame, uint32_t ifindex, uint16_t ruleset_id,
                       bool reply) {
        if (env_->datapath().xdp_handoff_in_meta() && hook() == Hook::xdp) {
            expect_fixture({what, frame, ifindex, XDP_PASS, punted(frame, ruleset_id, reply)});
            return;
        }
        expect_fixture({what, frame, ifindex, XDP_PASS, frame});
        auto records = take_handoffs();
        ASSERT_EQ(records.size(), 1u) << what << ": one hand-off record in tc_handoff";
        EXPECT_EQ(records[0].punt.magic, PUNT_META_MAGIC) << what;
        EXPECT_EQ(records[0].punt.ruleset_id, ruleset_id) << what;
        EXPECT_EQ(records[0].punt.reply, reply ? 1 : 0) << what;
        EXPECT_EQ(records[0].ifindex, ifindex) << what;
        EXPECT_EQ(records[0].len, frame.size()) << what;
    }

    void write_verdict4(uint16_t sport, uint16_t dport, uint8_t verdict) {
        auto key = session_key(kLanHost4, kWanHost4, sport, dport, proto::kTcp);
        auto v = session4(kLanHost4, kWanHost4, sport, dport, proto::kTcp);
        ASSERT_TRUE(v);
        v->verdict = verdict;
        v->tcp_state = TCP_SESSION_CLOSED;  // as the stage writes it (inspect/session_link.cpp)
        ASSERT_EQ(bpf_map_update_elem(env_->map_fd(SLUICE_MAP_SESSIONS_V4), &key, &*v, BPF_EXIST), 0);
    }
};

TEST_F(PuntTest, InspectedTcp4SynIsPuntedWithMetadataAndSession) {
    Bytes syn = lan_to_wan4().tcp(kClientPort, 8080).seq(1000).syn().build();
    expect_punted("IPv4 SYN to an inspected service", syn, lan_if(), 1, false);
    auto fwd = session4(kLanHost4, kWanHost4, kClientPort, 8080, proto::kTcp);
    auto rev = session4(kWanHost4, kLanHost4, 8080, kClientPort, proto::kTcp);
    ASSERT_TRUE(fwd && rev);
    EXPECT_TRUE(fwd->punt_flags & SESSION_PUNT_INSPECT);
    EXPECT_TRUE(rev->punt_flags & SESSION_PUNT_INSPECT);
    EXPECT_EQ(fwd->ruleset_id, 1);
    EXPECT_EQ(stat_change(STAT_PUNT_INSPECT), 1);
    EXPECT_EQ(stat_change(STAT_FORWARD), 0);
    EXPECT_EQ(ruleset_stats(1).punted_packets, 1u);
    EXPECT_EQ(ruleset_stats(1).punted_bytes, syn.size() - 14);
}

TEST_F(PuntTest, BothDirectionsOfAnInspectedFlowArePunted) {
    Bytes syn = lan_to_wan6().tcp(kClientPort, 8080).seq(1000).syn().build();
    expect_punted("IPv6 SYN", syn, lan_if(), 1, false);
    Bytes synack = wan_to_lan6().tcp(8080, kClientPort).seq(5000).ack_seq(1001).syn().ack().build();
    expect_punted("IPv6 SYN-ACK from the server", synack, wan_if(), 1, true);
    // The client's ACK may reach the firewall before the server's SYN-ACK (the
    // stage answers the client itself): punted, not refused as out of state.
    Bytes data = lan_to_wan6().tcp(kClientPort, 8080).seq(1001).ack_seq(1).ack().psh().payload("GET /").build();
    expect_punted("IPv6 data", data, lan_if(), 1, false);
    EXPECT_EQ(stat_change(STAT_PUNT_INSPECT), 3);
    EXPECT_EQ(stat_change(STAT_DROP_TCP_INVALID), 0);
}

TEST_F(PuntTest, ClientAckBeforeServerSynAckIsPunted) {
    Bytes syn = lan_to_wan4().tcp(kClientPort, 8080).seq(1000).syn().build();
    expect_punted("SYN", syn, lan_if(), 1, false);
    Bytes ack = lan_to_wan4().tcp(kClientPort, 8080).seq(1001).ack_seq(77).ack().build();
    expect_punted("ACK to the stage's SYN-ACK", ack, lan_if(), 1, false);
    auto fwd = session4(kLanHost4, kWanHost4, kClientPort, 8080, proto::kTcp);
    ASSERT_TRUE(fwd);
    EXPECT_EQ(fwd->tcp_state, TCP_SESSION_ESTABLISHED);
}

TEST_F(PuntTest, InspectedUdp4IsPunted) {
    Bytes q = lan_to_wan4().udp(kClientPort, 5353).payload("query").build();
    expect_punted("UDP to an inspected service", q, lan_if(), 1, false);
    Bytes a = wan_to_lan4().udp(5353, kClientPort).payload("answer").build();
    expect_punted("its answer", a, wan_if(), 1, true);
}

TEST_F(PuntTest, PermittedFlowIsNeverPunted) {
    auto syn = [](PacketBuilder b) { return b.tcp(kClientPort, 80).seq(1000).syn().build(); };
    expect_fixture({"SYN to a permitted service", syn(lan_to_wan4()), lan_if(), XDP_REDIRECT, syn(lan_to_wan4_out())});
    EXPECT_EQ(stat_change(STAT_PUNT_INSPECT), 0);
    auto fwd = session4(kLanHost4, kWanHost4, kClientPort, 80, proto::kTcp);
    ASSERT_TRUE(fwd);
    EXPECT_EQ(fwd->punt_flags, 0);
}

TEST_F(PuntTest, StageDownFailClosedDropsAndCounts) {
    set_punt_stage(false, false);
    Bytes syn = lan_to_wan4().tcp(kClientPort, 8080).seq(1000).syn().build();
    expect_fixture({"SYN while the stage is down", syn, lan_if(), XDP_DROP, {}});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_INSPECT_FAIL_CLOSED));
    EXPECT_EQ(ruleset_stats(1).fail_closed_packets, 1u);
    // The session stays punted: when the stage is back, the retransmitted SYN reaches it.
    auto fwd = session4(kLanHost4, kWanHost4, kClientPort, 8080, proto::kTcp);
    ASSERT_TRUE(fwd);
    EXPECT_TRUE(fwd->punt_flags & SESSION_PUNT_INSPECT);
    set_punt_stage(true, false);
    expect_punted("retransmitted SYN, stage up", syn, lan_if(), 1, false);
}

TEST_F(PuntTest, StageDownFailOpenForwardsAndReleasesTheFlow) {
    set_punt_stage(false, false);
    auto syn = [](PacketBuilder b) { return b.tcp(kClientPort, 8443).seq(1000).syn().build(); };
    expect_fixture({"SYN, stage down, fail-open", syn(lan_to_wan4()), lan_if(), XDP_REDIRECT, syn(lan_to_wan4_out())});
    EXPECT_EQ(stat_change(STAT_INSPECT_FAIL_OPEN), 1);
    EXPECT_EQ(ruleset_stats(2).fail_open_packets, 1u);
    auto fwd = session4(kLanHost4, kWanHost4, kClientPort, 8443, proto::kTcp);
    auto rev = session4(kWanHost4, kLanHost4, 8443, kClientPort, proto::kTcp);
    ASSERT_TRUE(fwd && rev);
    EXPECT_EQ(fwd->punt_flags, 0);
    EXPECT_EQ(rev->punt_flags, 0);
    // Released for good: with the stage back, the flow stays on the fast path.
    set_punt_stage(true, false);
    auto synack = [](PacketBuilder b) { return b.tcp(8443, kClientPort).seq(5000).ack_seq(1001).syn().ack().build(); };
    expect_fixture({"SYN-ACK after the stage is back", synack(wan_to_lan4()), wan_if(), XDP_REDIRECT,
                    synack(wan_to_lan4_out())});
    EXPECT_EQ(stat_change(STAT_PUNT_INSPECT), 0);
}

TEST_F(PuntTest, OverloadTurnsAwayNewFlowsOnly) {
    Bytes syn1 = lan_to_wan4().tcp(kClientPort, 8080).seq(1000).syn().build();
    expect_punted("first flow", syn1, lan_if(), 1, false);
    set_punt_stage(true, true);
    Bytes data1 = lan_to_wan4().tcp(kClientPort, 8080).seq(1001).ack_seq(1).ack().payload("more").build();
    expect_punted("the open flow goes on", data1, lan_if(), 1, false);
    Bytes syn2 = lan_to_wan4().tcp(kClientPort + 1, 8080).seq(1000).syn().build();
    expect_fixture({"a new flow gets the fail-mode (closed)", syn2, lan_if(), XDP_DROP, {}});
    EXPECT_EQ(stat_change(STAT_DROP_INSPECT_FAIL_CLOSED), 1);
}

TEST_F(PuntTest, StageVerdictDropsPacketsInFlight) {
    Bytes syn = lan_to_wan4().tcp(kClientPort, 8080).seq(1000).syn().build();
    expect_punted("SYN", syn, lan_if(), 1, false);
    write_verdict4(kClientPort, 8080, SESSION_VERDICT_RESET);
    Bytes data = lan_to_wan4().tcp(kClientPort, 8080).seq(1001).ack_seq(1).ack().payload("flag").build();
    snapshot_stats();
    expect_fixture({"data after a reject verdict", data, lan_if(), XDP_DROP, {}});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_SESSION_VERDICT));
    EXPECT_EQ(ruleset_stats(1).verdict_packets, 1u);
}

TEST_F(PuntTest, NewSynAfterAVerdictIsANewFlow) {
    Bytes syn = lan_to_wan4().tcp(kClientPort, 8080).seq(1000).syn().build();
    expect_punted("SYN", syn, lan_if(), 1, false);
    write_verdict4(kClientPort, 8080, SESSION_VERDICT_RESET);
    Bytes ack = lan_to_wan4().tcp(kClientPort, 8080).seq(1001).ack_seq(1).ack().build();
    expect_fixture({"a late ACK of the reset connection", ack, lan_if(), XDP_DROP, {}});
    Bytes again = lan_to_wan4().tcp(kClientPort, 8080).seq(90000).syn().build();
    expect_punted("a new SYN from the same port", again, lan_if(), 1, false);
    auto fwd = session4(kLanHost4, kWanHost4, kClientPort, 8080, proto::kTcp);
    ASSERT_TRUE(fwd);
    EXPECT_EQ(fwd->verdict, SESSION_VERDICT_PASS);
    EXPECT_EQ(fwd->tcp_state, TCP_SESSION_SYN_SENT);
}

TEST_F(PuntTest, RulesetGoneFromConfigFailsClosed) {
    Bytes syn = lan_to_wan4().tcp(kClientPort, 8443).seq(1000).syn().build();
    expect_punted("SYN (lenient ruleset)", syn, lan_if(), 2, false);
    // A reload that drops the ruleset: its flows fail closed even though it was open.
    config::Config c;
    c.rulesets.resize(1);
    c.rulesets[0].name = "strict";
    ASSERT_TRUE(write_punt_rulesets(env_->map_fd(SLUICE_MAP_PUNT_RULESETS), c));
    set_punt_stage(false, false);
    expect_fixture({"retransmitted SYN, stage down", syn, lan_if(), XDP_DROP, {}});
    EXPECT_EQ(ruleset_stats(2).fail_closed_packets, 1u);
}

}  // namespace
}  // namespace sluice::test
