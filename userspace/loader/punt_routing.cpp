#include "loader/punt_routing.h"

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/addr.h>
#include <netlink/netlink.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>
#include <sys/socket.h>

#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

namespace sluice {
namespace {

using NlSock = std::unique_ptr<nl_sock, decltype(&nl_socket_free)>;

Result<NlSock> connect_route() {
    NlSock sock(nl_socket_alloc(), &nl_socket_free);
    if (!sock) return make_error("punt routing: cannot allocate a netlink socket");
    if (int rc = nl_connect(sock.get(), NETLINK_ROUTE); rc < 0)
        return make_error(std::string("punt routing: cannot open rtnetlink: ") + nl_geterror(rc));
    return sock;
}

const char* family_name(int family) { return family == AF_INET ? "IPv4" : "IPv6"; }

std::unique_ptr<rtnl_rule, decltype(&rtnl_rule_put)> make_rule(int family, const PuntRouting& r) {
    std::unique_ptr<rtnl_rule, decltype(&rtnl_rule_put)> rule(rtnl_rule_alloc(), &rtnl_rule_put);
    rtnl_rule_set_family(rule.get(), family);
    rtnl_rule_set_mark(rule.get(), r.mark);
    rtnl_rule_set_mask(rule.get(), 0xffffffff);
    rtnl_rule_set_table(rule.get(), r.table);
    rtnl_rule_set_prio(rule.get(), r.priority);
    rtnl_rule_set_action(rule.get(), FR_ACT_TO_TBL);
    return rule;
}

std::unique_ptr<rtnl_route, decltype(&rtnl_route_put)> make_route(int family, const PuntRouting& r) {
    std::unique_ptr<rtnl_route, decltype(&rtnl_route_put)> route(rtnl_route_alloc(), &rtnl_route_put);
    rtnl_route_set_family(route.get(), static_cast<uint8_t>(family));
    rtnl_route_set_table(route.get(), r.table);
    rtnl_route_set_type(route.get(), RTN_LOCAL);
    rtnl_route_set_scope(route.get(), RT_SCOPE_HOST);
    rtnl_route_set_protocol(route.get(), RTPROT_STATIC);
    unsigned char zero[16] = {};
    nl_addr* dst = nl_addr_build(family, zero, family == AF_INET ? 4 : 16);
    nl_addr_set_prefixlen(dst, 0);
    rtnl_route_set_dst(route.get(), dst);
    nl_addr_put(dst);
    rtnl_nexthop* nh = rtnl_route_nh_alloc();
    rtnl_route_nh_set_ifindex(nh, static_cast<int>(if_nametoindex("lo")));
    rtnl_route_add_nexthop(route.get(), nh);  // the route owns nh now
    return route;
}

}  // namespace

Status install_punt_routing(const PuntRouting& r) {
    auto sock = connect_route();
    if (!sock) return sock.error();
    if (if_nametoindex("lo") == 0) return make_error("punt routing: no loopback device in this network namespace");
    for (int family : {AF_INET, AF_INET6}) {
        auto route = make_route(family, r);
        if (int rc = rtnl_route_add(sock->get(), route.get(), NLM_F_CREATE | NLM_F_REPLACE); rc < 0)
            return make_error(std::string("punt routing: cannot add the ") + family_name(family) +
                              " local route to table " + std::to_string(r.table) + ": " + nl_geterror(rc));
        auto rule = make_rule(family, r);
        // NLM_F_EXCL: the kernel refuses a duplicate instead of adding a second copy.
        int rc = rtnl_rule_add(sock->get(), rule.get(), NLM_F_CREATE | NLM_F_EXCL);
        if (rc < 0 && rc != -NLE_EXIST)
            return make_error(std::string("punt routing: cannot add the ") + family_name(family) + " rule fwmark " +
                              std::to_string(r.mark) + " → table " + std::to_string(r.table) + ": " + nl_geterror(rc));
    }
    return {};
}

Status remove_punt_routing(const PuntRouting& r) {
    auto sock = connect_route();
    if (!sock) return sock.error();
    std::string problems;
    for (int family : {AF_INET, AF_INET6}) {
        auto rule = make_rule(family, r);
        if (int rc = rtnl_rule_delete(sock->get(), rule.get(), 0); rc < 0 && rc != -NLE_OBJ_NOTFOUND && rc != -NLE_NOADDR)
            problems += std::string(problems.empty() ? "" : "; ") + family_name(family) + " rule: " + nl_geterror(rc);
        auto route = make_route(family, r);
        if (int rc = rtnl_route_delete(sock->get(), route.get(), 0); rc < 0 && rc != -NLE_OBJ_NOTFOUND && rc != -NLE_NOADDR)
            problems += std::string(problems.empty() ? "" : "; ") + family_name(family) + " route: " + nl_geterror(rc);
    }
    if (!problems.empty()) return make_error("punt routing: cannot remove " + problems);
    return {};
}

namespace {

std::mutex lease_mutex;
std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int> lease_counts;

std::tuple<uint32_t, uint32_t, uint32_t> lease_key(const PuntRouting& r) { return {r.mark, r.table, r.priority}; }

}  // namespace

Result<std::shared_ptr<PuntRoutingLease>> PuntRoutingLease::acquire(const PuntRouting& routing) {
    std::lock_guard lock(lease_mutex);
    int& count = lease_counts[lease_key(routing)];
    if (count == 0) {
        if (auto s = install_punt_routing(routing); !s) {
            lease_counts.erase(lease_key(routing));
            return s.error();
        }
    }
    ++count;
    return std::shared_ptr<PuntRoutingLease>(new PuntRoutingLease(routing));
}

PuntRoutingLease::~PuntRoutingLease() {
    std::lock_guard lock(lease_mutex);
    auto it = lease_counts.find(lease_key(routing_));
    if (it == lease_counts.end() || --it->second > 0) return;
    lease_counts.erase(it);
    if (auto s = remove_punt_routing(routing_); !s) std::cerr << "sluice: " << s.error().message << std::endl;
}

}  // namespace sluice
