// The config model: what a sluice YAML file says (docs/config.md), after syntax
// checks, with the file position of everything a later check may complain
// about. Lists keep file order, because order is meaning (zone ids, policy
// precedence, filter order).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/address_range.h"
#include "config/address_match.h"
#include "config/diagnostics.h"
#include "config/egress_config.h"
#include "config/ha_config.h"
#include "config/observe_config.h"
#include "config/host_services.h"
#include "config/prefix.h"
#include "config/session_table_size.h"
#include "config/values.h"

namespace sluice::config {

struct Interface {
    std::string name;           // "lan0" or "wan0.100"
    Location location;
    std::string parent;         // VLAN sub-interface: "wan0"; else empty
    uint16_t vlan_id = 0;       // VLAN sub-interface: 1..4094; else 0
    NameRef zone;
    std::string xdp_mode = "auto";  // auto | native | generic | tc
    std::optional<NameRef> filter;
};

// One item of a zone's `host-inbound` list (docs/host-protection.md): a named
// service (config/host_services.h) or `all`, or an entry of its own,
// { protocol, port } / { protocol, type } / { protocol }.
struct HostInboundItem {
    std::string name;           // the named service or "all"; empty for an entry
    Location location;
    std::string path;           // e.g. "zones.trust.host-inbound[1]"
    HostServiceMatch match;     // an entry's protocol and ports (ICMP: type)
};

// A zone's screens (docs/host-protection.md): protections for traffic that
// arrives from it.
struct ZoneScreen {
    enum class SynProxy { off, always, above_rate };
    SynProxy syn_proxy = SynProxy::off;
    uint32_t syn_proxy_rate = 0;     // above_rate: permitted SYNs per second into the zone
    // 0: no limit.
    uint32_t source_sessions = 0;    // source-limit.sessions: sessions one source may hold
    uint32_t source_rate = 0;        // source-limit.new-sessions: per second
    uint32_t destination_rate = 0;   // destination-limit.new-sessions: per second
    // Packet floods, packets per second (every packet, established flows too).
    uint32_t source_icmp_rate = 0;        // source-limit.icmp-packets
    uint32_t source_udp_rate = 0;         // source-limit.udp-packets
    uint32_t destination_icmp_rate = 0;   // destination-limit.icmp-packets
    uint32_t destination_udp_rate = 0;    // destination-limit.udp-packets
    // Scan detection (`scan:`): one source, packets that open no session to
    // many ports or hosts within a window. 0: that threshold is off.
    uint32_t scan_ports = 0;
    uint32_t scan_hosts = 0;
    std::chrono::seconds scan_window{1};
    bool scan_block = true;               // action: block (false: count)
    std::chrono::seconds scan_hold{60};
};

struct Zone {
    std::string name;
    Location location;
    std::vector<HostInboundItem> host_inbound;  // what the firewall answers from this zone
    ZoneScreen screen;
};

struct AddressBookEntry {
    std::string name;
    Location location;
    std::vector<Prefix> prefixes;
};

struct Application {
    std::string name;
    Location location;
    uint8_t protocol = 0;
    // Empty = every port of the protocol (for icmp/icmpv6: echo, see docs/config.md).
    std::vector<PortRange> destination_ports;
};

enum class PolicyAction { permit, deny, reject, inspect };

struct Policy {
    std::string name;
    Location location;
    NameRef from, to;
    AddressMatch source, destination;
    bool any_application = true;
    std::vector<NameRef> applications;
    PolicyAction action = PolicyAction::deny;
    NameRef ruleset;            // for inspect
    uint32_t log = 0;           // enum flow_log_flag (maps/observe.h): `log: { open, close, deny }`
};

enum class FilterAction { accept, drop, count };

struct FilterRule {
    std::string name;
    Location location;
    AddressMatch source, destination;
    std::optional<uint8_t> protocol;
    std::vector<PortRange> source_ports, destination_ports;
    FilterAction action = FilterAction::accept;
};

struct Filter {
    std::string name;
    Location location;
    std::vector<FilterRule> rules;
};

struct Timeouts {
    std::chrono::seconds tcp_syn{30};
    std::chrono::seconds tcp_established{30 * 60};
    std::chrono::seconds tcp_closing{30};
    std::chrono::seconds tcp_time_wait{2 * 60};
    std::chrono::seconds udp{60};
    std::chrono::seconds icmp{30};
    std::chrono::seconds other{60};
    std::chrono::seconds fragment{30};
};

// `limits:`: sizes of the datapath's tables, fixed while the daemon runs.
struct Limits {
    uint32_t sessions = kDefaultSessions;      // flows per address family
    std::optional<Location> sessions_location;  // where limits.sessions was written; empty = default
};

struct NatPool {
    std::string name;
    Location location;
    std::vector<AddressRange> addresses;
    Location addresses_location;
    PortRange ports{1024, 65535};
    bool persistent = false;
};

struct SourceNatRule {
    std::string name;
    Location location;
    NameRef from, to;
    AddressMatch source, destination;
    bool translate_interface = false;   // translate: interface
    std::optional<NameRef> pool;        // translate: { pool: X }
};

struct DestinationNatRule {
    std::string name;
    Location location;
    NameRef from;
    Prefix destination;
    Location destination_location;
    std::optional<uint8_t> protocol;
    std::optional<uint16_t> port;
    Prefix translate_address;
    std::optional<uint16_t> translate_port;
};

// nat.static (1:1) and nat.nptv6 (RFC 6296) entries: one prefix for another
// of the same family and length.
struct PrefixNatRule {
    Location location;
    Prefix inside, outside;
    Location inside_location = {}, outside_location = {};
};
using StaticNatRule = PrefixNatRule;
using Nptv6Rule = PrefixNatRule;

struct Nat {
    std::vector<NatPool> pools;
    std::vector<SourceNatRule> source;
    std::vector<DestinationNatRule> destination;
    std::vector<StaticNatRule> static_rules;
    std::vector<Nptv6Rule> nptv6;
};

enum class PatternDirection { client_to_server, server_to_client, both };
enum class PatternAction { reject, drop, alert };

struct InspectPattern {
    std::string name;
    Location location;
    std::string regex;
    PatternDirection direction = PatternDirection::both;
    PatternAction action = PatternAction::alert;
    bool caseless = false;
    Location regex_location = {};   // of the regex scalar: hyperscan's compile errors point here
};

struct Ruleset {
    std::string name;
    Location location;
    bool fail_closed = true;                  // fail-mode: closed (default) | open
    std::optional<uint64_t> inspect_bytes;    // empty = unlimited
    std::vector<InspectPattern> patterns;
};

struct Config {
    std::string file;
    std::vector<Interface> interfaces;
    std::vector<Zone> zones;
    std::vector<AddressBookEntry> address_book;
    std::vector<Application> applications;
    std::vector<Policy> policies;
    PolicyAction default_action = PolicyAction::deny;
    uint32_t default_log = 0;   // `default-log:`: the default action's flow events
    std::vector<Filter> filters;
    Timeouts timeouts;
    Limits limits;
    Nat nat;
    std::vector<Ruleset> rulesets;
    Ha ha;
    Egress egress;
    MetricsConfig metrics;
    FlowLogConfig flow_log;
    // Ruleset ids the running daemon keeps stable across reloads (sessions
    // carry them); empty: ids follow file order (check, tests).
    std::map<std::string, uint16_t> ruleset_ids;
    // Where each top-level section starts (its key), for errors found after
    // parsing that concern a section as a whole (the compiler's capacities).
    std::map<std::string, Location> section_locations;

    const Zone* find_zone(const std::string& name) const;
    const AddressBookEntry* find_address(const std::string& name) const;
    const Application* find_application(const std::string& name) const;
    const Ruleset* find_ruleset(const std::string& name) const;
    const NatPool* find_pool(const std::string& name) const;
    // Id of a ruleset as carried by sessions (0 = none): from ruleset_ids when
    // set, else 1-based file order.
    uint16_t ruleset_id(const std::string& name) const;
};

const char* to_string(PolicyAction action);

}  // namespace sluice::config
