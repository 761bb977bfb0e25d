// Scalar syntaxes of the config: prefixes, ports, protocols, durations, sizes, hints.
#include <gtest/gtest.h>

#include "config/prefix.h"
#include "config/suggest.h"
#include "config/values.h"

using namespace sluice::config;

TEST(ConfigValues, Ipv4PrefixAndBareAddress) {
    auto p = parse_prefix("198.18.1.0/24");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->family, Family::ipv4);
    EXPECT_EQ(p->length, 24);
    EXPECT_EQ(p->to_string(), "198.18.1.0/24");
    auto host = parse_prefix("198.18.100.200");
    ASSERT_TRUE(host.ok());
    EXPECT_EQ(host->length, 32);
    EXPECT_TRUE(p->contains(parse_prefix("198.18.1.77").value()));
    EXPECT_FALSE(p->contains(host.value()));
}

TEST(ConfigValues, Ipv6PrefixAndBareAddress) {
    auto p = parse_prefix("2001:2:0:1::/64");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->family, Family::ipv6);
    EXPECT_EQ(p->length, 64);
    auto host = parse_prefix("2001:2:0:1::200");
    ASSERT_TRUE(host.ok());
    EXPECT_EQ(host->length, 128);
    EXPECT_TRUE(p->contains(host.value()));
    EXPECT_FALSE(p->contains(parse_prefix("198.18.1.0/24").value()));
}

TEST(ConfigValues, PrefixErrors) {
    EXPECT_EQ(parse_prefix("198.18.1.0/33").error().message, "invalid prefix length in \"198.18.1.0/33\" (0-32)");
    EXPECT_EQ(parse_prefix("2001:2::/129").error().message, "invalid prefix length in \"2001:2::/129\" (0-128)");
    EXPECT_EQ(parse_prefix("198.18.1.0/").error().message, "invalid prefix length in \"198.18.1.0/\" (0-32)");
    EXPECT_EQ(parse_prefix("198.18.256.0/24").error().message, "invalid IPv4 address \"198.18.256.0\"");
    EXPECT_EQ(parse_prefix("2001:2::g").error().message, "invalid IPv6 address \"2001:2::g\"");
}

TEST(ConfigValues, PrefixWithHostBitsIsAnErrorThatNamesTheFix) {
    EXPECT_EQ(parse_prefix("198.18.1.1/24").error().message,
              "prefix \"198.18.1.1/24\" has host bits set (did you mean \"198.18.1.0/24\"?)");
    EXPECT_EQ(parse_prefix("2001:2:0:1::1/64").error().message,
              "prefix \"2001:2:0:1::1/64\" has host bits set (did you mean \"2001:2:0:1::/64\"?)");
    EXPECT_TRUE(parse_prefix("0.0.0.0/0").ok());
    EXPECT_TRUE(parse_prefix("::/0").ok());
}

TEST(ConfigValues, AddressLiteralsAreToldApartFromNames) {
    EXPECT_TRUE(looks_like_address("198.18.300.1"));
    EXPECT_TRUE(looks_like_address("2001:2::1"));
    EXPECT_TRUE(looks_like_address("198.18.0.0/15"));
    EXPECT_FALSE(looks_like_address("lan-net"));
    EXPECT_FALSE(looks_like_address("web1"));
}

TEST(ConfigValues, PortsAndRanges) {
    EXPECT_EQ(parse_port_range("80").value(), (PortRange{80, 80}));
    EXPECT_EQ(parse_port_range("1024-65535").value(), (PortRange{1024, 65535}));
    EXPECT_EQ(parse_port_range("0").value(), (PortRange{0, 0}));
    EXPECT_EQ(parse_port_range("65536").error().message, "port \"65536\" out of range 0-65535");
    EXPECT_EQ(parse_port_range("9000-8000").error().message, "port range \"9000-8000\" is reversed (low > high)");
    EXPECT_EQ(parse_port_range("http").error().message, "invalid port \"http\" (expected 80 or 1024-65535)");
    EXPECT_FALSE(parse_port_range("-5").ok());
    EXPECT_FALSE(parse_port_range("5-").ok());
}

TEST(ConfigValues, Protocols) {
    EXPECT_EQ(parse_protocol("tcp").value(), 6);
    EXPECT_EQ(parse_protocol("udp").value(), 17);
    EXPECT_EQ(parse_protocol("icmp").value(), 1);
    EXPECT_EQ(parse_protocol("icmpv6").value(), 58);
    EXPECT_EQ(parse_protocol("47").value(), 47);
    EXPECT_FALSE(parse_protocol("256").ok());
    EXPECT_FALSE(parse_protocol("TCP").ok());
    EXPECT_EQ(protocol_name(58), "icmpv6");
    EXPECT_EQ(protocol_name(47), "47");
}

TEST(ConfigValues, Durations) {
    EXPECT_EQ(parse_duration("30s").value().count(), 30);
    EXPECT_EQ(parse_duration("5m").value().count(), 300);
    EXPECT_EQ(parse_duration("2h").value().count(), 7200);
    for (const char* bad : {"0s", "30", "s", "-5s", "5d", "1.5h", ""})
        EXPECT_FALSE(parse_duration(bad).ok()) << bad;
    EXPECT_FALSE(parse_duration("99999999999h").ok());
}

TEST(ConfigValues, Sizes) {
    EXPECT_EQ(parse_size("65536").value(), 65536u);
    EXPECT_EQ(parse_size("64KiB").value(), 65536u);
    EXPECT_EQ(parse_size("1MiB").value(), 1048576u);
    EXPECT_EQ(parse_size("2kB").value(), 2000u);
    EXPECT_FALSE(parse_size("0").ok());
    EXPECT_FALSE(parse_size("lots").ok());
}

TEST(ConfigValues, DidYouMean) {
    EXPECT_EQ(edit_distance("htp", "http"), 1u);
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
    EXPECT_EQ(did_you_mean("htp", {"dns", "http", "ping"}), " (did you mean \"http\"?)");
    EXPECT_EQ(did_you_mean("destnation", {"source", "destination"}), " (did you mean \"destination\"?)");
    EXPECT_EQ(did_you_mean("zzzzzz", {"http", "dns"}), "");
    // Very short words get no wild guesses.
    EXPECT_EQ(did_you_mean("a", {"b"}), "");
}
