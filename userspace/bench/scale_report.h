// The report of `sluice bench scale`, from its records alone: the Markdown
// tables of parts (a), (b) and (c), the configs' sizes and load times, the
// probes, the per-run counters, and the SVG chart.
//
// The records (JSON lines; every one also has "bench": "scale"):
//   {"type":"setup", date, rev, machine, load_start, nft_version, ct_max, passes, time, streams, udp_len,
//    udp_streams, port_width, conn_time, conn_threads, conn_concurrency, cost_passes, cost_calls, quick, svg}
//   {"type":"check", part, kind, n, proto, status: ok|invalid, wall_s, compile_ms, classifier_bytes[, detail]}
//   {"type":"load", system, part, kind, n, proto, seconds}      sluice start / nft -f
//   {"type":"probe", part, system, kind, n, proto, verdict: blocked|passed, detail}
//   {"type":"skip", part, system, kind, n, proto[, pass]}        a point left out (config rejected)
//   {"type":"a", system, kind, n, proto, pass, gbps, sent_gbps[, mpps, loss_pct, app_gbps], server_saw, detail}
//       UDP: gbps and mpps forwarded (counted at the WAN host's interface), loss before the WAN host,
//       app_gbps what iperf3's server read; TCP: gbps received
//   {"type":"b", system, kind, n, pass, rate, completed, failed, p50, p99, detail}
//   {"part":"c", ...}: a line of sluice_scale_cost as it printed it ("type": "cost" or "apply")
//   {"type":"end", load_end, elapsed_s}
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace sluice::bench {

std::string scale_report_markdown(const std::vector<nlohmann::json>& records);
// "" when there is nothing to draw.
std::string scale_report_svg(const std::vector<nlohmann::json>& records);

// "12 150 (11 252–14 324)": median (min–max), thousands grouped by a space
// from 10,000 on; "–" for no values.
std::string scale_spread(std::vector<double> values, int digits);

}  // namespace sluice::bench
