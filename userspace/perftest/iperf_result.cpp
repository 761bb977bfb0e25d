#include "perftest/iperf_result.h"

#include <nlohmann/json.hpp>

namespace sluice::perftest {

namespace {

double number_at(const nlohmann::json& object, const char* key) {
    auto it = object.find(key);
    return (it != object.end() && it->is_number()) ? it->get<double>() : 0.0;
}

}  // namespace

Result<IperfResult> parse_iperf_json(const std::string& text) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) return make_error("iperf3: no output");
    auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) return make_error("iperf3: output is not JSON");
    if (auto it = doc.find("error"); it != doc.end()) {
        return make_error("iperf3: " + (it->is_string() ? it->get<std::string>() : it->dump()));
    }
    auto end = doc.find("end");
    if (end == doc.end() || !end->is_object()) return make_error("iperf3: JSON has no \"end\" section");
    auto sent = end->find("sum_sent");
    auto received = end->find("sum_received");
    if (sent == end->end() || received == end->end() || !sent->is_object() || !received->is_object()) {
        return make_error("iperf3: JSON has no end.sum_sent / end.sum_received (not a TCP client run?)");
    }

    IperfResult r;
    r.sender_bps = number_at(*sent, "bits_per_second");
    r.receiver_bps = number_at(*received, "bits_per_second");
    r.receiver_bytes = number_at(*received, "bytes");
    r.retransmits = static_cast<long long>(number_at(*sent, "retransmits"));
    r.seconds = number_at(*received, "seconds");
    if (auto start = doc.find("start"); start != doc.end() && start->is_object()) {
        if (auto ts = start->find("test_start"); ts != start->end() && ts->is_object()) {
            r.streams = static_cast<int>(number_at(*ts, "num_streams"));
        }
        if (auto to = start->find("connecting_to"); to != start->end() && to->is_object()) {
            r.remote_host = to->value("host", "");
        }
        r.version = start->value("version", "");
    }
    return r;
}

Result<std::string> parse_iperf_server_peer(const std::string& text) {
    auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) return make_error("iperf3 server: output is not JSON");
    const auto* connected = doc.contains("start") && doc["start"].is_object() ? &doc["start"] : nullptr;
    if (!connected || !connected->contains("connected") || !(*connected)["connected"].is_array() ||
        (*connected)["connected"].empty())
        return make_error("iperf3 server: no start.connected (no client reached it)");
    const auto& first = (*connected)["connected"][0];
    std::string host = first.is_object() ? first.value("remote_host", "") : "";
    if (host.empty()) return make_error("iperf3 server: start.connected[0] has no remote_host");
    if (host.rfind("::ffff:", 0) == 0 && host.find('.') != std::string::npos) host = host.substr(7);
    return host;
}

}  // namespace sluice::perftest
