#include "bench/netns_thread.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace sluice::bench {

Status enter_netns(const std::string& netns) {
    const std::string path = "/run/netns/" + netns;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_error("network namespace " + path, errno);
    int rc = setns(fd, CLONE_NEWNET);
    int err = errno;
    close(fd);
    if (rc != 0) return errno_error("cannot enter network namespace " + netns, err);
    return {};
}

Status in_netns(const std::string& netns, const std::function<Status()>& fn) {
    Status result;
    std::thread t([&] {
        if (auto s = enter_netns(netns); !s) {
            result = s;
            return;
        }
        result = fn();
    });
    t.join();
    return result;
}

}  // namespace sluice::bench
