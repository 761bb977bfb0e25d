// Fragments: the first fragment (offset 0) is classified and recorded; later
// fragments follow the record's verdict; no record, no passage.
#include "datapath_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kClientPort = 5353;
// A 200-byte UDP datagram (8 header + 192 data) split after 104 bytes.
constexpr uint16_t kUdpLength = 200;
constexpr uint16_t kFirstPart = 104;  // IP payload of the first fragment (8-byte multiple)

class FragmentTest : public DatapathTest {
protected:
    Bytes first4(PacketBuilder b, uint16_t id, uint16_t dport) const {
        return b.ip_id(id).more_fragments().udp(kClientPort, dport).udp_length(kUdpLength)
            .payload_pattern(kFirstPart - 8).build();
    }
    Bytes later4(PacketBuilder b, uint16_t id) const {
        return b.ip_id(id).frag_offset(kFirstPart).protocol(proto::kUdp)
            .payload_pattern(kUdpLength - kFirstPart, kFirstPart - 8).build();
    }
    Bytes first6(PacketBuilder b, uint32_t id, uint16_t dport) const {
        return b.fragment_header(0, true, id).udp(kClientPort, dport).udp_length(kUdpLength)
            .payload_pattern(kFirstPart - 8).build();
    }
    Bytes later6(PacketBuilder b, uint32_t id) const {
        return b.fragment_header(kFirstPart, false, id).protocol(proto::kUdp)
            .payload_pattern(kUdpLength - kFirstPart, kFirstPart - 8).build();
    }
};

TEST_F(FragmentTest, Ipv4PermittedFirstFragmentIsRecordedAndLaterFollows) {
    expect_fixture({"IPv4 first fragment of a DNS query", first4(lan_to_wan4(), 0x4242, 53), lan_if(), XDP_REDIRECT,
                    first4(lan_to_wan4_out(), 0x4242, 53)});
    EXPECT_EQ(stat_change(STAT_FRAG_RECORDED), 1);
    EXPECT_EQ(count_entries(env_->map_fd("frags_v4")), 1u);
    snapshot_stats();
    expect_fixture({"IPv4 later fragment, same id", later4(lan_to_wan4(), 0x4242), lan_if(), XDP_REDIRECT,
                    later4(lan_to_wan4_out(), 0x4242)});
    EXPECT_EQ(stat_change(STAT_FRAG_FOLLOWED), 1);
}

TEST_F(FragmentTest, Ipv6PermittedFirstFragmentIsRecordedAndLaterFollows) {
    expect_fixture({"IPv6 first fragment of a DNS query", first6(lan_to_wan6(), 0xabcdef01, 53), lan_if(),
                    XDP_REDIRECT, first6(lan_to_wan6_out(), 0xabcdef01, 53)});
    EXPECT_EQ(stat_change(STAT_FRAG_RECORDED), 1);
    EXPECT_EQ(count_entries(env_->map_fd("frags_v6")), 1u);
    snapshot_stats();
    expect_fixture({"IPv6 later fragment, same id", later6(lan_to_wan6(), 0xabcdef01), lan_if(), XDP_REDIRECT,
                    later6(lan_to_wan6_out(), 0xabcdef01)});
    EXPECT_EQ(stat_change(STAT_FRAG_FOLLOWED), 1);
}

TEST_F(FragmentTest, Ipv4LaterFragmentWithoutRecordIsDropped) {
    expect_fixture({"IPv4 later fragment, no first", later4(lan_to_wan4(), 0x5151), lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_FRAG_NO_RECORD));
}

TEST_F(FragmentTest, Ipv6LaterFragmentWithoutRecordIsDropped) {
    expect_fixture({"IPv6 later fragment, no first", later6(lan_to_wan6(), 0x5151), lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_FRAG_NO_RECORD));
}

TEST_F(FragmentTest, Ipv4LaterFragmentWithOtherIdIsDropped) {
    ASSERT_EQ(run(first4(lan_to_wan4(), 0x4242, 53), lan_if()).retval, XDP_REDIRECT);
    snapshot_stats();
    expect_fixture({"IPv4 later fragment, different id", later4(lan_to_wan4(), 0x4243), lan_if(), XDP_DROP,
                    std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_FRAG_NO_RECORD));
}

TEST_F(FragmentTest, Ipv4DeniedFirstFragmentAndItsLaterFragmentAreDropped) {
    expect_fixture({"IPv4 first fragment to udp/5000 (default deny)", first4(lan_to_wan4(), 0x6161, 5000), lan_if(),
                    XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DEFAULT));
    snapshot_stats();
    expect_fixture({"IPv4 its later fragment", later4(lan_to_wan4(), 0x6161), lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_FRAG_DENIED));
}

TEST_F(FragmentTest, Ipv6DeniedFirstFragmentAndItsLaterFragmentAreDropped) {
    expect_fixture({"IPv6 first fragment to udp/5000 (default deny)", first6(lan_to_wan6(), 0x6161, 5000), lan_if(),
                    XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DEFAULT));
    snapshot_stats();
    expect_fixture({"IPv6 its later fragment", later6(lan_to_wan6(), 0x6161), lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_FRAG_DENIED));
}


TEST_F(FragmentTest, Ipv6DestinationOptionsAfterFragmentHeaderFollowTheRecord) {
    // RFC 8200 §4.5: destination options for the final destination belong to
    // the fragmentable part, so they sit after the fragment header and only
    // the first fragment carries them; later fragments say next-header 60.
    auto first = [](PacketBuilder b) {
        return b.fragment_header(0, true, 0x99).destination_options().udp(kClientPort, 53).udp_length(kUdpLength)
            .payload_pattern(kFirstPart - 8 - 8).build();
    };
    auto later = [](PacketBuilder b) {
        return b.fragment_header(kFirstPart, false, 0x99).protocol(proto::kDestOpts)
            .payload_pattern(kUdpLength + 8 - kFirstPart).build();
    };
    expect_fixture({"IPv6 first fragment, dest-opts after the fragment header", first(lan_to_wan6()), lan_if(),
                    XDP_REDIRECT, first(lan_to_wan6_out())});
    expect_fixture({"IPv6 later fragment of that datagram", later(lan_to_wan6()), lan_if(), XDP_REDIRECT,
                    later(lan_to_wan6_out())});
}

}  // namespace
}  // namespace sluice::test
