// The winning policy of the real XDP datapath, against an independent
// reference: random rule sets (nested IPv4/IPv6 prefixes, overlapping port
// ranges, address books mixing families, tcp/udp/icmp/icmpv6 applications,
// `any` fields, three zones, permit/deny/reject and every default action) are
// rendered as YAML, parsed, compiled and applied the way the daemon does it,
// and every packet's outcome — XDP verdict, plus the policy id the session
// (permit) or the flow cache (deny, reject) recorded — must be the one a plain
// linear first-match scan of the same rules, written below and sharing no code
// with userspace/compiler, predicts.
//
// Every packet is the first packet of its flow: tuples are never reused within
// a rule set (in either direction), and the session and flow-cache maps are
// cleared between rule sets. One namespace and one loaded datapath serve all
// rule sets; each rule set is a config reload (which also alternates the
// policy generation the classifier reads). Odd rule sets are compiled with
// their rules split into groups by shape (maps/policy.h), so the merge of
// several groups' results is checked as well as the single group sluice
// uses whenever the rules fit in one.
//
// Reproduce a failure: the message names the seed and the rule set;
//   SLUICE_POLICY_RANDOM_SEED=<seed> SLUICE_POLICY_RANDOM_ONLY=<rule set>
//     build/tests/sluice_bpf_tests --gtest_filter='PolicyRandom.*'
// runs that rule set alone (same packets), and the message prints the YAML.
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "datapath_env.h"
#include "flow_cache_reader.h"
#include "random_rules.h"

extern "C" {
#include "map_names.h"
#include "policy.h"
#include "session.h"
#include "zone.h"
}

namespace sluice::test {
namespace {

using namespace random_rules;

// ------------------------------------------------------------------ the model

struct App {
    uint8_t proto = kTcp;              // tcp, udp, icmp, icmpv6
    std::vector<PortRange> ports;      // tcp/udp only; empty = every port
};

struct AppMatch {
    Style style = Style::omitted;
    std::vector<int> apps;
    bool is_any() const { return style != Style::list; }
};

enum class Action : uint8_t { permit, deny, reject };
const char* action_name(Action a) { return a == Action::permit ? "permit" : a == Action::deny ? "deny" : "reject"; }

struct Rule {
    Zone from = kTrust, to = kUntrust;
    AddrMatch src, dst;
    AppMatch app;
    Action action = Action::permit;
};

struct RuleSet {
    AddressBook book;
    std::vector<App> apps;
    std::vector<Rule> rules;
    Action default_action = Action::deny;
};

// ---------------------------------------------------------- the reference

// docs/config.md: `protocol: icmp` is echo in ICMP and ICMPv6 alike; icmpv6 is
// ICMPv6 echo; tcp/udp match their destination ports (none listed = all).
bool application_matches(const App& app, const Packet& p) {
    switch (app.proto) {
    case kIcmp:
        return (p.fam == Fam::v4 && p.proto == kIcmp && p.icmp_type == 8) ||
               (p.fam == Fam::v6 && p.proto == kIcmpv6 && p.icmp_type == 128);
    case kIcmpv6:
        return p.fam == Fam::v6 && p.proto == kIcmpv6 && p.icmp_type == 128;
    default:
        if (p.proto != app.proto) return false;
        return app.ports.empty() || in_any(app.ports, p.dport);
    }
}

bool rule_matches(const RuleSet& rs, const Rule& r, const Packet& p) {
    if (r.from != p.in || r.to != p.out()) return false;
    if (!addresses_match(rs.book, r.src, p.fam, p.src)) return false;
    if (!addresses_match(rs.book, r.dst, p.fam, p.dst)) return false;
    if (r.app.is_any()) return true;
    for (int a : r.app.apps)
        if (application_matches(rs.apps[static_cast<size_t>(a)], p)) return true;
    return false;
}

// Linear first match: the index of the winning rule, or nullopt (default).
std::optional<size_t> reference_winner(const RuleSet& rs, const Packet& p) {
    for (size_t i = 0; i < rs.rules.size(); ++i)
        if (rule_matches(rs, rs.rules[i], p)) return i;
    return std::nullopt;
}

// How many rules match, and whether a later match has another action than
// the first (so that the order of the rules decides the verdict).
struct Matches {
    size_t count = 0;
    bool order_decides_action = false;
};

Matches all_matches(const RuleSet& rs, const Packet& p) {
    Matches m;
    std::optional<Action> first;
    for (const Rule& r : rs.rules) {
        if (!rule_matches(rs, r, p)) continue;
        ++m.count;
        if (!first) first = r.action;
        else if (r.action != *first) m.order_decides_action = true;
    }
    return m;
}

// ---------------------------------------------------------------- rendering

std::string render_yaml(const RuleSet& rs) {
    std::ostringstream y;
    render_interfaces(y);
    render_address_book(y, rs.book);
    y << "applications:\n";
    for (size_t i = 0; i < rs.apps.size(); ++i) {
        const App& a = rs.apps[i];
        y << "  app" << i << ": { protocol: " << protocol_text(a.proto);
        if (!a.ports.empty()) y << ", destination-port: " << port_set_text(a.ports);
        y << " }\n";
    }
    y << "policies:\n";
    for (size_t i = 0; i < rs.rules.size(); ++i) {
        const Rule& r = rs.rules[i];
        y << "  - name: r" << i << "\n"
          << "    from: " << kZoneNames[r.from] << "\n"
          << "    to: " << kZoneNames[r.to] << "\n";
        render_addr_field(y, "    ", "source", r.src);
        render_addr_field(y, "    ", "destination", r.dst);
        if (r.app.style == Style::any_scalar) {
            y << "    application: any\n";
        } else if (r.app.style != Style::omitted) {
            y << "    application: [";
            bool first = true;
            if (r.app.style == Style::list_with_any) {
                y << "any";
                first = false;
            }
            for (int a : r.app.apps) {
                y << (first ? "" : ", ") << "app" << a;
                first = false;
            }
            y << "]\n";
        }
        y << "    action: " << action_name(r.action) << "\n";
    }
    y << "default-action: " << action_name(rs.default_action) << "\n";
    return y.str();
}

// ---------------------------------------------------------------- generation

class Generator : public FieldGenerator {
public:
    explicit Generator(uint64_t seed) : FieldGenerator(seed) {}

    // ---- rule sets

    RuleSet rule_set(int rules, Action default_action) {
        RuleSet rs;
        rs.book = start_rule_set();
        rs.default_action = default_action;
        // Apps: random ones plus, often, the nested trio 1000-2000 / 1500-1600 / 1550.
        if (chance(60)) {
            uint8_t proto = chance(50) ? kTcp : kUdp;
            rs.apps.push_back(App{proto, {{1000, 2000}}});
            rs.apps.push_back(App{proto, {{1500, 1600}}});
            rs.apps.push_back(App{proto, {{1550, 1550}}});
        }
        for (int i = pick(4, 14); i > 0; --i) rs.apps.push_back(random_app());

        while (static_cast<int>(rs.rules.size()) < rules) {
            if (rules >= 8 && chance(12)) {
                nested_chain(rs, rules);
                continue;
            }
            rs.rules.push_back(random_rule(rs));
        }
        return rs;
    }

    // ---- packets

    // Aimed at a random rule (often just inside or just outside its edges),
    // or random over the space the rule set talks about.
    Packet packet(const RuleSet& rs) {
        if (!rs.rules.empty() && chance(60)) {
            Packet p = aimed_at(rs, rs.rules[static_cast<size_t>(pick(0, static_cast<int>(rs.rules.size()) - 1))]);
            if (chance(30)) near_miss(rs, p);
            return p;
        }
        return random_packet(rs);
    }

private:
    App random_app() {
        App app;
        int r = pick(0, 99);
        app.proto = r < 35 ? kTcp : r < 70 ? kUdp : r < 85 ? kIcmp : kIcmpv6;
        if ((app.proto == kTcp || app.proto == kUdp) && chance(80))
            for (int j = pick(1, 3); j > 0; --j) app.ports.push_back(random_range());
        return app;
    }

    Zone random_from() {
        int r = pick(0, 99);
        return r < 40 ? kTrust : r < 75 ? kUntrust : kDmz;
    }
    Zone random_to() {
        int r = pick(0, 99);
        return r < 40 ? kTrust : r < 94 ? kUntrust : kDmz;  // nothing routes to dmz
    }

    Rule random_rule(const RuleSet& rs) {
        Rule r;
        r.from = random_from();
        r.to = random_to();
        r.src = random_match(rs.book);
        r.dst = random_match(rs.book);
        r.app.style = match_style();
        if (r.app.style == Style::list || r.app.style == Style::list_with_any)
            for (int i = pick(1, 3); i > 0; --i) r.app.apps.push_back(pick(0, static_cast<int>(rs.apps.size()) - 1));
        r.action = static_cast<Action>(pick(0, 2));
        return r;
    }

    // Rules that differ only in one address field: the same anchor at nested
    // lengths, each with its own action.
    void nested_chain(RuleSet& rs, int rules) {
        Rule base = random_rule(rs);
        const std::vector<Prefix> chain = nested_prefixes();
        bool on_source = chance(50);
        for (const Prefix& prefix : chain) {
            if (static_cast<int>(rs.rules.size()) >= rules) return;
            Rule r = base;
            AddrMatch& m = on_source ? r.src : r.dst;
            m.style = Style::list;
            m.items = {inline_item(prefix)};
            if (chance(25)) m.items.push_back(inline_item(random_prefix(prefix.fam == Fam::v4 ? Fam::v6 : Fam::v4)));
            r.action = static_cast<Action>(pick(0, 2));
            rs.rules.push_back(r);
        }
    }

    // A classifiable destination in zone z's subnet.
    Addr random_destination(Fam f, Zone z) {
        if (chance(35)) return f == Fam::v4 ? (z == kTrust ? kLanHostA4 : kWanHostA4) : (z == kTrust ? kLanHostA6 : kWanHostA6);
        for (;;) {
            Addr a = random_in(f, subnet(f, z), f == Fam::v6 && chance(60));
            if (routed_zone(f, a)) return a;
        }
    }

    // A classifiable destination inside p (and a routed subnet), if p has one;
    // in zone `prefer`'s subnet when p reaches both.
    std::optional<Addr> destination_in(const Prefix& p, Zone prefer) {
        for (Zone z : {prefer, prefer == kTrust ? kUntrust : kTrust}) {
            const Prefix& net = subnet(p.fam, z);
            if (p.len <= net.len && p.contains(p.fam, net.addr)) {
                if (chance(40)) return random_destination(p.fam, z);
                Addr a = address_in(net);
                if (routed_zone(p.fam, a)) return a;
                return random_destination(p.fam, z);
            }
            if (net.contains(p.fam, p.addr)) {
                for (int i = 0; i < 8; ++i) {
                    Addr a = address_in(p);
                    if (routed_zone(p.fam, a)) return a;
                }
                return std::nullopt;
            }
        }
        return std::nullopt;
    }

    Packet aimed_at(const RuleSet& rs, const Rule& r) {
        Packet p;
        p.in = r.from;
        // A family both address fields can match.
        std::vector<Fam> fams;
        for (Fam f : {Fam::v4, Fam::v6}) {
            bool src_ok = r.src.is_any() || !prefixes_of(rs.book, r.src, f).empty();
            bool dst_ok = r.dst.is_any() || !prefixes_of(rs.book, r.dst, f).empty();
            if (src_ok && dst_ok) fams.push_back(f);
        }
        p.fam = fams.empty() ? (chance(50) ? Fam::v4 : Fam::v6) : one_of(fams);
        // Application first: an icmpv6 app forces IPv6 when the addresses allow it.
        std::optional<App> app;
        if (!r.app.is_any() && !r.app.apps.empty()) app = rs.apps[static_cast<size_t>(one_of(r.app.apps))];
        if (app && app->proto == kIcmpv6 && std::find(fams.begin(), fams.end(), Fam::v6) != fams.end())
            p.fam = Fam::v6;

        std::vector<Prefix> src = r.src.is_any() ? std::vector<Prefix>{} : prefixes_of(rs.book, r.src, p.fam);
        p.src = random_source(p.fam);
        if (!src.empty()) {
            for (int i = 0; i < 8; ++i) {
                Addr a = address_in(one_of(src));
                if (usable_source(p.fam, a)) {
                    p.src = a;
                    break;
                }
            }
        }
        Zone want_out = r.to == kDmz ? (chance(50) ? kTrust : kUntrust) : r.to;
        p.dst = random_destination(p.fam, want_out);
        std::vector<Prefix> dst = r.dst.is_any() ? std::vector<Prefix>{} : prefixes_of(rs.book, r.dst, p.fam);
        if (!dst.empty()) {
            // Prefer a prefix that reaches the rule's egress zone.
            std::vector<Prefix> reaching;
            for (const Prefix& d : dst)
                if (d.contains(p.fam, subnet(p.fam, want_out).addr) || subnet(p.fam, want_out).contains(p.fam, d.addr))
                    reaching.push_back(d);
            const std::vector<Prefix>& from = reaching.empty() ? dst : reaching;
            for (int i = 0; i < 4; ++i)
                if (auto a = destination_in(one_of(from), want_out)) {
                    p.dst = *a;
                    break;
                }
        }
        if (p.src == p.dst) p.src = random_source(p.fam);

        if (!app) {
            random_l4(p);
        } else if (app->proto == kIcmp || app->proto == kIcmpv6) {
            set_l4(p, p.fam == Fam::v4 ? kIcmp : kIcmpv6, p.fam == Fam::v4 ? 8 : 128);
        } else {
            set_l4(p, app->proto, app->ports.empty() ? random_port() : port_in(one_of(app->ports)));
        }
        return p;
    }

    // One field moved just past an edge of the rule set's prefixes or ranges,
    // or to another zone, protocol or ICMP type.
    void near_miss(const RuleSet& rs, Packet& p) {
        switch (pick(0, 5)) {
        case 0:
        case 1: {  // an address next to a prefix edge
            std::vector<Prefix> all;
            for (const Rule& r : rs.rules) {
                auto s = prefixes_of(rs.book, r.src, p.fam), d = prefixes_of(rs.book, r.dst, p.fam);
                all.insert(all.end(), s.begin(), s.end());
                all.insert(all.end(), d.begin(), d.end());
            }
            if (all.empty()) return;
            const Prefix& e = one_of(all);
            Addr a = next_to(e);
            if (chance(50)) {
                if (usable_source(p.fam, a) && a != p.dst) p.src = a;
            } else if (routed_zone(p.fam, a) && a != p.src) {
                p.dst = a;
            }
            return;
        }
        case 2: {  // a port next to a range edge
            if (p.proto != kTcp && p.proto != kUdp) return;
            std::vector<PortRange> ranges;
            for (const App& a : rs.apps)
                if (a.proto == p.proto) ranges.insert(ranges.end(), a.ports.begin(), a.ports.end());
            if (ranges.empty()) return;
            const PortRange& r = one_of(ranges);
            p.dport = chance(50) ? static_cast<uint16_t>(r.lo - 1) : static_cast<uint16_t>(r.hi + 1);
            return;
        }
        case 3:  // the other transport
            if (p.proto == kTcp) p.proto = kUdp;
            else if (p.proto == kUdp) p.proto = kTcp;
            return;
        case 4:  // another ingress zone
            p.in = static_cast<Zone>((p.in + pick(1, 2)) % kZones);
            return;
        default:  // ICMP: not an echo request
            if (p.proto == kIcmp) p.icmp_type = chance(50) ? 0 : 13;
            else if (p.proto == kIcmpv6) p.icmp_type = chance(50) ? 129 : 200;
            return;
        }
    }

    Packet random_packet(const RuleSet& rs) {
        Packet p;
        p.in = static_cast<Zone>(pick(0, kZones - 1));
        p.fam = chance(50) ? Fam::v4 : Fam::v6;
        Zone out = chance(50) ? kTrust : kUntrust;
        p.dst = random_destination(p.fam, out);
        if (chance(40)) {
            // Somewhere the rule set's prefixes reach.
            std::vector<Prefix> all;
            for (const auto& entry : rs.book)
                for (const AddrItem& item : entry)
                    if (item.prefix.fam == p.fam) all.push_back(item.prefix);
            for (const Rule& r : rs.rules)
                for (const AddrMatch* m : {&r.src, &r.dst})
                    for (const AddrItem& item : m->items)
                        if (item.book < 0 && item.prefix.fam == p.fam) all.push_back(item.prefix);
            if (!all.empty()) {
                if (auto a = destination_in(one_of(all), out)) p.dst = *a;
                Addr s = address_in(one_of(all));
                p.src = usable_source(p.fam, s) ? s : random_source(p.fam);
            } else {
                p.src = random_source(p.fam);
            }
        } else {
            p.src = random_source(p.fam);
        }
        if (p.src == p.dst) p.src = random_source(p.fam);
        random_l4(p);
        return p;
    }
};

std::string describe_winner(const RuleSet& rs, std::optional<size_t> winner) {
    if (!winner) return std::string("default-action ") + action_name(rs.default_action);
    return "rule r" + std::to_string(*winner) + " (" + action_name(rs.rules[*winner].action) + ")";
}

struct Totals {
    size_t packets = 0, rule_sets = 0, rules = 0;
    size_t grouped = 0;                  // rule sets classified through 2+ groups
    size_t rule_hits[3] = {0, 0, 0};     // by action
    size_t default_hits[3] = {0, 0, 0};  // by default action
    size_t overlapping = 0;              // packets that two or more rules match
    size_t order_decides = 0;            // ... with different actions
    size_t v4 = 0, v6 = 0, tcp = 0, udp = 0, icmp_echo = 0, icmp_other = 0, other = 0;
    size_t redirected = 0, passed_no_neigh = 0, tx = 0, dropped = 0;
    size_t zone_pairs[kZones][kZones] = {};
};

constexpr uint64_t kDefaultSeed = 0x51c3'2026'0001ull;
constexpr int kRuleSets = 32;
constexpr int kPacketsPerRuleSet = 3500;

class PolicyRandom : public RandomRulesTest {};

uint16_t zone_id_of(int zones_fd, uint32_t ifindex, uint16_t vlan) {
    zone_key k{};
    k.ifindex = ifindex;
    k.vlan_id = vlan;
    zone_value v{};
    if (bpf_map_lookup_elem(zones_fd, &k, &v) != 0) return 0;
    return v.zone_id;
}

TEST_F(PolicyRandom, WinningRuleMatchesLinearFirstMatch) {
    use_environment("POLICY_RANDOM", kDefaultSeed);
    const int s4_fd = env_->map_fd(SLUICE_MAP_SESSIONS_V4), s6_fd = env_->map_fd(SLUICE_MAP_SESSIONS_V6);
    const int fc_fd = env_->map_fd(SLUICE_MAP_FLOW_CACHE), zones_fd = env_->map_fd(SLUICE_MAP_ZONES);
    for (int fd : {s4_fd, s6_fd, fc_fd, zones_fd}) ASSERT_GE(fd, 0);

    Totals t;
    size_t mismatches = 0, printed = 0;

    for (int set = 0; set < kRuleSets; ++set) {
        if (!selected(set)) continue;
        Generator gen(set_seed(set));
        // Sizes: a few tiny sets, most mid-sized, some near 300 rules.
        int size_class = gen.pick(0, 99);
        int rules = size_class < 15 ? gen.pick(1, 5) : size_class < 65 ? gen.pick(10, 100)
                  : size_class < 85 ? gen.pick(100, 200) : gen.pick(200, 300);
        const Action default_action = static_cast<Action>(set % 3);
        const RuleSet rs = gen.rule_set(rules, default_action);
        const std::string yaml = render_yaml(rs);
        uint32_t groups = 0;
        ASSERT_TRUE(apply_rule_set(set, yaml, &groups));
        uint16_t zone_ids[kZones] = {zone_id_of(zones_fd, lan_if(), 0), zone_id_of(zones_fd, wan_if(), 0),
                                     zone_id_of(zones_fd, lan_if(), kDmzVlan)};
        ASSERT_NE(zone_ids[kTrust], 0) << "lan0 has no zone";
        ASSERT_NE(zone_ids[kUntrust], 0) << "wan0 has no zone";
        ASSERT_NE(zone_ids[kDmz], 0) << "lan0 vlan 100 has no zone";
        ++t.rule_sets;
        t.rules += rs.rules.size();
        if (groups > 1) ++t.grouped;

        std::unordered_set<std::string> used;
        size_t set_mismatches = 0;
        // Never a "land" packet (source = destination): the datapath drops
        // those before any stage (anomaly_test.cpp).
        auto next_packet = [&] {
            Packet p = gen.packet(rs);
            while (p.src == p.dst) p = gen.packet(rs);
            return p;
        };
        for (int i = 0; i < kPacketsPerRuleSet; ++i) {
            Packet p = next_packet();
            // A fresh tuple, in both directions, for this rule set.
            for (int tries = 0; used.count(tuple_id(p, false)) || used.count(tuple_id(p, true)); ++tries) {
                bool has_ports = p.key_sport() || p.key_dport();
                if (tries > 50 || !has_ports) p = next_packet();
                else p.sport = gen.source_port();
            }
            ASSERT_TRUE(routed_zone(p.fam, p.dst)) << "generator bug: " << addr_text(p.fam, p.dst) << " is not routed";
            used.insert(tuple_id(p, false));
            used.insert(tuple_id(p, true));

            const std::optional<size_t> winner = reference_winner(rs, p);
            const Action expected_action = winner ? rs.rules[*winner].action : rs.default_action;
            const uint32_t expected_id = winner ? static_cast<uint32_t>(*winner) : SESSION_POLICY_RELATED;
            const Zone out = p.out();
            const bool resolved = p.fam == Fam::v4 ? (p.dst == kLanHostA4 || p.dst == kWanHostA4)
                                                   : (p.dst == kLanHostA6 || p.dst == kWanHostA6);

            const XdpRunResult r = run(frame_of(p, static_cast<uint32_t>(i) * 7919u), ingress_of(p));
            const int verdict = r.retval;

            std::optional<session_value> session;
            std::optional<FlowCacheEntry> cached;
            if (p.fam == Fam::v4) {
                session = lookup_session(s4_fd, session_key(to4(p.src), to4(p.dst), p.key_sport(), p.key_dport(), p.proto));
                cached = lookup_flow_cache(fc_fd, flow_cache_key_of(zone_ids[p.in], to4(p.src), to4(p.dst),
                                                                    p.key_sport(), p.key_dport(), p.proto));
            } else {
                session = lookup_session(s6_fd, session_key(to6(p.src), to6(p.dst), p.key_sport(), p.key_dport(), p.proto));
                cached = lookup_flow_cache(fc_fd, flow_cache_key_of(zone_ids[p.in], to6(p.src), to6(p.dst),
                                                                    p.key_sport(), p.key_dport(), p.proto));
            }

            // Compare everything a user can see.
            std::vector<std::string> wrong;
            int expected_verdict = expected_action == Action::permit ? (resolved ? XDP_REDIRECT : XDP_PASS)
                                 : expected_action == Action::deny ? XDP_DROP : XDP_TX;
            if (verdict != expected_verdict)
                wrong.push_back("verdict " + xdp_verdict_name(verdict) + ", expected " + xdp_verdict_name(expected_verdict));
            if (expected_action == Action::permit) {
                if (!session) {
                    wrong.push_back("no session");
                } else {
                    if (session->policy_id != expected_id)
                        wrong.push_back("session policy id " + std::to_string(session->policy_id) + ", expected " +
                                        std::to_string(expected_id));
                    if (session->zone_in != zone_ids[p.in] || session->zone_out != zone_ids[out])
                        wrong.push_back("session zones " + std::to_string(session->zone_in) + "->" +
                                        std::to_string(session->zone_out) + ", expected " +
                                        std::to_string(zone_ids[p.in]) + "->" + std::to_string(zone_ids[out]));
                }
                if (cached) wrong.push_back("flow-cache entry for a permitted flow (policy id " +
                                            std::to_string(cached->value.policy_id) + ")");
            } else {
                if (session) wrong.push_back("a session (policy id " + std::to_string(session->policy_id) +
                                             "), expected none (" + action_name(expected_action) + ")");
                if (!cached) {
                    wrong.push_back("no flow-cache entry");
                } else {
                    uint8_t want = expected_action == Action::deny ? POLICY_ACTION_DENY : POLICY_ACTION_REJECT;
                    if (cached->value.policy_id != expected_id)
                        wrong.push_back("flow-cache policy id " + std::to_string(cached->value.policy_id) +
                                        ", expected " + std::to_string(expected_id));
                    if (cached->value.action != want)
                        wrong.push_back("flow-cache action " + std::to_string(cached->value.action) + ", expected " +
                                        std::to_string(want));
                    if (cached->cpus != 1) wrong.push_back("flow-cache entry on " + std::to_string(cached->cpus) + " CPUs");
                }
                if (expected_action == Action::reject && verdict == XDP_TX) {
                    // The answer: RST for TCP, administratively prohibited otherwise.
                    auto f = parse_frame(r.output);
                    bool ok = f && f->l4_present;
                    if (ok && p.proto == kTcp) ok = f->l4_proto == kTcp && (f->tcp_flags & tcp_flag::kRst);
                    else if (ok && p.fam == Fam::v4) ok = f->l4_proto == kIcmp && f->icmp_type == 3 && f->icmp_code == 13;
                    else if (ok) ok = f->l4_proto == kIcmpv6 && f->icmp_type == 1 && f->icmp_code == 1;
                    if (!ok) wrong.push_back("reject answer is " + summarize_frame(r.output));
                }
            }

            if (!wrong.empty()) {
                ++mismatches;
                ++set_mismatches;
                if (printed < 12) {
                    ++printed;
                    // What the datapath's evidence says won.
                    std::string observed = "no session, no flow-cache entry";
                    if (session || cached) {
                        uint32_t seen_id = session ? session->policy_id : cached->value.policy_id;
                        observed = std::string(session ? "session" : "flow-cache entry") + " with " +
                                   (seen_id == SESSION_POLICY_RELATED ? "no policy (default-action)"
                                                                      : "policy id " + std::to_string(seen_id) +
                                                                            " (r" + std::to_string(seen_id) + ")");
                    }
                    std::string all_matching;
                    for (size_t k = 0; k < rs.rules.size(); ++k)
                        if (rule_matches(rs, rs.rules[k], p)) all_matching += " r" + std::to_string(k);
                    ADD_FAILURE() << where(set) << " (" << rs.rules.size()
                                  << " rules) packet " << i << ": " << describe_packet(p)
                                  << "\n  reference: " << describe_winner(rs, winner)
                                  << " (rules matching:" << (all_matching.empty() ? " none" : all_matching) << ")"
                                  << "\n  datapath:  " << observed << ", " << xdp_verdict_name(verdict)
                                  << "\n  wrong: " << [&] {
                                         std::string s;
                                         for (const auto& w : wrong) s += (s.empty() ? "" : "; ") + w;
                                         return s;
                                     }()
                                  << "\n  reproduce: " << reproduce(set);
                }
            }

            // Totals.
            ++t.packets;
            (winner ? t.rule_hits : t.default_hits)[static_cast<int>(expected_action)]++;
            const Matches matches = all_matches(rs, p);
            t.overlapping += matches.count >= 2;
            t.order_decides += matches.order_decides_action;
            (p.fam == Fam::v4 ? t.v4 : t.v6)++;
            if (p.proto == kTcp) ++t.tcp;
            else if (p.proto == kUdp) ++t.udp;
            else if (p.echo_request()) ++t.icmp_echo;
            else if (p.proto == kIcmp || p.proto == kIcmpv6) ++t.icmp_other;
            else ++t.other;
            if (verdict == XDP_REDIRECT) ++t.redirected;
            else if (verdict == XDP_PASS) ++t.passed_no_neigh;
            else if (verdict == XDP_TX) ++t.tx;
            else if (verdict == XDP_DROP) ++t.dropped;
            t.zone_pairs[p.in][out]++;
        }
        show_rule_set(set, set_mismatches, kPacketsPerRuleSet, yaml);
    }

    std::ostringstream s;
    s << "policy-random: seed " << seed() << ", " << t.rule_sets << " rule sets (" << t.rules << " rules), "
      << t.packets << " packets, " << mismatches << " disagreements\n"
      << "  rule sets classified through 2 or more groups: " << t.grouped << "\n"
      << "  winners: permit rule " << t.rule_hits[0] << ", deny rule " << t.rule_hits[1] << ", reject rule "
      << t.rule_hits[2] << "; default permit " << t.default_hits[0] << ", default deny " << t.default_hits[1]
      << ", default reject " << t.default_hits[2] << "\n"
      << "  packets two or more rules match: " << t.overlapping << " (with different actions: "
      << t.order_decides << ")\n"
      << "  IPv4 " << t.v4 << ", IPv6 " << t.v6 << "; TCP " << t.tcp << ", UDP " << t.udp << ", ICMP echo "
      << t.icmp_echo << ", other ICMP " << t.icmp_other << ", GRE " << t.other << "\n"
      << "  verdicts: redirect " << t.redirected << ", pass (no neighbour) " << t.passed_no_neigh << ", tx "
      << t.tx << ", drop " << t.dropped << "\n  zone pairs:";
    for (int a = 0; a < kZones; ++a)
        for (int b = 0; b < 2; ++b) s << " " << kZoneNames[a] << "->" << kZoneNames[b] << " " << t.zone_pairs[a][b];
    if (!check_run(s.str(), mismatches, t.packets, 100000, t.grouped, kRuleSets)) return;
    const size_t floor = t.packets / 50;  // every outcome at least 2% of the packets
    for (int a = 0; a < 3; ++a) {
        EXPECT_GE(t.rule_hits[a], floor) << action_name(static_cast<Action>(a)) << " rules won too rarely";
        EXPECT_GE(t.default_hits[a], floor / 3) << "default " << action_name(static_cast<Action>(a)) << " too rare";
    }
    EXPECT_GE(t.overlapping, t.packets / 5) << "too few packets exercise overlapping rules";
    EXPECT_GE(t.order_decides, t.packets / 10) << "too few packets where the order of the rules matters";
    for (size_t n : {t.v4, t.v6, t.tcp, t.udp, t.icmp_echo}) EXPECT_GE(n, floor);
    EXPECT_GE(t.icmp_other + t.other, floor / 2);
    EXPECT_GE(t.redirected, floor);
    for (int a = 0; a < kZones; ++a)
        for (int b = 0; b < 2; ++b) EXPECT_GE(t.zone_pairs[a][b], floor / 2) << kZoneNames[a] << "->" << kZoneNames[b];
}

}  // namespace
}  // namespace sluice::test
