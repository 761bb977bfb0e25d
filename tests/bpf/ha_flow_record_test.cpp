// A flow synced to the peer is the flow the datapath made: for TCP, UDP and
// echo, IPv4 and IPv6, without and with source NAT, the datapath creates a
// flow; its two entries become a FlowRecord, go through the wire encoding,
// and come back as two entries (ha/flow_record.h) that must equal the
// datapath's own. Then the rebuilt entries replace the originals in the maps,
// as on a standby that takes over, and the server's next packet is forwarded
// exactly as before.
#include "ha_env.h"

namespace sluice::test {
namespace {

class HaFlowRecordTest : public HaFlowTest {
protected:
    void check_round_trip(L4Kind kind, bool v6, bool nat) {
        SCOPED_TRACE(std::string(l4_name(kind)) + (v6 ? " IPv6" : " IPv4") + (nat ? " source NAT" : ""));
        const MadeFlow f = make_flow(kind, v6, nat);
        const uint64_t now = coarse_now_ns();
        auto record = ha::record_of(f.initiator, f.reply, now);
        ASSERT_TRUE(record);
        EXPECT_FALSE(ha::record_of(f.reply, f.initiator, now)) << "a reply entry is not a flow's record";
        ha::Message m;
        m.header.type = ha::MessageType::sessions;
        m.flows = {*record};
        const auto bytes = ha::encode(m);
        const ha::Decoded d = ha::decode(bytes.data(), bytes.size());
        ASSERT_TRUE(d.ok) << d.detail;
        const ha::FlowEntries rebuilt = ha::entries_of(d.message.flows.at(0), now, config_generation());
        EXPECT_TRUE(same_entry(f.initiator, rebuilt.initiator)) << "initiator";
        EXPECT_TRUE(same_entry(f.reply, rebuilt.reply)) << "reply";
        EXPECT_EQ(rebuilt.initiator.value.fib.generation, 0u) << "the route is looked up again where it is used";

        // As on a standby taking over: the rebuilt entries in the maps.
        clear_sessions();
        for (const SessionEntry* e : {&rebuilt.initiator, &rebuilt.reply})
            ASSERT_TRUE(write_session_entry(fd4(), fd6(), *e));
        expect_answer_forwarded(f);
        clear_sessions();
    }
};

}  // namespace

TEST_F(HaFlowRecordTest, EveryKindOfFlowRebuildsExactly) {
    for (bool v6 : {false, true})
        for (L4Kind kind : {L4Kind::tcp, L4Kind::udp, L4Kind::echo}) check_round_trip(kind, v6, false);
}

TEST_F(HaFlowRecordTest, SourceNatFlowsRebuildExactly) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    for (bool v6 : {false, true})
        for (L4Kind kind : {L4Kind::tcp, L4Kind::udp, L4Kind::echo}) check_round_trip(kind, v6, true);
}

TEST(HaFlowRecord, FlowsThatCannotMoveSayWhy) {
    session_value v{};
    EXPECT_EQ(ha::unmovable_reason(v), "");
    v.punt_flags = SESSION_PUNT_INSPECT;
    EXPECT_NE(ha::unmovable_reason(v).find("inspection"), std::string::npos);
    v.punt_flags = SESSION_PUNT_SPLICED;
    EXPECT_NE(ha::unmovable_reason(v).find("spliced"), std::string::npos);
    v.punt_flags = SESSION_PUNT_SYNPROXY;
    EXPECT_NE(ha::unmovable_reason(v).find("SYN proxy"), std::string::npos);
}

}  // namespace sluice::test
