#include "bench/link_counters.h"

#include <ifaddrs.h>
#include <linux/if_link.h>
#include <sys/socket.h>

#include <cerrno>

#include "bench/netns_thread.h"

namespace sluice::bench {

Result<TxCounters> tx_counters(const std::string& netns, const std::string& dev) {
    TxCounters out;
    auto s = in_netns(netns, [&]() -> Status {
        ifaddrs* list = nullptr;
        if (getifaddrs(&list) != 0) return errno_error("getifaddrs in " + netns, errno);
        bool found = false;
        // The AF_PACKET entry of a device carries its link statistics.
        for (ifaddrs* a = list; a && !found; a = a->ifa_next) {
            if (!a->ifa_addr || a->ifa_addr->sa_family != AF_PACKET || !a->ifa_data || dev != a->ifa_name) continue;
            const auto* stats = static_cast<const rtnl_link_stats*>(a->ifa_data);
            out.packets = stats->tx_packets;
            out.dropped = stats->tx_dropped;
            found = true;
        }
        freeifaddrs(list);
        if (!found) return make_error("no link statistics for " + dev + " in " + netns);
        return {};
    });
    if (!s) return s.error();
    return out;
}

}  // namespace sluice::bench
