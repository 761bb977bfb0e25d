#include "observe/metrics_server.h"

#include <httplib.h>

#include "observe/prometheus_text.h"

namespace sluice::observe {

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& address, uint16_t port,
                                                            std::function<std::string()> render) {
    std::unique_ptr<MetricsServer> s(new MetricsServer());
    s->server_ = std::make_unique<httplib::Server>();
    s->address_ = address;
    s->port_ = port;
    // Scrapes are rare and small: four threads serve them (httplib's default
    // pool is one thread per CPU).
    s->server_->new_task_queue = [] { return new httplib::ThreadPool(4); };
    // A client that is slow to send its request cannot hold a worker long.
    s->server_->set_read_timeout(2, 0);
    s->server_->set_keep_alive_max_count(1);
    // Only GET and HEAD are served. Answered before routing, since httplib
    // reads a POST's (or PUT's) body before it looks for a handler, and
    // without a Content-Length it would wait out the read timeout first.
    s->server_->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
        if (req.method == "GET" || req.method == "HEAD") return httplib::Server::HandlerResponse::Unhandled;
        res.status = 405;
        res.set_header("Allow", "GET, HEAD");
        res.set_content("sluice: /metrics answers GET and HEAD only\n", "text/plain");
        return httplib::Server::HandlerResponse::Handled;
    });
    s->server_->Get("/metrics", [render](const httplib::Request&, httplib::Response& res) {
        try {
            res.set_content(render(), kPrometheusContentType);
        } catch (const std::exception& e) {
            res.status = 500;
            res.set_content(std::string("sluice: cannot collect metrics: ") + e.what() + "\n", "text/plain");
        }
    });
    s->server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("sluice: metrics are at /metrics\n", "text/plain");
    });
    const std::string where = (address.find(':') != std::string::npos ? "[" + address + "]" : address) + ":" +
                              std::to_string(port);
    if (!s->server_->bind_to_port(address, port))
        return make_error(ErrorCode::Busy, "cannot listen on " + where +
                                             " for /metrics: the address is in use or not an address of this "
                                             "host (metrics.listen)");
    httplib::Server* server = s->server_.get();
    s->thread_ = std::thread([server] { server->listen_after_bind(); });
    return s;
}

MetricsServer::~MetricsServer() {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
}

}  // namespace sluice::observe
