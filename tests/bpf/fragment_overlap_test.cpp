// Overlapping fragments (bpf/fragment.bpf.h frag_cover): a later fragment
// that rewrites bytes already seen (the classic way to show the policy one
// TCP/UDP header and the receiver another, RFC 1858 / RFC 5722) is dropped
// and counted, as is one that would open a fifth gap; fragments that fill
// a gap, in any order, pass. IPv4 and IPv6.
#include "datapath_env.h"

namespace sluice::test {
namespace {

constexpr uint16_t kUdpLength = 400;   // 8 header + 392 data: fragments of 48-byte steps fit
constexpr uint16_t kFirstPart = 48;

class FragmentOverlapTest : public DatapathTest {
protected:
    Bytes first4(uint16_t id) const {
        return lan_to_wan4().ip_id(id).more_fragments().udp(5353, 53).udp_length(kUdpLength)
            .payload_pattern(kFirstPart - 8).build();
    }
    // [offset, offset + len) of the datagram's IP payload.
    Bytes part4(uint16_t id, uint16_t offset, uint16_t len, bool more = true) const {
        return lan_to_wan4().ip_id(id).more_fragments(more).frag_offset(offset).protocol(proto::kUdp)
            .payload_pattern(len, uint8_t(offset)).build();
    }
    Bytes first6(uint32_t id) const {
        return lan_to_wan6().fragment_header(0, true, id).udp(5353, 53).udp_length(kUdpLength)
            .payload_pattern(kFirstPart - 8).build();
    }
    Bytes part6(uint32_t id, uint16_t offset, uint16_t len, bool more = true) const {
        return lan_to_wan6().fragment_header(offset, more, id).protocol(proto::kUdp)
            .payload_pattern(len, uint8_t(offset)).build();
    }
    void expect_passes(const std::string& what, const Bytes& frame) {
        snapshot_stats();
        EXPECT_EQ(run(frame, lan_if()).retval, XDP_REDIRECT) << what;
    }
    void expect_dropped(const std::string& what, const Bytes& frame, int reason) {
        snapshot_stats();
        expect_fixture({what, frame, lan_if(), XDP_DROP, std::nullopt});
        EXPECT_TRUE(only_drop_or_pass_counter(reason)) << what;
    }
};

TEST_F(FragmentOverlapTest, Ipv4LaterFragmentRewritingTheHeaderIsDropped) {
    expect_passes("first fragment [0,48)", first4(0x101));
    // Offset 0 is a first fragment; offset 8 overwrites the UDP payload's
    // start and, at offset 0 +8 granularity, everything the policy saw.
    expect_dropped("fragment [8,56) over the first", part4(0x101, 8, 48), STAT_DROP_FRAG_OVERLAP);
    expect_passes("fragment [48,96)", part4(0x101, 48, 48));
    expect_dropped("the same fragment again", part4(0x101, 48, 48), STAT_DROP_FRAG_OVERLAP);
    expect_dropped("fragment [88,136) straddling the end", part4(0x101, 88, 48), STAT_DROP_FRAG_OVERLAP);
    expect_passes("fragment [96,400), the last", part4(0x101, 96, kUdpLength - 96, false));
}

TEST_F(FragmentOverlapTest, Ipv6OverlapIsDropped) {
    expect_passes("first fragment [0,48)", first6(0x202));
    expect_dropped("fragment [40,88) over the first", part6(0x202, 40, 48), STAT_DROP_FRAG_OVERLAP);
    expect_passes("fragment [48,96)", part6(0x202, 48, 48));
}

// Out of order: later fragments leave gaps, a gap's filler joins its two
// neighbours, so the datagram stays within four ranges.
TEST_F(FragmentOverlapTest, GapsFilledInAnyOrderPass) {
    expect_passes("first [0,48)", first4(0x303));
    expect_passes("[96,144)", part4(0x303, 96, 48));
    expect_passes("[192,240)", part4(0x303, 192, 48));
    expect_passes("[288,336)", part4(0x303, 288, 48));
    expect_passes("[48,96) fills the first gap", part4(0x303, 48, 48));
    expect_passes("[144,192) fills the second", part4(0x303, 144, 48));
    expect_passes("[240,288) fills the third", part4(0x303, 240, 48));
    expect_passes("[336,400) the last", part4(0x303, 336, kUdpLength - 336, false));
    expect_dropped("[192,240) once more", part4(0x303, 192, 48), STAT_DROP_FRAG_OVERLAP);
}

TEST_F(FragmentOverlapTest, AFifthGapIsDropped) {
    expect_passes("first [0,48)", first6(0x404));
    expect_passes("[96,144)", part6(0x404, 96, 48));
    expect_passes("[192,240)", part6(0x404, 192, 48));
    expect_passes("[288,336)", part6(0x404, 288, 48));
    expect_dropped("[352,400): a fifth range", part6(0x404, 352, 48, false), STAT_DROP_FRAG_DISORDERED);
    expect_passes("[48,96) still fills a gap", part6(0x404, 48, 48));
}

}  // namespace
}  // namespace sluice::test
