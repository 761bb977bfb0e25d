// Watches routes, neighbours, addresses and links (libnl) and reports when the
// FIB may have changed, so cached FIB results in sessions are re-resolved, and
// when interface addresses changed, so source NAT's nat_ifaddrs is rewritten.
#pragma once

#include <memory>

#include "common/result.h"

struct nl_sock;
struct nl_msg;

namespace sluice {

class NetlinkWatcher {
public:
    static Result<std::unique_ptr<NetlinkWatcher>> open();
    ~NetlinkWatcher();

    int fd() const;
    // Reads pending notifications; true if any of them can change a FIB result.
    bool drain();
    // After drain(): whether an address was added or removed (or notifications
    // were lost, so it may have been).
    bool addresses_changed() const { return addresses_changed_; }

private:
    NetlinkWatcher() = default;
    nl_sock* sock_ = nullptr;
    bool changed_ = false;
    bool addresses_changed_ = false;
    static int on_message(::nl_msg* msg, void* arg);
};

}  // namespace sluice
