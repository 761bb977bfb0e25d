// The daemon's end of the control socket (control_protocol.h): a listening
// Unix socket in the instance's state directory, polled by the daemon's
// loop. Each connection carries one request, answered before the loop goes
// on: the daemon is one thread, so a reload runs to its end first and the
// reply says how it ended.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/result.h"
#include "daemon/control_protocol.h"

namespace sluice::control {

class ControlServer {
public:
    // Binds `path` (a stale socket there is replaced: the caller has made
    // sure no other daemon of the instance runs), mode 0600.
    static Result<std::unique_ptr<ControlServer>> open(const std::string& path);
    ~ControlServer();
    ControlServer(const ControlServer&) = delete;
    ControlServer& operator=(const ControlServer&) = delete;

    int fd() const { return fd_; }

    // Accepts one waiting connection, reads its request (a client gets a
    // second to send it) and writes handler(request)'s reply. A malformed
    // request or a request of another protocol version is answered ok=false
    // without calling the handler. An Error concerns that client only.
    Status serve_one(const std::function<Reply(const Request&)>& handler);

private:
    ControlServer(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    int fd_;
    std::string path_;
};

}  // namespace sluice::control
