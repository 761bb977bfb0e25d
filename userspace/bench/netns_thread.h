// Work done by this process inside one of the lab's network namespaces:
// setns(CLONE_NEWNET) changes the namespace of the calling thread only, so a
// thread of its own enters the namespace, runs the work and ends. What the
// work made there stays in that namespace (sockets, a devmap entry naming an
// ifindex, an XDP link), whichever thread uses it later.
#pragma once

#include <functional>
#include <string>

#include "common/result.h"

namespace sluice::bench {

// Enters /run/netns/NETNS in the calling thread (for a thread that lives
// there, e.g. a listener).
Status enter_netns(const std::string& netns);

// Runs `fn` on a new thread inside NETNS and waits for it.
Status in_netns(const std::string& netns, const std::function<Status()>& fn);

}  // namespace sluice::bench
