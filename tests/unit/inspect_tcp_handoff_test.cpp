// The constants of a TCP hand-off: with them, what one end sends is exactly
// what the stage's other socket would have sent (sequence and acknowledgment
// numbers, timestamps and their echoes, windows in the receiver's scale), and
// legs whose options differ in a way XDP cannot translate are refused.
#include <gtest/gtest.h>

#include "inspect/tcp_handoff.h"

using namespace sluice::inspect;

namespace {

struct Legs {
    LegNumbers client_leg, server_leg;
    uint32_t client_tsval, server_tsval;
};

// Numbers near 2^32 on purpose: every delta wraps.
Legs sample() {
    Legs l{};
    l.client_leg = {.snd_nxt = 0xfffff000, .rcv_nxt = 2000, .ts_now = 500000, .snd_wscale = 7, .rcv_wscale = 9};
    l.server_leg = {.snd_nxt = 90000, .rcv_nxt = 0xffffff00, .ts_now = 0xfffffff0, .snd_wscale = 6, .rcv_wscale = 7};
    l.client_tsval = 123;
    l.server_tsval = 0xfffffffe;
    return l;
}

uint16_t scaled(uint16_t window, int8_t shift) {
    uint32_t w = shift >= 0 ? uint32_t{window} << shift : uint32_t{window} >> -shift;
    return static_cast<uint16_t>(w > 0xffff ? 0xffff : w);
}

TEST(InspectTcpHandoff, SequenceNumbersContinueWhereTheOtherLegStopped) {
    Legs l = sample();
    SplicePair p = splice_between(l.client_leg, l.server_leg, l.client_tsval, l.server_tsval);
    // The client's next byte is the one the server leg would have sent next.
    EXPECT_EQ(l.client_leg.rcv_nxt + p.client_to_server.seq_delta, l.server_leg.snd_nxt);
    EXPECT_EQ(l.server_leg.rcv_nxt + p.server_to_client.seq_delta, l.client_leg.snd_nxt);
    // An acknowledgment of everything the stage sent one end acknowledges
    // everything the other end sent.
    EXPECT_EQ(l.client_leg.snd_nxt + p.client_to_server.ack_delta, l.server_leg.rcv_nxt);
    EXPECT_EQ(l.server_leg.snd_nxt + p.server_to_client.ack_delta, l.client_leg.rcv_nxt);
    // 1000 bytes later, on both sides.
    EXPECT_EQ(l.client_leg.rcv_nxt + 1000 + p.client_to_server.seq_delta, l.server_leg.snd_nxt + 1000);
}

TEST(InspectTcpHandoff, TimestampsNeverGoBackAndEchoesReturnHome) {
    Legs l = sample();
    SplicePair p = splice_between(l.client_leg, l.server_leg, l.client_tsval, l.server_tsval);
    // Each end's newest TSval arrives as the leg's current one (PAWS holds:
    // the receiver saw at most that much from the stage).
    EXPECT_EQ(l.client_tsval + p.client_to_server.tsval_delta, l.server_leg.ts_now);
    EXPECT_EQ(l.server_tsval + p.server_to_client.tsval_delta, l.client_leg.ts_now);
    // An echo of a translated TSval comes back as the original.
    uint32_t client_ts_later = l.client_tsval + 40;
    uint32_t as_server_sees = client_ts_later + p.client_to_server.tsval_delta;
    EXPECT_EQ(as_server_sees + p.server_to_client.tsecr_delta, client_ts_later);
    uint32_t server_ts_later = l.server_tsval + 7;  // wraps
    uint32_t as_client_sees = server_ts_later + p.server_to_client.tsval_delta;
    EXPECT_EQ(as_client_sees + p.client_to_server.tsecr_delta, server_ts_later);
}

TEST(InspectTcpHandoff, WindowsKeepTheirByteCountInTheReceiversScale) {
    Legs l = sample();
    SplicePair p = splice_between(l.client_leg, l.server_leg, l.client_tsval, l.server_tsval);
    // Client windows are << 7 (its own scale); the server reads them << 7
    // (what the server leg announced): unchanged.
    EXPECT_EQ(p.client_to_server.window_shift, 0);
    // Server windows are << 6; the client reads them << 9 (the client leg's):
    // 4096 << 6 bytes = 512 << 9 bytes.
    EXPECT_EQ(p.server_to_client.window_shift, -3);
    EXPECT_EQ(uint32_t{scaled(4096, p.server_to_client.window_shift)} << 9, uint32_t{4096} << 6);
}

TEST(InspectTcpHandoff, OptionsXdpCannotTranslateAreRefused) {
    LegOptions both{.timestamps = true, .sack = true, .usec_timestamps = false, .snd_wscale = 7, .rcv_wscale = 7};
    EXPECT_FALSE(splice_refusal(both, both));
    LegOptions no_ts = both;
    no_ts.timestamps = false;
    ASSERT_TRUE(splice_refusal(both, no_ts));
    EXPECT_NE(splice_refusal(both, no_ts)->find("timestamps"), std::string::npos);
    LegOptions no_sack = both;
    no_sack.sack = false;
    EXPECT_TRUE(splice_refusal(no_sack, both));
    EXPECT_FALSE(splice_refusal(no_sack, no_sack));
    LegOptions usec = both;
    usec.usec_timestamps = true;
    EXPECT_TRUE(splice_refusal(usec, usec));
    LegOptions other_scale = both;
    other_scale.rcv_wscale = 2;
    EXPECT_FALSE(splice_refusal(both, other_scale)) << "window scales are rescaled, not refused";
}

}  // namespace
