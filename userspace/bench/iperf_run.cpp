#include "bench/iperf_run.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

namespace sluice::bench {

Result<std::pair<uint64_t, double>> parse_iperf_sent(const std::string& client_json) {
    auto doc = nlohmann::json::parse(client_json, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("end") || !doc["end"].is_object() ||
        !doc["end"].contains("sum_sent") || !doc["end"]["sum_sent"].is_object())
        return make_error("iperf3: JSON has no end.sum_sent");
    const auto& sent = doc["end"]["sum_sent"];
    uint64_t packets = sent.contains("packets") && sent["packets"].is_number() ? sent["packets"].get<uint64_t>() : 0;
    double seconds = sent.contains("seconds") && sent["seconds"].is_number() ? sent["seconds"].get<double>() : 0;
    return std::pair<uint64_t, double>(packets, seconds);
}

Result<uint64_t> parse_rx_packets(const std::string& ip_json) {
    auto doc = nlohmann::json::parse(ip_json, nullptr, false);
    if (doc.is_discarded() || !doc.is_array() || doc.empty() || !doc[0].is_object())
        return make_error("`ip -j -s link show` printed no JSON array");
    const auto& link = doc[0];
    if (!link.contains("stats64") || !link["stats64"].contains("rx") || !link["stats64"]["rx"].contains("packets") ||
        !link["stats64"]["rx"]["packets"].is_number())
        return make_error("`ip -j -s link show` has no stats64.rx.packets");
    return link["stats64"]["rx"]["packets"].get<uint64_t>();
}

namespace {

Result<uint64_t> rx_packets(Lab& lab, const std::string& node, const std::string& dev) {
    auto out = lab.output(node, {"ip", "-j", "-s", "link", "show", "dev", dev});
    if (!out) return out.error();
    return parse_rx_packets(*out);
}

}  // namespace

Result<IperfOutcome> run_iperf(Lab& lab, const IperfSpec& spec) {
    const std::string port = std::to_string(spec.port);
    auto server = lab.start(spec.server_node, {"iperf3", "-s", "-1", "-J", "-p", port}, "iperf3-server-" + port,
                            spec.server_cpu);
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
    if (spec.udp) argv.push_back("-u");
    if (!spec.bitrate.empty()) {
        argv.push_back("-b");
        argv.push_back(spec.bitrate);
    }
    if (spec.length > 0) {
        argv.push_back("-l");
        argv.push_back(std::to_string(spec.length));
    }
    if (spec.connect_timeout_ms > 0) {
        argv.push_back("--connect-timeout");
        argv.push_back(std::to_string(spec.connect_timeout_ms));
    }
    if (spec.client_cpu >= 0) argv.insert(argv.begin(), {"taskset", "-c", std::to_string(spec.client_cpu)});
    uint64_t rx_before = 0;
    if (!spec.count_rx_device.empty()) {
        auto rx = rx_packets(lab, spec.server_node, spec.count_rx_device);
        if (!rx) {
            (void)lab.stop(*server);
            return rx.error();
        }
        rx_before = *rx;
    }
    auto client = lab.run(spec.client_node, argv, std::chrono::seconds(spec.seconds + 30));
    uint64_t rx_after = rx_before;
    if (!spec.count_rx_device.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        auto rx = rx_packets(lab, spec.server_node, spec.count_rx_device);
        if (!rx) {
            (void)lab.stop(*server);
            return rx.error();
        }
        rx_after = *rx;
    }
    // The one-shot server exits after its client; give it a moment, then stop it.
    for (int i = 0; i < 50 && lab.running(*server); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    (void)lab.stop(*server);
    if (!client) return client.error();
    auto parsed = perftest::parse_iperf_json(client->out);
    if (!parsed) return with_context("iperf3 -c " + spec.target + " -p " + port, parsed.error());
    IperfOutcome outcome{.client = *parsed, .server_saw = ""};
    outcome.rx_packets = rx_after >= rx_before ? rx_after - rx_before : 0;
    if (auto sent = parse_iperf_sent(client->out)) {
        outcome.sent_packets = sent->first;
        outcome.sent_seconds = sent->second;
    }
    auto peer = perftest::parse_iperf_server_peer(read_text(server->log_path));
    if (!peer) return peer.error();
    outcome.server_saw = *peer;
    return outcome;
}

}  // namespace sluice::bench
