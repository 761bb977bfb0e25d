#include "daemon/metrics_collector.h"

#include <netinet/in.h>

#include <array>

#include "inspect/counter_table.h"
#include "loader/datapath.h"
#include "loader/host_inbound_tables.h"
#include "loader/map_io.h"
#include "loader/nat_reservations.h"
#include "loader/policy_observation.h"
#include "loader/session_table.h"
#include "loader/stat_names.h"

extern "C" {
#include "map_names.h"
}

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "unknown"
#endif

namespace sluice {
namespace {

using observe::Labels;
using observe::MetricFamily;
using observe::MetricType;

MetricFamily family(std::string name, std::string help, MetricType type = MetricType::counter) {
    MetricFamily f;
    f.name = std::move(name);
    f.help = std::move(help);
    f.type = type;
    return f;
}

double d(uint64_t v) { return static_cast<double>(v); }

const char* family_name(uint8_t family) { return family == SLUICE_FAMILY_IPV4 ? "ipv4" : "ipv6"; }

std::string protocol_label(uint8_t protocol) {
    switch (protocol) {
    case IPPROTO_TCP: return "tcp";
    case IPPROTO_UDP: return "udp";
    case IPPROTO_ICMP: return "icmp";
    case IPPROTO_ICMPV6: return "icmpv6";
    default: return "other";
    }
}

std::string action_label(policy_action a) {
    switch (a) {
    case POLICY_ACTION_PERMIT: return "permit";
    case POLICY_ACTION_DENY: return "deny";
    case POLICY_ACTION_REJECT: return "reject";
    case POLICY_ACTION_INSPECT: return "inspect";
    }
    return "deny";
}

void add_stats(std::vector<MetricFamily>& out, const Datapath& dp) {
    auto stats = read_stat_counters(dp.map_fd(SLUICE_MAP_STATS));
    if (!stats) throw std::runtime_error(stats.error().message);
    auto packets = family("sluice_packets_total",
                          "Packets by counter of `sluice show stats`: kind drop (discarded, one reason each), pass "
                          "(handed to the kernel) or info (events on the way).");
    auto bytes = family("sluice_bytes_total",
                        "L3 bytes of the packets counted under the drop and pass reasons and forward.");
    for (int i = 0; i < STAT_REASON_COUNT; ++i) {
        const StatInfo info = stat_info(i);
        Labels labels{{"reason", std::string(info.name)}, {"kind", std::string(info.kind)}};
        packets.add(labels, d(stats.value()[i].packets));
        if (stat_counts_bytes(i)) bytes.add(labels, d(stats.value()[i].bytes));
    }
    out.push_back(std::move(packets));
    out.push_back(std::move(bytes));
}

void add_policies(std::vector<MetricFamily>& out, const Datapath& dp, const MetricsSnapshot& s) {
    auto packets = family("sluice_policy_packets_total",
                          "Packets without a session that the policy judged: each new flow's first packet, every "
                          "packet of a denied flow. policy=\"(default)\": no policy matched.");
    auto bytes = family("sluice_policy_bytes_total", "L3 bytes of sluice_policy_packets_total.");
    auto sessions = family("sluice_policy_sessions_opened_total", "Sessions the policy opened.");
    const int fd = dp.map_fd(SLUICE_MAP_POLICY_HITS);
    auto one = [&](uint32_t id, Labels labels) {
        auto v = read_percpu_words(fd, policy_obs_index(s.generation, id), 3);
        if (!v) throw std::runtime_error(v.error().message);
        packets.add(labels, d(v.value()[0]));
        bytes.add(labels, d(v.value()[1]));
        sessions.add(std::move(labels), d(v.value()[2]));
    };
    for (const auto& p : s.policies)
        one(p.id, {{"policy", p.name}, {"from_zone", p.from_zone}, {"to_zone", p.to_zone},
                   {"action", action_label(p.action)}});
    one(SESSION_POLICY_RELATED,
        {{"policy", "(default)"}, {"from_zone", ""}, {"to_zone", ""}, {"action", action_label(s.default_action)}});
    out.push_back(std::move(packets));
    out.push_back(std::move(bytes));
    out.push_back(std::move(sessions));
}

void add_filters(std::vector<MetricFamily>& out, const Datapath& dp, const MetricsSnapshot& s) {
    auto packets = family("sluice_filter_rule_packets_total", "Packets each stateless filter rule matched.");
    auto bytes = family("sluice_filter_rule_bytes_total", "Bytes of the packets each filter rule matched.");
    const int fd = dp.map_fd(SLUICE_MAP_FILTER_HITS);
    for (const auto& f : s.filters)
        for (size_t i = 0; i < f.rules.size(); ++i) {
            const auto& r = f.rules[i];
            auto v = read_percpu_words(fd, uint32_t(s.generation & 1) * FILTER_MAX_RULES + r.slot, 2);
            if (!v) throw std::runtime_error(v.error().message);
            Labels labels{{"filter", f.name},
                          {"rule", r.name.empty() ? "#" + std::to_string(i + 1) : r.name},
                          {"action", r.action}};
            packets.add(labels, d(v.value()[0]));
            bytes.add(std::move(labels), d(v.value()[1]));
        }
    out.push_back(std::move(packets));
    out.push_back(std::move(bytes));
}

void add_sessions(std::vector<MetricFamily>& out, const Datapath& dp) {
    auto dumped = dump_sessions(dp.map_fd(SLUICE_MAP_SESSIONS_V4), dp.map_fd(SLUICE_MAP_SESSIONS_V6));
    if (!dumped) throw std::runtime_error(dumped.error().message);
    // Flows counted once, by their initiator's entry (a flow whose initiator
    // entry is gone is not counted).
    std::map<std::pair<std::string, std::string>, uint64_t> by_state;
    std::array<uint64_t, 2> entries{};
    for (const char* fam : {"ipv4", "ipv6"})
        for (const char* state : {"syn-sent", "syn-received", "established", "fin-wait", "closing", "time-wait",
                                  "closed", "active"})
            by_state[{fam, state}] = 0;
    for (const auto& e : dumped.value()) {
        entries[e.family == SLUICE_FAMILY_IPV4 ? 0 : 1] += 1;
        if (e.value.flags & SESSION_F_REPLY) continue;
        const std::string state = e.protocol == IPPROTO_TCP ? tcp_state_name(e.value.tcp_state) : "active";
        by_state[{family_name(e.family), state}] += 1;
    }
    auto sessions = family("sluice_sessions", "Sessions (flows) in the table by family and state (TCP's; other protocols: active).",
                           MetricType::gauge);
    for (const auto& [k, n] : by_state) sessions.add({{"family", k.first}, {"state", k.second}}, d(n));
    auto fill = family("sluice_session_table_entries", "Entries in the session table (two per flow).", MetricType::gauge);
    auto capacity = family("sluice_session_table_capacity_entries",
                           "Entries the session table holds per family (limits.sessions × 2); new flows are dropped "
                           "(drop-session-table-full) when it is full.",
                           MetricType::gauge);
    for (int f = 0; f < 2; ++f) {
        Labels labels{{"family", f == 0 ? "ipv4" : "ipv6"}};
        fill.add(labels, d(entries[f]));
        capacity.add(std::move(labels), d(uint64_t(dp.session_capacity()) * 2));   // entries: two per flow
    }
    out.push_back(std::move(sessions));
    out.push_back(std::move(fill));
    out.push_back(std::move(capacity));
}

void add_nat(std::vector<MetricFamily>& out, const Datapath& dp) {
    auto reservations = dump_reservations(dp.map_fd(SLUICE_MAP_NAT_PORTS));
    if (!reservations) throw std::runtime_error(reservations.error().message);
    std::map<std::pair<std::string, std::string>, uint64_t> n;
    for (const char* fam : {"ipv4", "ipv6"})
        for (const char* proto : {"tcp", "udp", "icmp", "icmpv6", "other"}) n[{fam, proto}] = 0;
    for (const auto& r : reservations.value()) n[{family_name(r.first.family), protocol_label(r.first.protocol)}] += 1;
    auto f = family("sluice_nat_port_reservations",
                    "Source NAT ports held (nat_ports), by family and protocol; one per translated flow.",
                    MetricType::gauge);
    for (const auto& [k, v] : n) f.add({{"family", k.first}, {"protocol", k.second}}, d(v));
    out.push_back(std::move(f));
}

void add_host_inbound(std::vector<MetricFamily>& out, const Datapath& dp, const MetricsSnapshot& s) {
    auto f = family("sluice_host_inbound_packets_total",
                    "Packets for the firewall itself by arriving zone and service, accepted or dropped.");
    const int fd = dp.map_fd(SLUICE_MAP_HOST_HITS);
    for (const auto& z : s.host_zones)
        for (const auto& svc : s.host_services) {
            auto v = read_percpu_words(fd, host_hits_index(s.generation & 1, z.zone_id, svc.id), 2);
            if (!v) throw std::runtime_error(v.error().message);
            if (v.value()[0] == 0 && v.value()[1] == 0) continue;   // most pairs never see a packet
            f.add({{"zone", z.zone}, {"service", svc.name}, {"verdict", "accepted"}}, d(v.value()[0]));
            f.add({{"zone", z.zone}, {"service", svc.name}, {"verdict", "dropped"}}, d(v.value()[1]));
        }
    out.push_back(std::move(f));
}

void add_screens(std::vector<MetricFamily>& out, const Datapath& dp, const MetricsSnapshot& s) {
    static const char* events[] = {"syn-proxy-cookie-sent",    "syn-proxy-cookie-valid",   "syn-proxy-cookie-invalid",
                                   "syn-proxy-server-syn",     "syn-proxy-established",    "source-rate-drop",
                                   "source-session-drop",      "destination-rate-drop",    "source-icmp-drop",
                                   "source-udp-drop",          "destination-icmp-drop",    "destination-udp-drop",
                                   "scan-detected",            "scan-drop",                "syn-proxy-refused"};
    constexpr size_t words = sizeof(screen_counter) / sizeof(uint64_t);
    auto f = family("sluice_screen_events_total", "Screen events per zone the traffic arrived from (SYN proxy, "
                                                  "per-address limits, scans).");
    const int fd = dp.map_fd(SLUICE_MAP_SCREEN_HITS);
    for (const auto& z : s.zones) {
        auto v = read_percpu_words(fd, uint32_t(s.generation & 1) * SLUICE_MAX_ZONES + z.id, words);
        if (!v) throw std::runtime_error(v.error().message);
        for (size_t i = 0; i < words && i < std::size(events); ++i)
            f.add({{"zone", z.name}, {"event", events[i]}}, d(v.value()[i]));
    }
    out.push_back(std::move(f));
}

void add_inspect(std::vector<MetricFamily>& out, const Datapath& dp, const MetricsSnapshot& s,
                 const InstancePaths& paths) {
    auto fast = family("sluice_inspect_fast_path_packets_total",
                       "Packets of inspected flows by what the datapath did: punted to the stage, forwarded with "
                       "the stage down (fail-open), dropped with it down (fail-closed), no stage socket, dropped "
                       "by the stage's verdict.");
    const int fd = dp.map_fd(SLUICE_MAP_PUNT_STATS);
    for (const auto& [id, name] : s.rulesets) {
        auto v = read_percpu_words(fd, id, sizeof(punt_ruleset_stats) / sizeof(uint64_t));
        if (!v) throw std::runtime_error(v.error().message);
        const auto& w = v.value();
        fast.add({{"ruleset", name}, {"outcome", "punted"}}, d(w[0]));
        fast.add({{"ruleset", name}, {"outcome", "fail-open"}}, d(w[2]));
        fast.add({{"ruleset", name}, {"outcome", "fail-closed"}}, d(w[3]));
        fast.add({{"ruleset", name}, {"outcome", "no-socket"}}, d(w[4]));
        fast.add({{"ruleset", name}, {"outcome", "verdict-drop"}}, d(w[5]));
    }
    out.push_back(std::move(fast));
    // The stage's own counters (shared memory), per ruleset and pattern.
    auto table = inspect::read_counter_table(paths.inspect_counters_file());
    auto scanned = family("sluice_inspect_bytes_total", "Bytes the inspection stage scanned, by direction.");
    auto events = family("sluice_inspect_events_total",
                         "Inspection stage events per ruleset (pattern=\"\") and per pattern: connections, "
                         "datagrams, matches, resets, drops, alerts, offloaded, stage_errors, handoffs, "
                         "handoff_refused.");
    if (table)
        for (const auto& slot : table.value().slots) {
            if (slot.overflow) continue;
            for (size_t c = 0; c < inspect::kCounterCount; ++c) {
                const auto counter = static_cast<inspect::Counter>(c);
                if (counter == inspect::Counter::bytes_client_to_server ||
                    counter == inspect::Counter::bytes_server_to_client) {
                    if (!slot.pattern.empty()) continue;
                    scanned.add({{"ruleset", slot.ruleset},
                                 {"direction", counter == inspect::Counter::bytes_client_to_server ? "client-to-server"
                                                                                                  : "server-to-client"}},
                                d(slot[counter]));
                    continue;
                }
                events.add({{"ruleset", slot.ruleset}, {"pattern", slot.pattern}, {"event", inspect::to_string(counter)}},
                           d(slot[counter]));
            }
        }
    out.push_back(std::move(scanned));
    out.push_back(std::move(events));
}

void add_flow_log(std::vector<MetricFamily>& out, const Datapath& dp, const MetricsSnapshot& s) {
    auto stats = read_stat_counters(dp.map_fd(SLUICE_MAP_STATS));
    if (!stats) throw std::runtime_error(stats.error().message);
    auto written = family("sluice_flow_log_events_total", "Flow-log lines written, by event.");
    written.add({{"event", "open"}}, d(s.flow_log.open));
    written.add({{"event", "deny"}}, d(s.flow_log.deny));
    written.add({{"event", "close"}}, d(s.flow_log.close));
    auto dropped = family("sluice_flow_log_events_dropped_total",
                          "Flow events not written: over the rate limit (datapath or GC), the ring buffer full, "
                          "the output refusing the write, or no output open.");
    dropped.add({{"reason", "rate-limit"}},
                d(stats.value()[STAT_FLOW_LOG_RATE_LIMITED].packets + s.flow_log.close_rate_limited));
    dropped.add({{"reason", "ring-full"}}, d(stats.value()[STAT_FLOW_LOG_RING_FULL].packets));
    dropped.add({{"reason", "write-error"}}, d(s.flow_log.write_errors));
    dropped.add({{"reason", "no-output"}}, d(s.flow_log.no_output));
    out.push_back(std::move(written));
    out.push_back(std::move(dropped));
}

void add_ha(std::vector<MetricFamily>& out, const MetricsSnapshot& s) {
    if (!s.ha.is_object()) return;
    auto active = family("sluice_ha_group_active", "1 where this node carries the redundancy group.", MetricType::gauge);
    for (const auto& g : s.ha.value("groups", nlohmann::json::array()))
        active.add({{"group", g.value("name", "")}}, g.value("role", "") == "active" ? 1 : 0);
    auto peer = family("sluice_ha_peer_alive", "1 while the peer's heartbeats arrive.", MetricType::gauge);
    peer.add({}, s.ha.contains("peer") && s.ha["peer"].value("alive", false) ? 1 : 0);
    auto sync = family("sluice_ha_sync_total", "Session sync between the pair, by what happened.");
    if (s.ha.contains("sync"))
        for (const auto& [k, v] : s.ha["sync"].items())
            if (v.is_number_unsigned()) sync.add({{"what", k}}, d(v.get<uint64_t>()));
    auto beats = family("sluice_ha_heartbeats_total", "Heartbeats sent and received (fabric and link).");
    if (s.ha.contains("heartbeats"))
        for (const auto& [k, v] : s.ha["heartbeats"].items())
            if (v.is_number_unsigned()) beats.add({{"what", k}}, d(v.get<uint64_t>()));
    out.push_back(std::move(active));
    out.push_back(std::move(peer));
    out.push_back(std::move(sync));
    out.push_back(std::move(beats));
}

}  // namespace

MetricsCollector::MetricsCollector(const Datapath& datapath, InstancePaths paths)
    : dp_(datapath), paths_(std::move(paths)) {}

void MetricsCollector::publish(std::shared_ptr<const MetricsSnapshot> snapshot) {
    std::lock_guard lock(mutex_);
    snapshot_ = std::move(snapshot);
}

std::vector<observe::MetricFamily> MetricsCollector::collect() const {
    std::shared_ptr<const MetricsSnapshot> s;
    {
        std::lock_guard lock(mutex_);
        s = snapshot_;
    }
    static const MetricsSnapshot empty;
    if (!s) s = std::shared_ptr<const MetricsSnapshot>(&empty, [](const MetricsSnapshot*) {});
    std::vector<MetricFamily> out;
    auto build = family("sluice_build_info", "The sluice build serving these metrics.", MetricType::gauge);
    build.add({{"version", SLUICE_VERSION}, {"abi", std::to_string(SLUICE_ABI_VERSION)}}, 1);
    out.push_back(std::move(build));
    runtime_config cfg{};
    if (auto r = read_runtime_config(dp_.map_fd(SLUICE_MAP_RUNTIME_CONFIG), cfg); !r)
        throw std::runtime_error(r.error().message);
    auto generation = family("sluice_config_generation", "Configs applied since the maps were created.",
                             MetricType::gauge);
    generation.add({}, cfg.config_generation);
    out.push_back(std::move(generation));
    auto reloads = family("sluice_config_reloads_total", "Reloads asked of this daemon, by result.");
    reloads.add({{"result", "applied"}}, d(s->reloads));
    reloads.add({{"result", "refused"}}, d(s->reload_failures));
    out.push_back(std::move(reloads));
    add_stats(out, dp_);
    add_policies(out, dp_, *s);
    add_filters(out, dp_, *s);
    add_sessions(out, dp_);
    add_nat(out, dp_);
    add_host_inbound(out, dp_, *s);
    add_screens(out, dp_, *s);
    add_inspect(out, dp_, *s, paths_);
    add_flow_log(out, dp_, *s);
    add_ha(out, *s);
    return out;
}

}  // namespace sluice
