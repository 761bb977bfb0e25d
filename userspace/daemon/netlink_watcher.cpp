#include "daemon/netlink_watcher.h"

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <cerrno>
#include <string>

namespace sluice {

Result<std::unique_ptr<NetlinkWatcher>> NetlinkWatcher::open() {
    std::unique_ptr<NetlinkWatcher> w(new NetlinkWatcher());
    w->sock_ = nl_socket_alloc();
    if (!w->sock_) return make_error("netlink: cannot allocate a socket");
    nl_socket_disable_seq_check(w->sock_);
    nl_socket_modify_cb(w->sock_, NL_CB_VALID, NL_CB_CUSTOM, &NetlinkWatcher::on_message, w.get());
    int rc = nl_connect(w->sock_, NETLINK_ROUTE);
    if (rc < 0) return make_error(std::string("netlink: cannot connect: ") + nl_geterror(rc));
    rc = nl_socket_add_memberships(w->sock_, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_NEIGH, RTNLGRP_LINK,
                                   RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR, 0);
    if (rc < 0) return make_error(std::string("netlink: cannot subscribe: ") + nl_geterror(rc));
    nl_socket_set_nonblocking(w->sock_);
    return w;
}

NetlinkWatcher::~NetlinkWatcher() {
    if (sock_) nl_socket_free(sock_);
}

int NetlinkWatcher::fd() const { return nl_socket_get_fd(sock_); }

int NetlinkWatcher::on_message(::nl_msg* msg, void* arg) {
    auto* self = static_cast<NetlinkWatcher*>(arg);
    nlmsghdr* hdr = nlmsg_hdr(msg);
    if (hdr->nlmsg_type == RTM_NEWNEIGH) {
        // Reachability churn (STALE/DELAY/PROBE) keeps the same link-layer
        // address: no reason to drop cached results for it.
        auto* nd = static_cast<ndmsg*>(nlmsg_data(hdr));
        if (nd->ndm_state & (NUD_STALE | NUD_DELAY | NUD_PROBE)) return NL_OK;
    }
    if (hdr->nlmsg_type == RTM_NEWADDR || hdr->nlmsg_type == RTM_DELADDR) self->addresses_changed_ = true;
    self->changed_ = true;
    return NL_OK;
}

bool NetlinkWatcher::drain() {
    changed_ = false;
    addresses_changed_ = false;
    for (;;) {
        int rc = nl_recvmsgs_default(sock_);
        if (rc == -NLE_NOMEM) {  // socket overrun: notifications were lost
            changed_ = true;
            addresses_changed_ = true;
            continue;
        }
        if (rc < 0) break;  // -NLE_AGAIN: nothing more queued
    }
    return changed_;
}

}  // namespace sluice
