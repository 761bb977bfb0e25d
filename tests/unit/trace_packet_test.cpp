// `sluice trace`'s packet options: the ones that describe nothing in the
// packet asked for are refused by name, never silently ignored.
#include <gtest/gtest.h>

#include "cli/trace_packet.h"

namespace sluice::cli {
namespace {

PacketFields fields(const std::string& protocol, const std::string& src = "198.18.1.10") {
    PacketFields f;
    f.src = src;
    f.dst = src.find(':') != std::string::npos ? "2001:2:0:100::2" : "198.18.100.2";
    f.protocol = protocol;
    return f;
}

TEST(TraceFields, ThoseThatApplyPass) {
    EXPECT_TRUE(check_fields_apply(fields("tcp"), {"--src", "--dst", "--sport", "--dport", "--flags", "--ttl"}, false));
    EXPECT_TRUE(check_fields_apply(fields("udp"), {"--sport", "--dport", "--payload"}, false));
    EXPECT_TRUE(check_fields_apply(fields("icmp"), {"--icmp-type", "--icmp-code"}, false));
    EXPECT_TRUE(check_fields_apply(fields("icmpv6", "2001:2:0:1::10"), {"--icmp-type"}, false));
    EXPECT_TRUE(check_fields_apply(fields("47"), {"--protocol", "--payload"}, false));
    EXPECT_TRUE(check_fields_apply(fields("icmp"), {}, true)) << "a pcap alone";
}

TEST(TraceFields, PortsOfAnIcmpPacketAreRefusedByName) {
    auto s = check_fields_apply(fields("icmp"), {"--src", "--sport", "--dport"}, false);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message.rfind("--sport, --dport: not part of a --protocol icmp packet", 0), 0u)
        << s.error().message;
}

TEST(TraceFields, EachMismatchIsNamed) {
    auto udp = check_fields_apply(fields("udp"), {"--flags", "--icmp-type"}, false);
    ASSERT_FALSE(udp);
    EXPECT_NE(udp.error().message.find("--flags, --icmp-type: not part of a --protocol udp packet"), std::string::npos);
    auto tcp = check_fields_apply(fields("tcp"), {"--icmp-code"}, false);
    ASSERT_FALSE(tcp);
    EXPECT_NE(tcp.error().message.find("--icmp-code"), std::string::npos);
    auto other = check_fields_apply(fields("47"), {"--dport"}, false);
    ASSERT_FALSE(other);
    EXPECT_NE(other.error().message.find("--protocol 47"), std::string::npos);
}

TEST(TraceFields, FieldsWithAPcapAreRefused) {
    auto s = check_fields_apply(fields("tcp"), {"--src", "--dport"}, true);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("--src, --dport: --pcap traces the file's packets as they are"),
              std::string::npos)
        << s.error().message;
}

TEST(TraceFields, AnUnknownProtocolIsTheErrorFirst) {
    auto s = check_fields_apply(fields("sctpx"), {"--sport"}, false);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("--protocol: \"sctpx\""), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace sluice::cli
