// Which address source NAT to an interface uses: the first IPv4 address, the
// first global IPv6 address that can carry traffic.
#include <gtest/gtest.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include "loader/nat_ifaddrs.h"
#include "loader/session_table.h"
#include "nat_test_entries.h"

using namespace sluice;

namespace {

InterfaceAddress addr(uint32_t ifindex, const char* text, int scope, uint32_t flags = 0) {
    InterfaceAddress a;
    a.ifindex = ifindex;
    a.scope = scope;
    a.flags = flags;
    a.family = std::string(text).find(':') != std::string::npos ? AF_INET6 : AF_INET;
    inet_pton(a.family, text, a.addr);
    return a;
}

std::string v6_text(const nat_ifaddr& a) { return address_text(SLUICE_FAMILY_IPV6, a.v6); }

}  // namespace

TEST(NatIfaddrs, FirstIpv4AndFirstGlobalIpv6OfThatInterface) {
    std::vector<InterfaceAddress> list = {
        addr(2, "198.18.1.1", RT_SCOPE_UNIVERSE),
        addr(3, "fe80::1", RT_SCOPE_LINK),
        addr(3, "198.18.100.1", RT_SCOPE_UNIVERSE),
        addr(3, "198.18.100.2", RT_SCOPE_UNIVERSE, IFA_F_SECONDARY),
        addr(3, "2001:2:0:100::1", RT_SCOPE_UNIVERSE),
        addr(3, "2001:2:0:100::2", RT_SCOPE_UNIVERSE),
    };
    nat_ifaddr a = choose_nat_ifaddr(3, list);
    EXPECT_EQ(a.has_v4, 1);
    EXPECT_EQ(a.v4, test_nat::v4("198.18.100.1"));
    EXPECT_EQ(a.has_v6, 1);
    EXPECT_EQ(v6_text(a), "2001:2:0:100::1");
    EXPECT_EQ(a.port_first, 1024);
    EXPECT_EQ(a.port_last, 65535);
}

TEST(NatIfaddrs, SkipsLinkLocalTentativeDeprecatedAndFailedIpv6) {
    std::vector<InterfaceAddress> list = {
        addr(3, "fe80::1", RT_SCOPE_LINK),
        addr(3, "2001:2:0:100::1", RT_SCOPE_UNIVERSE, IFA_F_TENTATIVE),
        addr(3, "2001:2:0:100::2", RT_SCOPE_UNIVERSE, IFA_F_DEPRECATED),
        addr(3, "2001:2:0:100::3", RT_SCOPE_UNIVERSE, IFA_F_DADFAILED),
        addr(3, "2001:2:0:100::4", RT_SCOPE_UNIVERSE, IFA_F_PERMANENT),
    };
    nat_ifaddr a = choose_nat_ifaddr(3, list);
    EXPECT_EQ(a.has_v4, 0);
    EXPECT_EQ(a.has_v6, 1);
    EXPECT_EQ(v6_text(a), "2001:2:0:100::4");
}

TEST(NatIfaddrs, InterfaceWithoutAddressesHasNeither) {
    nat_ifaddr a = choose_nat_ifaddr(7, {addr(3, "198.18.100.1", RT_SCOPE_UNIVERSE)});
    EXPECT_EQ(a.has_v4, 0);
    EXPECT_EQ(a.has_v6, 0);
    EXPECT_EQ(a.v4, 0u);
}

TEST(NatIfaddrs, KernelListReadsWithoutPrivileges) {
    // RTM_GETADDR needs no capability; every namespace has at least lo.
    auto list = read_interface_addresses();
    ASSERT_TRUE(list) << list.error().message;
}
