#include "bench/failover_outage.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sstream>

namespace sluice::bench {

double TcpOutage::longest_ms() const {
    int bins = 0;
    for (const auto& s : streams) bins = std::max(bins, s.longest_zero_bins);
    // iperf3's bins are -i wide give or take its timer (0.1001 s): counted
    // as -i, so two outages of as many bins compare equal.
    return bins * std::round(bin_seconds * 1000.0);
}

Result<TcpOutage> parse_tcp_outage(const std::string& server_json, double after) {
    // A server's log may carry a line of its own before the JSON object.
    auto open = server_json.find('{');
    if (open == std::string::npos) return make_error("iperf3 server printed no JSON: " + server_json.substr(0, 200));
    nlohmann::json doc = nlohmann::json::parse(server_json.substr(open), nullptr, false);
    if (doc.is_discarded()) return make_error("iperf3 server output is not JSON: " + server_json.substr(0, 200));
    if (!doc.contains("intervals") || !doc["intervals"].is_array() || doc["intervals"].empty()) {
        std::string why = doc.contains("error") && doc["error"].is_string() ? doc["error"].get<std::string>()
                                                                            : "no intervals";
        return make_error("iperf3 server recorded no intervals (" + why + ")");
    }
    struct Acc {
        int run = 0, longest = 0;
        double after = 0;
    };
    std::map<int, Acc> acc;
    TcpOutage out;
    for (const auto& interval : doc["intervals"]) {
        if (!interval.contains("streams")) continue;
        for (const auto& s : interval["streams"]) {
            const int socket = s.value("socket", 0);
            const double bytes = s.value("bytes", 0.0);
            const double start = s.value("start", 0.0);
            const double seconds = s.value("seconds", 0.0);
            if (out.bin_seconds == 0 && seconds > 0) out.bin_seconds = seconds;
            Acc& a = acc[socket];
            if (bytes == 0) {
                a.longest = std::max(a.longest, ++a.run);
            } else {
                a.run = 0;
            }
            if (start >= after) a.after += bytes;
        }
    }
    if (acc.empty()) return make_error("iperf3 server intervals name no stream");
    // Bins are as wide as the server's -i; a short last bin does not change it.
    for (const auto& [socket, a] : acc) {
        out.streams.push_back({socket, a.longest, a.after});
        if (a.after > 0) ++out.survived;
    }
    return out;
}

Result<PingGap> parse_ping_gap(const std::string& text, double from, double to) {
    static const std::regex reply(R"(^\[(\d+\.\d+)\] \d+ bytes from )");
    static const std::regex summary(R"((\d+) packets transmitted, (\d+) (packets )?received)");
    PingGap g;
    std::istringstream in(text);
    std::string line;
    double previous = -1;
    bool have_summary = false;
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_search(line, m, reply)) {
            const double t = std::stod(m[1].str());
            if (previous >= 0) {
                const double gap = (t - previous) * 1000.0;
                if (from <= to && previous <= to && t >= from) {
                    if (gap > g.event_gap_ms) {
                        g.event_gap_ms = gap;
                        g.event_gap_from = previous;
                    }
                } else {
                    g.other_gap_ms = std::max(g.other_gap_ms, gap);
                }
            }
            previous = t;
            ++g.replies;
        } else if (std::regex_search(line, m, summary)) {
            g.transmitted = std::stoi(m[1].str());
            g.received = std::stoi(m[2].str());
            have_summary = true;
        }
    }
    if (!have_summary) return make_error("ping printed no summary line (was it stopped early?): " + text.substr(0, 200));
    if (g.replies < 2) return make_error("ping got " + std::to_string(g.replies) + " replies: no gap to measure");
    return g;
}

}  // namespace sluice::bench
