#include "ha/virtual_presence.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace sluice::ha {
namespace {

std::string nl_text(int rc) { return nl_geterror(rc); }

// A file descriptor closed when it goes out of scope.
struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    ~Fd() {
        if (fd >= 0) close(fd);
    }
};

Status gratuitous_arp(const std::string& ifname, int ifindex, const Mac& mac, const uint8_t* ip4) {
    Fd s(socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_ARP)));
    if (s.fd < 0) return errno_error("HA: cannot open an ARP socket on " + ifname, errno);
    uint8_t arp[28] = {0, 1, 8, 0, 6, 4, 0, 1};  // Ethernet, IPv4, request
    std::memcpy(arp + 8, mac.data(), 6);
    std::memcpy(arp + 14, ip4, 4);
    std::memset(arp + 18, 0, 6);
    std::memcpy(arp + 24, ip4, 4);  // target = sender: gratuitous
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_protocol = htons(ETH_P_ARP);
    to.sll_ifindex = ifindex;
    to.sll_halen = ETH_ALEN;
    std::memset(to.sll_addr, 0xff, ETH_ALEN);
    if (sendto(s.fd, arp, sizeof(arp), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != sizeof(arp))
        return errno_error("HA: cannot send a gratuitous ARP on " + ifname, errno);
    return {};
}

// To all nodes, from the address itself, with the override and router flags:
// every neighbour cache holding the address takes this MAC.
Status unsolicited_na(const std::string& ifname, int ifindex, const Mac& mac, const uint8_t* ip6) {
    Fd s(socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6));
    if (s.fd < 0) return errno_error("HA: cannot open an ICMPv6 socket on " + ifname, errno);
    const int hops = 255;
    setsockopt(s.fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof(hops));
    setsockopt(s.fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof(ifindex));
    sockaddr_in6 from{};
    from.sin6_family = AF_INET6;
    std::memcpy(&from.sin6_addr, ip6, 16);
    if (bind(s.fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0)
        return errno_error("HA: cannot send a neighbour advertisement from a virtual address on " + ifname, errno);
    struct {
        nd_neighbor_advert na;
        uint8_t opt[8];
    } pkt{};
    pkt.na.nd_na_type = ND_NEIGHBOR_ADVERT;
    pkt.na.nd_na_flags_reserved = ND_NA_FLAG_OVERRIDE | ND_NA_FLAG_ROUTER;
    std::memcpy(&pkt.na.nd_na_target, ip6, 16);
    pkt.opt[0] = ND_OPT_TARGET_LINKADDR;
    pkt.opt[1] = 1;  // 8 bytes
    std::memcpy(pkt.opt + 2, mac.data(), 6);
    sockaddr_in6 to{};
    to.sin6_family = AF_INET6;
    inet_pton(AF_INET6, "ff02::1", &to.sin6_addr);
    to.sin6_scope_id = static_cast<uint32_t>(ifindex);
    if (sendto(s.fd, &pkt, sizeof(pkt), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != sizeof(pkt))
        return errno_error("HA: cannot send a neighbour advertisement on " + ifname, errno);
    return {};
}

// The address as an rtnetlink object on `ifindex` (the caller puts it).
rtnl_addr* address_object(int ifindex, const config::HaAddress& a) {
    rtnl_addr* ra = rtnl_addr_alloc();
    const bool v4 = a.family == config::Family::ipv4;
    nl_addr* local = nl_addr_build(v4 ? AF_INET : AF_INET6, a.addr.data(), v4 ? 4 : 16);
    nl_addr_set_prefixlen(local, a.length);
    rtnl_addr_set_ifindex(ra, ifindex);
    rtnl_addr_set_local(ra, local);
    nl_addr_put(local);  // ra holds its own reference
    return ra;
}

}  // namespace

std::string mac_text(const Mac& m) {
    char buf[18];
    std::snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
    return buf;
}

VirtualPresence::VirtualPresence(const config::HaGroup& group, uint8_t node_id) : group_(group), node_id_(node_id) {}

VirtualPresence::~VirtualPresence() {
    if (sock_) nl_socket_free(sock_);
}

Status VirtualPresence::connect() {
    if (sock_) return {};
    sock_ = nl_socket_alloc();
    if (!sock_) return make_error("HA: cannot allocate a netlink socket");
    if (int rc = nl_connect(sock_, NETLINK_ROUTE); rc < 0) {
        nl_socket_free(sock_);
        sock_ = nullptr;
        return make_error("HA: cannot connect to rtnetlink: " + nl_text(rc));
    }
    return {};
}

Result<Mac> VirtualPresence::current_mac(const std::string& ifname) {
    if (auto s = connect(); !s) return s.error();
    rtnl_link* link = nullptr;
    if (int rc = rtnl_link_get_kernel(sock_, 0, ifname.c_str(), &link); rc < 0)
        return make_error(ErrorCode::NotFound, "HA: interface " + ifname + ": " + nl_text(rc));
    Mac mac{};
    nl_addr* a = rtnl_link_get_addr(link);
    if (a && nl_addr_get_len(a) == 6) std::memcpy(mac.data(), nl_addr_get_binary_addr(a), 6);
    rtnl_link_put(link);
    return mac;
}

Status VirtualPresence::set_mac(const std::string& ifname, const Mac& mac) {
    if (auto s = connect(); !s) return s;
    rtnl_link* orig = nullptr;
    if (int rc = rtnl_link_get_kernel(sock_, 0, ifname.c_str(), &orig); rc < 0)
        return make_error(ErrorCode::NotFound, "HA: interface " + ifname + ": " + nl_text(rc));
    rtnl_link* change = rtnl_link_alloc();
    nl_addr* addr = nl_addr_build(AF_LLC, mac.data(), mac.size());
    rtnl_link_set_addr(change, addr);
    int rc = rtnl_link_change(sock_, orig, change, 0);
    nl_addr_put(addr);
    rtnl_link_put(change);
    rtnl_link_put(orig);
    if (rc < 0) return make_error("HA: cannot set MAC " + mac_text(mac) + " on " + ifname + ": " + nl_text(rc));
    return {};
}

Status VirtualPresence::take() {
    for (const auto& itf : group_.interfaces) {
        auto now = current_mac(itf.name);
        if (!now) return now.error();
        if (!own_mac_.count(itf.name) && now.value() != itf.virtual_mac) own_mac_[itf.name] = now.value();
        if (now.value() != itf.virtual_mac)
            if (auto s = set_mac(itf.name, itf.virtual_mac); !s) return s;
        const int ifindex = static_cast<int>(if_nametoindex(itf.name.c_str()));
        for (const auto& a : itf.addresses) {
            rtnl_addr* ra = address_object(ifindex, a);
            // Usable at once: duplicate address detection would hold it
            // tentative (unusable as a source) for a second after takeover.
            if (a.family != config::Family::ipv4) rtnl_addr_set_flags(ra, IFA_F_NODAD);
            int rc = rtnl_addr_add(sock_, ra, 0);
            rtnl_addr_put(ra);
            if (rc < 0 && rc != -NLE_EXIST)
                return make_error("HA: cannot add " + a.text + " to " + itf.name + ": " + nl_text(rc));
        }
    }
    return announce();
}

Status VirtualPresence::release() {
    Status first;
    for (const auto& itf : group_.interfaces) {
        const int ifindex = static_cast<int>(if_nametoindex(itf.name.c_str()));
        if (ifindex == 0) continue;
        if (auto s = connect(); !s) return s;
        for (const auto& a : itf.addresses) {
            rtnl_addr* ra = address_object(ifindex, a);
            int rc = rtnl_addr_delete(sock_, ra, 0);
            rtnl_addr_put(ra);
            if (rc < 0 && rc != -NLE_NOADDR && rc != -NLE_OBJ_NOTFOUND && first.ok())
                first = make_error("HA: cannot remove " + a.text + " from " + itf.name + ": " + nl_text(rc));
        }
        auto now = current_mac(itf.name);
        if (!now) continue;
        if (now.value() != itf.virtual_mac) {
            own_mac_.emplace(itf.name, now.value());
            continue;
        }
        // Its own MAC, or (started with the virtual one already on it, after a
        // crash) a locally administered one made from node id and ifindex.
        Mac own{0x02, 0x53, 0x4c, 0xfe, node_id_, static_cast<uint8_t>(ifindex)};
        if (auto it = own_mac_.find(itf.name); it != own_mac_.end()) own = it->second;
        else own_mac_[itf.name] = own;
        if (auto s = set_mac(itf.name, own); !s && first.ok()) first = s;
    }
    return first;
}

Status VirtualPresence::announce() {
    Status first;
    for (const auto& itf : group_.interfaces) {
        const int ifindex = static_cast<int>(if_nametoindex(itf.name.c_str()));
        if (ifindex == 0) continue;
        for (const auto& a : itf.addresses) {
            Status s = a.family == config::Family::ipv4 ? gratuitous_arp(itf.name, ifindex, itf.virtual_mac, a.addr.data())
                                                        : unsolicited_na(itf.name, ifindex, itf.virtual_mac, a.addr.data());
            if (!s && first.ok()) first = s;
        }
    }
    return first;
}

}  // namespace sluice::ha
