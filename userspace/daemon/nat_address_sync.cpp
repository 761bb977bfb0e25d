#include "daemon/nat_address_sync.h"

#include "daemon/accept_local.h"
#include "daemon/daemon_log.h"
#include "loader/map_io.h"
#include "loader/nat_ifaddrs.h"
#include "loader/session_table.h"

extern "C" {
#include "map_names.h"
}

namespace sluice {
namespace {

// The device whose address source NAT to this interface uses: the one the
// FIB names as egress (the VLAN device for a sub-interface).
uint32_t egress_ifindex(const ResolvedInterface& itf) {
    return itf.vlan_id != 0 && itf.vlan_ifindex != 0 ? itf.vlan_ifindex : itf.ifindex;
}

std::string ifaddr_text(const nat_ifaddr& a) {
    uint32_t v4[4] = {a.v4, 0, 0, 0};
    std::string text = a.has_v4 ? address_text(SLUICE_FAMILY_IPV4, v4) : "no IPv4";
    return text + " " + (a.has_v6 ? address_text(SLUICE_FAMILY_IPV6, a.v6) : "no IPv6");
}

}  // namespace

void NatAddressSync::adopt(config::Nat nat, std::vector<ResolvedInterface> interfaces) {
    nat_ = std::move(nat);
    interfaces_ = std::move(interfaces);
    refresh();
    apply_accept_local();
}

void NatAddressSync::refresh() {
    std::vector<uint32_t> ifindexes;
    for (const auto& itf : interfaces_) ifindexes.push_back(egress_ifindex(itf));
    auto written = sync_nat_ifaddrs(dp_.map_fd(SLUICE_MAP_NAT_IFADDRS), ifindexes);
    if (!written) {
        daemon_log("warning: source NAT to interface addresses: " + written.error().message);
        return;
    }
    if (!config_has_nat(nat_)) return;
    std::string summary;
    for (const auto& itf : interfaces_) {
        for (const auto& [ifindex, addr] : written.value()) {
            if (ifindex == egress_ifindex(itf))
                summary += (summary.empty() ? "" : "; ") + itf.name + " " + ifaddr_text(addr);
        }
    }
    if (summary != logged_) daemon_log("source NAT interface addresses: " + summary);
    logged_ = summary;
}

void NatAddressSync::apply_accept_local() {
    if (!config_has_nat(nat_)) return;  // left as the operator set it
    std::vector<std::string> names;
    for (const auto& itf : interfaces_) names.push_back(itf.name);
    std::string joined;
    for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
    daemon_log("NAT configured: setting net.ipv4.conf.<if>.accept_local=1 on " + joined +
               " (after source NAT, packets the kernel forwards for the fast path may carry this firewall's own "
               "address as source; without accept_local IPv4 drops them as martians)");
    for (const auto& failure : enable_accept_local_all(names)) daemon_log("warning: " + failure);
}

}  // namespace sluice
