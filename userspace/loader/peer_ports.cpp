#include "loader/peer_ports.h"

#include <bpf/bpf.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "loader/map_io.h"

namespace sluice {

Result<std::vector<uint32_t>> veth_ports_with_remote_peer(const std::vector<uint32_t>& ports) {
    std::unique_ptr<nl_sock, decltype(&nl_socket_free)> sock(nl_socket_alloc(), &nl_socket_free);
    if (!sock) return make_error("cannot allocate a netlink socket");
    if (int rc = nl_connect(sock.get(), NETLINK_ROUTE); rc < 0)
        return make_error(std::string("cannot connect to rtnetlink: ") + nl_geterror(rc));
    std::vector<uint32_t> out;
    for (uint32_t ifindex : ports) {
        rtnl_link* raw = nullptr;
        if (rtnl_link_get_kernel(sock.get(), static_cast<int>(ifindex), nullptr, &raw) < 0 || !raw) continue;
        std::unique_ptr<rtnl_link, decltype(&rtnl_link_put)> link(raw, &rtnl_link_put);
        const char* type = rtnl_link_get_type(link.get());
        int32_t netnsid = -1;
        // A veth's IFLA_LINK_NETNSID is there only when its peer lives in
        // another namespace (bpf_redirect_peer refuses a peer in this one).
        if (type && std::string(type) == "veth" && rtnl_link_get_link_netnsid(link.get(), &netnsid) == 0 &&
            netnsid >= 0)
            out.push_back(ifindex);
    }
    return out;
}

Status write_peer_ports(int fd, const std::vector<uint32_t>& peers) {
    for (uint32_t ifindex : peers) {
        const uint32_t one = 1;
        if (bpf_map_update_elem(fd, &ifindex, &one, BPF_ANY) != 0)
            return errno_error("cannot write peer_ports", errno);
    }
    for (uint32_t key : map_keys<uint32_t>(fd))
        if (std::find(peers.begin(), peers.end(), key) == peers.end()) bpf_map_delete_elem(fd, &key);
    return {};
}

}  // namespace sluice
