// A translated flow's two session entries find each other (reverse of the
// translated tuple), GC judges them as one flow and names the port
// reservation to release.
#include <gtest/gtest.h>
#include <netinet/in.h>

#include "daemon/session_expiry.h"
#include "nat_test_entries.h"

using namespace sluice;
using namespace sluice::test_nat;

namespace {

constexpr uint64_t kSec = 1000000000ull;

// lan host 198.18.1.10:40000 → wan host 198.18.100.200:80, source-translated
// to the firewall's 198.18.100.1:50000.
const Tuple kOriginal = tuple4("198.18.1.10", 40000, "198.18.100.200", 80);
const Tuple kTranslated = tuple4("198.18.100.1", 50000, "198.18.100.200", 80);

runtime_config timeouts() {
    runtime_config cfg{};
    for (auto& t : cfg.timeout_ns) t = 30 * kSec;
    cfg.timeout_ns[TIMEOUT_TCP_ESTABLISHED] = 3600 * kSec;
    return cfg;
}

}  // namespace

TEST(NatSessionPairing, UntranslatedPeerIsThePlainReverse) {
    SessionEntry e = entry(kOriginal, IPPROTO_TCP);
    EXPECT_TRUE(same_key(reverse_of(e), entry(reversed(kOriginal), IPPROTO_TCP)));
    EXPECT_TRUE(same_key(translated_tuple(e), e));
}

TEST(NatSessionPairing, SourceNatPeerIsReverseOfTranslatedTuple) {
    Flow f = nat_flow(kOriginal, kTranslated, IPPROTO_TCP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    SessionEntry peer = reverse_of(f.initiator);
    EXPECT_EQ(address_text(peer.family, peer.src_addr), "198.18.100.200");
    EXPECT_EQ(address_text(peer.family, peer.dst_addr), "198.18.100.1");
    EXPECT_EQ(ntohs(peer.src_port), 80);
    EXPECT_EQ(ntohs(peer.dst_port), 50000);
    EXPECT_TRUE(same_key(peer, f.reply));
    // And back: the reply's peer is the initiator's (original) key.
    EXPECT_TRUE(same_key(reverse_of(f.reply), f.initiator));
}

TEST(NatSessionPairing, DestinationNatAndBothDirectionsPairIPv6) {
    Tuple original = tuple6("2001:2:0:100::200", 5555, "2001:2:0:100::1", 8080);
    Tuple translated = tuple6("2001:2:0:100::200", 5555, "2001:2:0:1::100", 80);
    Flow f = nat_flow(original, translated, IPPROTO_TCP, SESSION_NAT_DST);
    EXPECT_TRUE(same_key(reverse_of(f.initiator), f.reply));
    EXPECT_TRUE(same_key(reverse_of(f.reply), f.initiator));
    EXPECT_EQ(endpoint_text(f.reply.family, f.reply.src_addr, f.reply.src_port), "[2001:2:0:1::100]:80");
}

TEST(NatSessionPairing, IcmpEchoIdentifierFollowsTheTranslation) {
    // Requests carry the identifier as src_port, replies as dst_port.
    Tuple original = tuple4("198.18.1.10", 7, "198.18.100.200", 0);
    Tuple translated = tuple4("198.18.100.1", 1030, "198.18.100.200", 0);
    Flow f = nat_flow(original, translated, IPPROTO_ICMP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    EXPECT_TRUE(same_key(reverse_of(f.initiator), f.reply));
    EXPECT_EQ(ntohs(f.reply.dst_port), 1030);
}

TEST(NatReservationKey, InitiatorWithPortHeld) {
    Flow f = nat_flow(kOriginal, kTranslated, IPPROTO_UDP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    auto k = held_reservation(f.initiator);
    ASSERT_TRUE(k);
    EXPECT_EQ(k->addr[0], v4("198.18.100.1"));
    EXPECT_EQ(k->addr[1], 0u);
    EXPECT_EQ(ntohs(k->port), 50000);
    EXPECT_EQ(k->protocol, IPPROTO_UDP);
    EXPECT_EQ(k->family, SLUICE_FAMILY_IPV4);
    EXPECT_FALSE(held_reservation(f.reply));  // only the initiator holds it
    Flow no_port = nat_flow(kOriginal, kTranslated, IPPROTO_UDP, SESSION_NAT_SRC);
    EXPECT_FALSE(held_reservation(no_port.initiator));  // static 1:1: nothing reserved
}

TEST(NatReservationKey, OrphanReplyCandidateNeedsMatchingInsideHost) {
    Flow f = nat_flow(kOriginal, kTranslated, IPPROTO_TCP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    auto k = orphan_reply_reservation(f.reply);
    ASSERT_TRUE(k);
    auto expected = held_reservation(f.initiator);
    EXPECT_EQ(std::memcmp(&*k, &*expected, sizeof(nat_port_key)), 0);
    EXPECT_TRUE(reservation_belongs_to(reservation(kTranslated, kOriginal, IPPROTO_TCP, 0).second, f.reply));
    Tuple other = tuple4("198.18.1.11", 40000, "198.18.100.200", 80);
    EXPECT_FALSE(reservation_belongs_to(reservation(kTranslated, other, IPPROTO_TCP, 0).second, f.reply));
    // A destination-only flow's reply rewrites its source: no reservation.
    Flow dnat = nat_flow(kOriginal, tuple4("198.18.1.10", 40000, "198.18.1.100", 80), IPPROTO_TCP, SESSION_NAT_DST);
    EXPECT_FALSE(orphan_reply_reservation(dnat.reply));
}

TEST(NatSessionExpiry, IdleTimeComesFromBothEntriesOfATranslatedFlow) {
    Flow f = nat_flow(kOriginal, kTranslated, IPPROTO_UDP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    f.initiator.value.last_seen_ns = 10 * kSec;
    f.reply.value.last_seen_ns = 100 * kSec;  // replies keep it alive
    auto plan = plan_expiry({f.initiator, f.reply}, timeouts(), 110 * kSec);
    EXPECT_EQ(plan.flows, 1u);
    EXPECT_TRUE(plan.expired.empty());
    EXPECT_EQ(plan.next_due_ns, 130 * kSec);
}

// An HA takeover: flows synced from the old node carry its last change; the
// idle floor (the takeover's instant) keeps the live ones until a timeout
// after it, and lets them expire then.
TEST(NatSessionExpiry, IdleFloorRestartsTheTimerOfFlowsSeenBeforeIt) {
    Flow f = nat_flow(kOriginal, kTranslated, IPPROTO_UDP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    f.initiator.value.last_seen_ns = f.reply.value.last_seen_ns = 10 * kSec;
    const uint64_t udp_timeout = 30 * kSec;  // timeouts(): every class but TCP established
    EXPECT_EQ(plan_expiry({f.initiator, f.reply}, timeouts(), 100 * kSec).expired.size(), 1u) << "no floor";
    auto kept = plan_expiry({f.initiator, f.reply}, timeouts(), 100 * kSec, 90 * kSec);
    EXPECT_TRUE(kept.expired.empty());
    EXPECT_EQ(kept.next_due_ns, 90 * kSec + udp_timeout);
    EXPECT_EQ(plan_expiry({f.initiator, f.reply}, timeouts(), 90 * kSec + udp_timeout, 90 * kSec).expired.size(), 1u)
        << "a timeout after the floor it expires";
}

TEST(NatSessionExpiry, TcpStateComesFromThePeerToo) {
    Flow f = nat_flow(kOriginal, kTranslated, IPPROTO_TCP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    f.initiator.value.tcp_state = TCP_SESSION_SYN_SENT;  // missed the update
    f.reply.value.tcp_state = TCP_SESSION_ESTABLISHED;
    auto plan = plan_expiry({f.initiator, f.reply}, timeouts(), 60 * kSec);
    EXPECT_TRUE(plan.expired.empty()) << "judged by the SYN timeout instead of the established one";
}

TEST(NatSessionExpiry, ExpiredFlowDeletesBothEntriesAndReleasesItsPort) {
    Flow f = nat_flow(kOriginal, kTranslated, IPPROTO_TCP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    f.initiator.value.tcp_state = f.reply.value.tcp_state = TCP_SESSION_CLOSING;
    std::vector<SessionEntry> entries = {f.reply, f.initiator};
    auto plan = plan_expiry(entries, timeouts(), 60 * kSec);
    ASSERT_EQ(plan.expired.size(), 1u);
    const ExpiredFlow& x = plan.expired[0];
    EXPECT_TRUE(same_key(*x.entry, f.initiator));
    ASSERT_NE(x.peer, nullptr);
    EXPECT_TRUE(same_key(*x.peer, f.reply));
    ASSERT_TRUE(x.reservation);
    EXPECT_FALSE(x.reservation_unconfirmed);
    EXPECT_EQ(ntohs(x.reservation->port), 50000);
}

TEST(NatSessionExpiry, LoneInitiatorStillReleasesItsPort) {
    Flow f = nat_flow(kOriginal, kTranslated, IPPROTO_UDP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    auto plan = plan_expiry({f.initiator}, timeouts(), 60 * kSec);
    ASSERT_EQ(plan.expired.size(), 1u);
    EXPECT_EQ(plan.expired[0].peer, nullptr);
    ASSERT_TRUE(plan.expired[0].reservation);
    EXPECT_FALSE(plan.expired[0].reservation_unconfirmed);
}

TEST(NatSessionExpiry, LoneReplyNamesACandidateToConfirm) {
    Flow f = nat_flow(kOriginal, kTranslated, IPPROTO_UDP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    auto plan = plan_expiry({f.reply}, timeouts(), 60 * kSec);
    ASSERT_EQ(plan.expired.size(), 1u);
    ASSERT_TRUE(plan.expired[0].reservation);
    EXPECT_TRUE(plan.expired[0].reservation_unconfirmed);
}

TEST(NatSessionExpiry, UntranslatedFlowsReleaseNothing) {
    SessionEntry a = entry(kOriginal, IPPROTO_UDP), b = entry(reversed(kOriginal), IPPROTO_UDP);
    b.value.flags = SESSION_F_REPLY;
    auto plan = plan_expiry({a, b}, timeouts(), 60 * kSec);
    ASSERT_EQ(plan.expired.size(), 1u);
    EXPECT_NE(plan.expired[0].peer, nullptr);
    EXPECT_FALSE(plan.expired[0].reservation);
}
