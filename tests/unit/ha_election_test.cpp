// Who carries a group: the rules of docs/ha.md "Roles", each from both
// nodes' side, so the two always agree on one active node.
#include <gtest/gtest.h>

#include "ha/election.h"

using namespace sluice::ha;

namespace {

GroupInput node(uint8_t id, uint8_t prio, Role current) {
    GroupInput in;
    in.node_id = id;
    in.priority = prio;
    in.current = current;
    in.waited = true;
    in.synced = true;
    return in;
}

void sees(GroupInput& in, uint8_t id, uint8_t prio, bool active, bool releasing = false) {
    in.peer = {true, prio, active, releasing, id};
}

// Both nodes' next role, from each one's view of the other.
std::pair<Role, Role> step(GroupInput a, GroupInput b) {
    sees(a, b.node_id, b.priority, b.current == Role::active, b.releasing);
    sees(b, a.node_id, a.priority, a.current == Role::active, a.releasing);
    return {decide(a).role, decide(b).role};
}

}  // namespace

TEST(HaElection, AloneWaitsOneHoldTimeThenTakesOver) {
    GroupInput in = node(1, 100, Role::init);
    in.waited = false;
    EXPECT_EQ(decide(in).role, Role::init);
    in.waited = true;
    EXPECT_EQ(decide(in).role, Role::active);
}

TEST(HaElection, SilentPeerMeansTakeover) {
    GroupInput in = node(2, 100, Role::standby);
    EXPECT_EQ(decide(in).role, Role::active);
    EXPECT_NE(decide(in).why.find("silent"), std::string::npos);
}

TEST(HaElection, TwoStartingNodesAgreeOnTheHigherPriority) {
    auto [a, b] = step(node(1, 100, Role::init), node(2, 200, Role::init));
    EXPECT_EQ(a, Role::standby);
    EXPECT_EQ(b, Role::active);
}

TEST(HaElection, EqualPrioritiesGoToTheLowerNodeId) {
    auto [a, b] = step(node(1, 100, Role::init), node(2, 100, Role::init));
    EXPECT_EQ(a, Role::active);
    EXPECT_EQ(b, Role::standby);
}

TEST(HaElection, BothActiveResolvesToOne) {
    // After a fabric and data-link partition heals.
    auto [a, b] = step(node(1, 100, Role::active), node(2, 200, Role::active));
    EXPECT_EQ(a, Role::standby);
    EXPECT_EQ(b, Role::active);
}

TEST(HaElection, WithoutPreemptTheActiveKeepsTheGroup) {
    auto [a, b] = step(node(1, 200, Role::standby), node(2, 100, Role::active));
    EXPECT_EQ(a, Role::standby);
    EXPECT_EQ(b, Role::active);
}

TEST(HaElection, PreemptTakesBackOnlyOnceSynced) {
    GroupInput a = node(1, 200, Role::standby);
    a.preempt = true;
    a.synced = false;
    GroupInput b = node(2, 100, Role::active);
    b.preempt = true;
    auto [ra, rb] = step(a, b);
    EXPECT_EQ(ra, Role::standby);
    EXPECT_EQ(rb, Role::active);
    a.synced = true;
    std::tie(ra, rb) = step(a, b);
    EXPECT_EQ(ra, Role::active);
    // One heartbeat later b sees a active: it yields.
    a.current = Role::active;
    std::tie(ra, rb) = step(a, b);
    EXPECT_EQ(ra, Role::active);
    EXPECT_EQ(rb, Role::standby);
}

TEST(HaElection, MonitoredLinkDownHandsTheGroupOver) {
    auto [a, b] = step(node(1, 0, Role::active), node(2, 100, Role::standby));
    EXPECT_EQ(a, Role::standby);
    EXPECT_EQ(b, Role::active);
    // Alone with the link down: not active.
    GroupInput lonely = node(1, 0, Role::active);
    EXPECT_EQ(decide(lonely).role, Role::standby);
}

TEST(HaElection, PlannedFailoverKeepsForwardingUntilThePeerTakesOver) {
    GroupInput a = node(1, 200, Role::active);
    a.releasing = true;
    GroupInput b = node(2, 100, Role::standby);
    auto [ra, rb] = step(a, b);
    EXPECT_EQ(ra, Role::active);  // until b says it is active
    EXPECT_EQ(rb, Role::active);
    b.current = Role::active;
    std::tie(ra, rb) = step(a, b);
    EXPECT_EQ(ra, Role::standby);
    EXPECT_EQ(rb, Role::active);
    // a, still releasing, does not preempt back.
    a.current = Role::standby;
    a.preempt = true;
    std::tie(ra, rb) = step(a, b);
    EXPECT_EQ(ra, Role::standby);
    EXPECT_EQ(rb, Role::active);
}

TEST(HaElection, FailoverWithoutAPeerKeepsTheGroup) {
    GroupInput a = node(1, 200, Role::active);
    a.releasing = true;
    EXPECT_EQ(decide(a).role, Role::active);
}
