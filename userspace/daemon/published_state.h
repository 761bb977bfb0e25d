// What a running daemon publishes about itself, as one typed struct: written
// to state.json (daemon/state_publisher.h) and returned by the control
// socket's `status`, read by `show`, `down` and `run`. Its JSON form is
// defined once, here: the reader refuses a file that lacks a field instead
// of printing a default, so a renamed key breaks a test, not the output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace sluice::state {

struct Interface {
    std::string name;  // as configured: "lan0", "wan0.100"
    uint16_t zone_id = 0;
    uint16_t vlan_id = 0;
    std::string xdp_mode_requested;  // auto | native | generic | tc
    // Set while its device carries the programs:
    std::string device;     // "" = not attached
    uint32_t ifindex = 0;
    std::string xdp_mode;   // native | generic | tc
    std::string xdp_mode_why;  // "auto: veth ..." (loader/attach.h choose_xdp_mode)
    std::string warning;    // why native XDP was not used
};

struct Zone {
    std::string name;
    uint16_t id = 0;
};

struct Policy {
    std::string name;
    uint32_t id = 0;
    std::string from, to;
    std::string action;   // deny | permit | reject | inspect
    std::string ruleset;  // inspect only
    // Empty = any (the JSON says "any").
    std::vector<std::string> source, destination, application;
};

struct FilterRule {
    std::string name;
    std::string action;
    uint32_t slot = 0;  // index of its counter in filter_hits
};

struct Filter {
    std::string name;
    uint32_t id = 0;
    std::vector<std::string> interfaces;
    std::vector<FilterRule> rules;
};

struct Classifier {
    uint64_t rules = 0, groups = 0, cross_entries = 0, sparse_entries = 0, results = 0, map_bytes = 0;
};

struct LastReload {
    bool ok = true;
    std::string message;
};

// A NAT rule: what `show nat` prints of it, and the rule's own fields as
// configured (from, to, pool, inside, ... by kind), kept for --json.
struct NatRule {
    std::string kind;  // source | destination | static | nptv6
    uint32_t index = 0;
    std::string name;
    std::string match;
    std::string translation;
    nlohmann::json details = nlohmann::json::object();
};

struct NatRange {
    std::string family;  // ipv4 | ipv6
    std::string first, last;
};

struct NatPool {
    std::string name;
    uint32_t index = 0;
    std::vector<std::string> addresses;  // as written: "198.18.100.10-198.18.100.13"
    std::vector<NatRange> ranges;
    uint16_t port_first = 0, port_last = 0;
    bool persistent = false;
};

struct Nat {
    std::vector<NatRule> rules;
    std::vector<NatPool> pools;
};

struct HostService {
    uint32_t id = 0;
    std::string name;
    std::string description;
};

struct HostZone {
    std::string name;
    uint16_t id = 0;
    bool all = false;
    std::vector<uint32_t> services;
};

struct HostInbound {
    std::vector<HostService> services;
    std::vector<HostZone> zones;
};

struct ScanScreen {
    uint32_t window_seconds = 0;
    std::string action;  // block | count
    uint32_t ports = 0, hosts = 0, hold_seconds = 0;  // 0 = not set
};

// A zone's screens; a limit of 0 is not set (and not written).
struct ScreenZone {
    std::string zone;
    uint16_t id = 0;
    std::string syn_proxy = "off";  // off | always | above
    uint32_t syn_proxy_rate = 0;    // above: SYN/s
    uint32_t syn_proxy_window_scale = 0;
    uint32_t source_sessions = 0;
    uint32_t source_new_sessions_per_second = 0;
    uint32_t destination_new_sessions_per_second = 0;
    uint32_t source_icmp_packets_per_second = 0;
    uint32_t source_udp_packets_per_second = 0;
    uint32_t destination_icmp_packets_per_second = 0;
    uint32_t destination_udp_packets_per_second = 0;
    std::optional<ScanScreen> scan;
};

struct InspectPattern {
    std::string name, regex, direction, action;
    bool caseless = false;
};

struct InspectRuleset {
    std::string name;
    uint16_t id = 0;
    std::string fail_mode;  // open | closed
    std::optional<uint64_t> inspect_bytes;  // none = unlimited
    std::vector<InspectPattern> patterns;
};

struct Inspect {
    bool running = false;
    bool held_by_operator = false;
    uint64_t changes = 0;
    std::string counters;  // the counters file
    // While running:
    uint32_t workers = 0;
    uint16_t tcp_port = 0, udp_port = 0;
    std::vector<InspectRuleset> rulesets;
};

struct PublishedState {
    std::string instance;
    int pid = 0;
    std::string config;   // absolute path of the config file
    std::string pin_dir;
    uint64_t config_generation = 0;
    uint64_t reloads = 0;
    LastReload last_reload;
    std::vector<Interface> interfaces;
    std::vector<Zone> zones;
    std::vector<Policy> policies;
    std::vector<Filter> filters;
    Classifier classifier;
    Nat nat;
    HostInbound host_inbound;
    std::vector<ScreenZone> screens;
    Inspect inspect;
    // `sluice show egress`: the DNS proxy's counters, the scopes and what
    // they learned (daemon/egress_host.cpp writes it; {} without egress).
    nlohmann::json egress = nlohmann::json::object();
    std::string default_action = "deny";
};

// The JSON form of each (nlohmann's to_json/from_json); from_json throws
// nlohmann::json::exception on a missing or mistyped field.
void to_json(nlohmann::json& j, const Interface& v);
void from_json(const nlohmann::json& j, Interface& v);
void to_json(nlohmann::json& j, const Zone& v);
void from_json(const nlohmann::json& j, Zone& v);
void to_json(nlohmann::json& j, const Policy& v);
void from_json(const nlohmann::json& j, Policy& v);
void to_json(nlohmann::json& j, const FilterRule& v);
void from_json(const nlohmann::json& j, FilterRule& v);
void to_json(nlohmann::json& j, const Filter& v);
void from_json(const nlohmann::json& j, Filter& v);
void to_json(nlohmann::json& j, const Classifier& v);
void from_json(const nlohmann::json& j, Classifier& v);
void to_json(nlohmann::json& j, const LastReload& v);
void from_json(const nlohmann::json& j, LastReload& v);
void to_json(nlohmann::json& j, const NatRule& v);
void from_json(const nlohmann::json& j, NatRule& v);
void to_json(nlohmann::json& j, const NatRange& v);
void from_json(const nlohmann::json& j, NatRange& v);
void to_json(nlohmann::json& j, const NatPool& v);
void from_json(const nlohmann::json& j, NatPool& v);
void to_json(nlohmann::json& j, const Nat& v);
void from_json(const nlohmann::json& j, Nat& v);
void to_json(nlohmann::json& j, const HostService& v);
void from_json(const nlohmann::json& j, HostService& v);
void to_json(nlohmann::json& j, const HostZone& v);
void from_json(const nlohmann::json& j, HostZone& v);
void to_json(nlohmann::json& j, const HostInbound& v);
void from_json(const nlohmann::json& j, HostInbound& v);
void to_json(nlohmann::json& j, const ScanScreen& v);
void from_json(const nlohmann::json& j, ScanScreen& v);
void to_json(nlohmann::json& j, const ScreenZone& v);
void from_json(const nlohmann::json& j, ScreenZone& v);
void to_json(nlohmann::json& j, const InspectPattern& v);
void from_json(const nlohmann::json& j, InspectPattern& v);
void to_json(nlohmann::json& j, const InspectRuleset& v);
void from_json(const nlohmann::json& j, InspectRuleset& v);
void to_json(nlohmann::json& j, const Inspect& v);
void from_json(const nlohmann::json& j, Inspect& v);
void to_json(nlohmann::json& j, const PublishedState& v);
void from_json(const nlohmann::json& j, PublishedState& v);

// Parses a published state; an Error naming the missing or mistyped field.
Result<PublishedState> parse_published_state(const nlohmann::json& j);

}  // namespace sluice::state
