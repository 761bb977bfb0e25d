#include "loader/nat_ifaddrs.h"

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <netlink/addr.h>
#include <netlink/cache.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/socket.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "loader/map_io.h"

namespace sluice {
namespace {

bool usable(const InterfaceAddress& a) {
    if (a.flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED | IFA_F_DEPRECATED)) return false;
    if (a.family == AF_INET) return a.scope != RT_SCOPE_HOST;
    return a.family == AF_INET6 && a.scope == RT_SCOPE_UNIVERSE;
}

}  // namespace

nat_ifaddr choose_nat_ifaddr(uint32_t ifindex, const std::vector<InterfaceAddress>& addresses) {
    nat_ifaddr out{};
    out.port_first = kIfaddrPortFirst;
    out.port_last = kIfaddrPortLast;
    for (const auto& a : addresses) {
        if (a.ifindex != ifindex || !usable(a)) continue;
        if (a.family == AF_INET && !out.has_v4) {
            std::memcpy(&out.v4, a.addr, 4);
            out.has_v4 = 1;
        } else if (a.family == AF_INET6 && !out.has_v6) {
            std::memcpy(out.v6, a.addr, 16);
            out.has_v6 = 1;
        }
    }
    return out;
}

Result<std::vector<InterfaceAddress>> read_interface_addresses() {
    std::unique_ptr<nl_sock, decltype(&nl_socket_free)> sock(nl_socket_alloc(), &nl_socket_free);
    if (!sock) return make_error("netlink: cannot allocate a socket");
    if (int rc = nl_connect(sock.get(), NETLINK_ROUTE); rc < 0)
        return make_error(std::string("netlink: cannot connect: ") + nl_geterror(rc));
    nl_cache* raw = nullptr;
    if (int rc = rtnl_addr_alloc_cache(sock.get(), &raw); rc < 0)
        return make_error(std::string("netlink: cannot list interface addresses: ") + nl_geterror(rc));
    std::unique_ptr<nl_cache, decltype(&nl_cache_free)> cache(raw, &nl_cache_free);

    std::vector<InterfaceAddress> out;
    for (nl_object* obj = nl_cache_get_first(cache.get()); obj; obj = nl_cache_get_next(obj)) {
        auto* a = reinterpret_cast<rtnl_addr*>(obj);
        nl_addr* local = rtnl_addr_get_local(a);
        if (!local) continue;
        InterfaceAddress ia;
        ia.ifindex = static_cast<uint32_t>(rtnl_addr_get_ifindex(a));
        ia.family = rtnl_addr_get_family(a);
        ia.scope = rtnl_addr_get_scope(a);
        ia.flags = rtnl_addr_get_flags(a);
        unsigned len = nl_addr_get_len(local);
        if ((ia.family == AF_INET && len != 4) || (ia.family == AF_INET6 && len != 16)) continue;
        std::memcpy(ia.addr, nl_addr_get_binary_addr(local), len);
        out.push_back(ia);
    }
    return out;
}

Result<std::vector<NatIfaddrEntry>> write_nat_ifaddrs(int fd, const std::vector<uint32_t>& ifindexes,
                                                      const std::vector<InterfaceAddress>& addresses) {
    std::vector<NatIfaddrEntry> entries;
    for (uint32_t ifindex : ifindexes) entries.emplace_back(ifindex, choose_nat_ifaddr(ifindex, addresses));
    if (auto s = write_entries(fd, SLUICE_MAP_NAT_IFADDRS, entries); !s) return s.error();
    for (uint32_t key : map_keys<uint32_t>(fd)) {
        if (std::find(ifindexes.begin(), ifindexes.end(), key) == ifindexes.end()) bpf_map_delete_elem(fd, &key);
    }
    return entries;
}

std::vector<NatIfaddrEntry> read_nat_ifaddrs(int fd) {
    std::vector<NatIfaddrEntry> out;
    for (uint32_t key : map_keys<uint32_t>(fd)) {
        nat_ifaddr v{};
        if (bpf_map_lookup_elem(fd, &key, &v) == 0) out.emplace_back(key, v);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
}

Result<std::vector<NatIfaddrEntry>> sync_nat_ifaddrs(int fd, const std::vector<uint32_t>& ifindexes) {
    auto addresses = read_interface_addresses();
    if (!addresses) return addresses.error();
    return write_nat_ifaddrs(fd, ifindexes, addresses.value());
}

}  // namespace sluice
