// The active node's side of session sync (ha/sync_source.h) on real maps:
// the datapath's events name each changed flow; read now, each flow becomes
// one record equal to its entries' (with its NAT port's rule); a flow gone
// since its event becomes a delete; a bulk read holds every movable flow;
// flows the inspection stage holds are counted, not sent.
#include "ha_env.h"
#include "ha/sync_source.h"

namespace sluice::test {
namespace {

class HaSyncSourceTest : public HaFlowTest {
protected:
    void SetUp() override {
        HaFlowTest::SetUp();
        if (IsSkipped()) return;
        set_ha_sync(env_->map_fd(SLUICE_MAP_RUNTIME_CONFIG), true);
        drain_ha_events(env_->map_fd(SLUICE_MAP_HA_EVENTS));
    }
    ha::SessionMaps maps() const { return {fd4(), fd6(), env_->map_fd(SLUICE_MAP_NAT_PORTS)}; }

    ha::ChangedKeys pending() {
        ha::ChangedKeys keys;
        for (const ha_event& e : drain_ha_events(env_->map_fd(SLUICE_MAP_HA_EVENTS))) keys.add(e);
        return keys;
    }
};

}  // namespace

TEST_F(HaSyncSourceTest, EachChangedFlowIsOneRecordAsItIsNow) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    MadeFlow tcp = make_flow(L4Kind::tcp, false, true, 42001);  // SYN and SYN-ACK: two events, two keys
    MadeFlow udp = make_flow(L4Kind::udp, true, true, 42002);
    ha::ChangedKeys keys = pending();
    EXPECT_EQ(keys.size(), 3u) << "TCP: its initiator and reply tuples; UDP: its initiator";
    const ha::Changes c = ha::read_changes(maps(), keys.take(), coarse_now_ns());
    EXPECT_TRUE(keys.empty());
    ASSERT_EQ(c.flows.size(), 2u) << "one record per flow";
    EXPECT_TRUE(c.deletes.empty());
    EXPECT_EQ(c.unmovable, 0u);
    for (const auto& [made, record] : {std::pair{&tcp, &c.flows[0]}, std::pair{&udp, &c.flows[1]}}) {
        auto want = ha::record_of(made->initiator, made->reply, coarse_now_ns());
        ASSERT_TRUE(want);
        EXPECT_EQ(record->key, want->key);
        EXPECT_EQ(record->tcp_state, made->initiator.value.tcp_state);
        EXPECT_EQ(record->nat_src_port, want->nat_src_port);
        EXPECT_EQ(record->packets, want->packets);
        EXPECT_EQ(record->reply_packets, 1u);
    }
    EXPECT_EQ(c.flows[0].tcp_state, TCP_SESSION_SYN_RECV);

    // The flow goes before its keys are read: a delete per key, which the
    // peer resolves to the flow whichever tuple it gets.
    clear_sessions();
    const ha::Changes gone = ha::read_changes(maps(), {ha::key_of(tcp.initiator), ha::key_of(tcp.reply)}, coarse_now_ns());
    EXPECT_TRUE(gone.flows.empty());
    EXPECT_EQ(gone.deletes.size(), 2u);
}

TEST_F(HaSyncSourceTest, ABulkReadHoldsEveryMovableFlow) {
    make_flow(L4Kind::tcp, false, false, 42010);
    make_flow(L4Kind::udp, false, false, 42011);
    MadeFlow held = make_flow(L4Kind::tcp, true, false, 42012);
    // As if the inspection stage relayed it.
    SessionEntry e = held.initiator;
    e.value.punt_flags = SESSION_PUNT_INSPECT;
    ASSERT_TRUE(update_session_entry(fd4(), fd6(), e));
    auto all = ha::read_all(maps(), coarse_now_ns());
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all.value().flows.size(), 2u);
    EXPECT_EQ(all.value().unmovable, 1u);
}

TEST(HaSyncPack, MessagesStayWithinOneDatagram) {
    ha::Changes c;
    c.flows.resize(20);
    for (auto& f : c.flows) f.key.family = SLUICE_FAMILY_IPV4, f.zone_in = f.zone_out = 1;
    c.deletes.resize(100);
    for (auto& k : c.deletes) k.family = SLUICE_FAMILY_IPV6;
    const auto messages = ha::pack(c);
    size_t flows = 0, deletes = 0;
    for (const auto& m : messages) {
        EXPECT_LE(ha::encode(m).size(), ha::kMaxDatagram);
        flows += m.flows.size();
        deletes += m.deletes.size();
    }
    EXPECT_EQ(flows, 20u);
    EXPECT_EQ(deletes, 100u);
    EXPECT_EQ(messages.size(), (20 + ha::kFlowsPerDatagram - 1) / ha::kFlowsPerDatagram +
                                   (100 + ha::kDeletesPerDatagram - 1) / ha::kDeletesPerDatagram);
}

}  // namespace sluice::test
