// The report of `sluice bench inspect`, from its records alone: the
// Markdown tables of (a), (b) with the scanner alone, (c) and the per-run
// counters, and the SVG chart of (b).
//
// Records (JSON lines, each with "bench": "inspect"):
//   {"event": "setup", "date", "machine", "load_start", "passes", "passes_a", "time", "streams", "small",
//    "counts", "conn_time", "conn_warmup", "conn_threads", "conn_concurrency", "handoff_limit", "svg"}
//   {"event": "end", "load_end", "elapsed_s"}
//   {"part": "a", "mode": kernel|fast|inspect|handoff, "family": v4|v6, "pass", "gbps", "path", ...}
//   {"part": "b", "mode": kernel|fast|inspect, "family": "v4", "pass", "gbps", "patterns" (inspect), "path", ...}
//   {"part": "b", "event": start|reload, "patterns", "pass", "seconds"}
//   {"part": "c", "mode": kernel|fast|inspect, "family", "pass", "per_second", "completed", "failed",
//    "p50_us", "p99_us", "path", "client" (its JSON, when connections failed)}
//   {"part": "s", "patterns", "round", "compile_s", "stream_state_bytes", "c2s_gbps", "s2c_gbps"}
// "path" is check_path's summary of a sluice run ("" for kernel forwarding).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace sluice::bench {

std::string inspect_report(const std::vector<nlohmann::json>& records);

// The chart of (b): inspected throughput against the pattern count (log
// scale), with the fast path and kernel forwarding as reference levels; ""
// when the records hold no point of (b).
std::string inspect_chart(const std::vector<nlohmann::json>& records);

}  // namespace sluice::bench
