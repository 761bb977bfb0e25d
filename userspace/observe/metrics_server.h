// The HTTP endpoint Prometheus scrapes: GET /metrics answers with what
// `render` returns, rendered on the server's own thread at each scrape
// (cpp-httplib). Anything else is 404. One listener; a config that moves it
// starts a new server before the old one stops, so a bad address leaves the
// running one in place.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/result.h"

namespace httplib {
class Server;
}

namespace sluice::observe {

class MetricsServer {
public:
    // Binds address:port (an IPv6 address without brackets) and serves;
    // an address in use or not on this host is an error naming it.
    static Result<std::unique_ptr<MetricsServer>> start(const std::string& address, uint16_t port,
                                                        std::function<std::string()> render);
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    const std::string& address() const { return address_; }
    uint16_t port() const { return port_; }

private:
    MetricsServer() = default;
    std::unique_ptr<httplib::Server> server_;
    std::thread thread_;
    std::string address_;
    uint16_t port_ = 0;
};

}  // namespace sluice::observe
