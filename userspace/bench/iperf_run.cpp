#include "bench/iperf_run.h"

#include <chrono>
#include <thread>

namespace sluice::bench {

Result<IperfOutcome> run_iperf(Lab& lab, const IperfSpec& spec) {
    const std::string port = std::to_string(spec.port);
    auto server = lab.start(spec.server_node, {"iperf3", "-s", "-1", "-J", "-p", port}, "iperf3-server-" + port);
    if (!server) return server.error();
    bool listening = false;
    for (int i = 0; i < 50 && !listening; ++i) {
        auto ss = lab.run(spec.server_node, {"ss", "-Hltn", "sport", "=", ":" + port}, std::chrono::seconds(5));
        listening = ss && ss->exit_status == 0 && ss->out.find_first_not_of(" \n") != std::string::npos;
        if (!listening) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!listening) {
        (void)lab.stop(*server);
        return make_error("iperf3 -s on " + lab.ns(spec.server_node) + " port " + port + " did not listen within 5 s");
    }
    std::vector<std::string> argv{"iperf3", "-c", spec.target, "-p", port, "-t", std::to_string(spec.seconds),
                                  "-P", std::to_string(spec.streams), "-J"};
    if (!spec.bind.empty()) {
        argv.push_back("-B");
        argv.push_back(spec.bind);
    }
    auto client = lab.run(spec.client_node, argv, std::chrono::seconds(spec.seconds + 30));
    // The one-shot server exits after its client; give it a moment, then stop it.
    for (int i = 0; i < 50 && lab.running(*server); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    (void)lab.stop(*server);
    if (!client) return client.error();
    auto parsed = perftest::parse_iperf_json(client->out);
    if (!parsed) return with_context("iperf3 -c " + spec.target + " -p " + port, parsed.error());
    IperfOutcome outcome{.client = *parsed, .server_saw = ""};
    auto peer = perftest::parse_iperf_server_peer(read_text(server->log_path));
    if (!peer) return peer.error();
    outcome.server_saw = *peer;
    return outcome;
}

}  // namespace sluice::bench
