// The standby's side of session sync (ha/sync_apply.h) on real maps: a
// synced flow is written as both entries the active node had, with its NAT
// port reserved, and carries the server's next packet; a delete removes
// both entries and the port; a reused tuple replaces the older flow; a
// record this node's config cannot hold is refused with nothing written.
#include "ha_env.h"
#include "ha/sync_apply.h"
#include "loader/nat_reservations.h"

namespace sluice::test {
namespace {

class HaSyncApplyTest : public HaFlowTest {
protected:
    ha::SyncApplier applier() {
        return ha::SyncApplier({fd4(), fd6(), env_->map_fd(SLUICE_MAP_NAT_PORTS)}, 2);  // trust, untrust
    }

    // The flow's NAT reservation as nat_ports holds it.
    std::optional<nat_port_value> port_of(const SessionEntry& initiator) {
        auto k = held_reservation(initiator);
        EXPECT_TRUE(k) << "not an entry that holds a port";
        nat_port_value v{};
        if (!k || bpf_map_lookup_elem(env_->map_fd(SLUICE_MAP_NAT_PORTS), &*k, &v) != 0) return std::nullopt;
        return v;
    }

    // The flow made by the datapath, then forgotten: entries and port gone.
    // Its record is read at `now_`, which the tests apply it at too (as if
    // it reached the peer at once: ages are what the wire carries).
    std::pair<MadeFlow, ha::FlowRecord> made_and_forgotten(L4Kind kind, bool v6, uint16_t cport = 42000) {
        MadeFlow f = make_flow(kind, v6, true, cport);
        now_ = coarse_now_ns();
        auto record = ha::record_of(f.initiator, f.reply, now_);
        EXPECT_TRUE(record);
        auto port = port_of(f.initiator);
        EXPECT_TRUE(port) << "the datapath reserved the flow's port";
        if (port) record->nat_rule_id = port->rule_id;
        ha::SyncApplier a = applier();
        EXPECT_TRUE(a.remove(record->key));
        EXPECT_EQ(a.counters().deletes_done, 1u);
        EXPECT_EQ(count_entries(fd4()) + count_entries(fd6()), 0u);
        EXPECT_FALSE(port_of(f.initiator)) << "remove released the port";
        return {f, *record};
    }

    uint64_t now_ = 0;
};

}  // namespace

TEST_F(HaSyncApplyTest, ASyncedNatFlowIsTheFlowTheActiveNodeHad) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    for (bool v6 : {false, true})
        for (L4Kind kind : {L4Kind::tcp, L4Kind::udp, L4Kind::echo}) {
            SCOPED_TRACE(std::string(l4_name(kind)) + (v6 ? " IPv6" : " IPv4"));
            auto [f, record] = made_and_forgotten(kind, v6);
            ha::SyncApplier a = applier();
            ASSERT_TRUE(a.apply(record, now_, config_generation()));
            EXPECT_EQ(a.counters().flows_written, 1u);
            auto [initiator, reply] = flow_entries(f.client_port);
            EXPECT_TRUE(same_entry(f.initiator, initiator));
            EXPECT_TRUE(same_entry(f.reply, reply));
            auto port = port_of(initiator);
            ASSERT_TRUE(port) << "the standby holds the flow's NAT port";
            EXPECT_EQ(std::memcmp(port->inside_addr, f.initiator.src_addr, 16), 0);
            EXPECT_EQ(port->inside_port, f.initiator.src_port);
            expect_answer_forwarded(f);
            // Applying the same record again (an update) changes nothing.
            ASSERT_TRUE(a.apply(record, now_, config_generation()));
            EXPECT_EQ(a.counters().flows_replaced, 0u);
            EXPECT_EQ(count_entries(v6 ? fd6() : fd4()), 2u);
            clear_sessions();
        }
}

TEST_F(HaSyncApplyTest, DeletesRemoveBothEntriesAndThePort) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    MadeFlow f = make_flow(L4Kind::udp, false, true);
    ASSERT_TRUE(port_of(f.initiator));
    ha::SyncApplier a = applier();
    ASSERT_TRUE(a.remove(ha::key_of(f.initiator)));
    EXPECT_EQ(a.counters().deletes_done, 1u);
    EXPECT_EQ(count_entries(fd4()), 0u);
    EXPECT_FALSE(port_of(f.initiator));
    ASSERT_TRUE(a.remove(ha::key_of(f.initiator)));
    EXPECT_EQ(a.counters().deletes_unknown, 1u);
    // Deleting by the reply entry's tuple removes the flow too.
    MadeFlow g = make_flow(L4Kind::tcp, true, true);
    ASSERT_TRUE(a.remove(ha::key_of(g.reply)));
    EXPECT_EQ(count_entries(fd6()), 0u);
    EXPECT_FALSE(port_of(g.initiator));
}

TEST_F(HaSyncApplyTest, AReusedTupleReplacesTheOlderFlowAndItsPort) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    auto [f, record] = made_and_forgotten(L4Kind::udp, false);
    ha::SyncApplier a = applier();
    ASSERT_TRUE(a.apply(record, now_, config_generation()));
    ha::FlowRecord moved = record;
    moved.nat_src_port = static_cast<uint16_t>(record.nat_src_port + 1);
    ASSERT_TRUE(a.apply(moved, now_, config_generation()));
    EXPECT_EQ(a.counters().flows_replaced, 1u);
    EXPECT_EQ(count_entries(fd4()), 2u) << "the old flow's reply entry is gone";
    EXPECT_FALSE(port_of(f.initiator)) << "the old port is released";
    auto [initiator, reply] = flow_entries(f.client_port);
    EXPECT_EQ(ntohs(initiator.value.nat.new_src_port), moved.nat_src_port);
    EXPECT_TRUE(port_of(initiator));
}

TEST_F(HaSyncApplyTest, AZoneThisConfigDoesNotHaveIsRefusedAndNothingWritten) {
    ASSERT_TRUE(apply_nat(kLanOutInterfaceYaml));
    auto [f, record] = made_and_forgotten(L4Kind::tcp, false);
    record.zone_out = 7;
    ha::SyncApplier a = applier();
    auto s = a.apply(record, now_, config_generation());
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("zone 7"), std::string::npos) << s.error().message;
    EXPECT_EQ(a.counters().flows_refused, 1u);
    EXPECT_EQ(count_entries(fd4()), 0u);
}

}  // namespace sluice::test
