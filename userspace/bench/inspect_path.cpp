#include "bench/inspect_path.h"

#include <cstdio>

namespace sluice::bench {
namespace {

uint64_t get(const Counters& c, const std::string& k) {
    auto it = c.find(k);
    return it == c.end() ? 0 : it->second;
}

std::string n(uint64_t v) {
    return std::to_string(v);
}

bool is_count(const nlohmann::json& v) {
    return v.is_number_unsigned() || v.is_number_integer();
}

}  // namespace

Result<InspectCounters> flatten_inspect(const nlohmann::json& doc) {
    if (!doc.is_object() || !doc.contains("stage") || !doc["stage"].is_object() || !doc.contains("rulesets") ||
        !doc["rulesets"].is_array())
        return make_error("sluice show inspect --json: no \"stage\" object and \"rulesets\" array");
    InspectCounters out;
    out.overloaded = doc["stage"].value("overloaded", false);
    for (const auto& rs : doc["rulesets"]) {
        if (!rs.is_object() || !rs.contains("name") || !rs["name"].is_string())
            return make_error("sluice show inspect --json: a ruleset without a name");
        RulesetCounters flat;
        if (rs.contains("stage") && rs["stage"].is_object())
            for (const auto& [k, v] : rs["stage"].items())
                if (is_count(v)) flat.counters[k] = v.get<uint64_t>();
        if (rs.contains("fast_path") && rs["fast_path"].is_object())
            for (const auto& [k, v] : rs["fast_path"].items())
                if (is_count(v)) flat.counters["fp_" + k] = v.get<uint64_t>();
        if (rs.contains("patterns") && rs["patterns"].is_array())
            for (const auto& p : rs["patterns"])
                if (p.is_object() && p.contains("name") && p["name"].is_string() && p.contains("matches") &&
                    is_count(p["matches"]))
                    flat.patterns[p["name"].get<std::string>()] = p["matches"].get<uint64_t>();
        out.rulesets[rs["name"].get<std::string>()] = std::move(flat);
    }
    return out;
}

uint64_t pattern_matches(const InspectCounters& c, const std::string& ruleset, const std::string& pattern) {
    auto it = c.rulesets.find(ruleset);
    return it == c.rulesets.end() ? 0 : get(it->second.patterns, pattern);
}

std::string PathCheck::problem_text() const {
    std::string out;
    for (const auto& p : problems) out += (out.empty() ? "" : "; ") + p;
    return out;
}

std::string own_ruleset(const std::string& mode) {
    if (mode == "inspect") return "bench";
    if (mode == "handoff") return "bench-handoff";
    return "";
}

PathCheck check_path(const PathExpectation& e, const PathSnapshot& before, const PathSnapshot& after) {
    PathCheck r;
    r.datapath = counter_delta(before.stats, after.stats);
    const Counters& d = r.datapath;

    std::map<std::string, Counters> rulesets;  // every ruleset of the later reading, its delta
    for (const auto& [name, a] : after.inspect.rulesets) {
        auto b = before.inspect.rulesets.find(name);
        rulesets[name] = counter_delta(b == before.inspect.rulesets.end() ? Counters{} : b->second.counters,
                                       a.counters);
    }
    const std::string own = own_ruleset(e.mode);
    if (!own.empty()) {
        if (auto it = rulesets.find(own); it != rulesets.end()) r.stage = it->second;
    } else {
        for (const auto& [name, c] : rulesets)
            for (const auto& [k, v] : c) r.stage[k] += v;
    }
    const Counters& c = r.stage;

    const uint64_t punted = get(d, "punt-to-inspection");
    const uint64_t spliced = get(d, "tcp-spliced-after-inspection");
    Counters dropped;
    uint64_t dropped_sum = 0;
    for (const auto& [k, v] : d)
        if (k.rfind("drop-", 0) == 0 && v) {
            dropped[k] = v;
            dropped_sum += v;
        }
    std::string drops;
    for (const auto& [k, v] : dropped) drops += (drops.empty() ? " " : ",") + k + "=" + n(v);
    const uint64_t c2s = get(c, "bytes_client_to_server");
    std::string share;
    if (e.mode == "handoff" && e.received) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " (%.2f%% of received)",
                      100.0 * static_cast<double>(c2s) / static_cast<double>(e.received));
        share = buf;
    }
    r.summary = "rx=" + n(get(d, "rx")) + " xdp_redirect=" + n(get(d, "forward")) +
                " passed=" + n(sum_prefixed(d, "pass-")) + " punted=" + n(punted) +
                " punt-socket-assigned=" + n(get(d, "tc-punt-socket-assigned")) + " dropped=" + n(dropped_sum) +
                drops + " stage: connections=" + n(get(c, "connections")) + " scanned_c2s=" + n(c2s) + share +
                " scanned_s2c=" + n(get(c, "bytes_server_to_client"));
    if (e.mode == "handoff")
        r.summary += " handoffs=" + n(get(c, "handoffs")) + " handoff_refused=" + n(get(c, "handoff_refused")) +
                     " tcp-spliced-after-inspection=" + n(spliced);

    auto& bad = r.problems;
    if (!own.empty()) {
        if (get(c, "connections") < e.connections)
            bad.push_back("the stage accepted " + n(get(c, "connections")) + " connections, expected at least " +
                          n(e.connections));
        if (punted == 0) bad.push_back("the fast path punted nothing");
        std::vector<std::string> bad_counters{"matches",      "resets",
                                              "drops",        "stage_errors",
                                              "fp_fail_open_packets", "fp_fail_closed_packets",
                                              "fp_verdict_drop_packets"};
        if (e.mode == "inspect") {
            for (const char* k : {"offloaded", "handoffs", "handoff_refused"}) bad_counters.push_back(k);
            if (c2s < e.received)
                bad.push_back("the stage scanned " + n(c2s) + " bytes client-to-server, the server received " +
                              n(e.received));
        } else {
            bad_counters.push_back("handoff_refused");
            if (get(c, "handoffs") < e.streams)
                bad.push_back("the stage handed " + n(get(c, "handoffs")) +
                              " connections back to XDP, expected at least " + n(e.streams) +
                              " (one per iperf3 data stream)");
            if (c2s < e.streams * e.handoff_bytes)
                bad.push_back("the stage scanned " + n(c2s) + " bytes client-to-server, expected at least " +
                              n(e.streams) + " x " + n(e.handoff_bytes) + " (inspect-bytes of each data stream)");
            if (spliced < e.streams)
                bad.push_back("tcp-spliced-after-inspection = " + n(spliced) +
                              ": XDP did not carry the handed-off connections");
        }
        for (const auto& k : bad_counters)
            if (get(c, k)) bad.push_back(k + " = " + n(get(c, k)));
        for (const auto& [name, rc] : rulesets)
            if (name != own && (get(rc, "connections") || get(rc, "bytes_client_to_server")))
                bad.push_back("ruleset " + name + " saw " + n(get(rc, "connections")) + " connections on the " +
                              e.mode + " path");
        if (after.inspect.overloaded || before.inspect.overloaded)
            bad.push_back("the stage reported itself overloaded");
    } else if (get(c, "connections") || c2s || punted) {
        bad.push_back("the stage saw " + n(get(c, "connections")) + " connections (" + n(punted) +
                      " packets punted) on the fast path");
    }
    if (get(d, "drop-session-table-full"))
        bad.push_back("drop-session-table-full = " + n(get(d, "drop-session-table-full")) +
                      ": the session table is full");
    return r;
}

}  // namespace sluice::bench
