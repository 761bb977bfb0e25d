// The stateless filter stage of the real XDP datapath, against an independent
// reference: random filter rule sets (nested IPv4/IPv6 prefixes, address-book
// entries, `any` fields, tcp/udp/icmp/icmpv6/numbered protocols, overlapping
// source- and destination-port ranges, accept/drop/count actions, one or two
// filters bound to the ingress points) are rendered as YAML, parsed, compiled
// and applied the way the daemon does it, and for every packet
//   - the verdict (dropped or not),
//   - the `drop-filter` counter, and
//   - every rule's counter in `filter_hits` (packets +1 and bytes + the frame's
//     length, for exactly the rules the packet counts for)
// must be what a plain linear scan of the filter's rules, written below and
// sharing no code with userspace/compiler, predicts: the first matching
// `accept` or `drop` rule decides, matching `count` rules before it count and
// evaluation goes on, no decider = accepted; every matched rule up to and
// including the decider is counted.
//
// Odd rule sets are compiled with their rules split into groups by shape
// (maps/policy.h), so the datapath's merge of the groups' results — winner =
// lowest rule slot, counted rules of every group up to the winner — is
// checked, as well as the single group sluice uses whenever the rules fit.
// The policy is `default-action: permit` without rules, so a packet the filter
// accepts passes the stateful stage (redirected or passed to the kernel, never
// dropped); no tuple is reused within a rule set's sessions (in either
// direction): on a repeat the session maps are cleared first.
//
// Reproduce a failure: the message names the seed and the rule set;
//   SLUICE_FILTER_RANDOM_SEED=<seed> SLUICE_FILTER_RANDOM_ONLY=<rule set>
//     build/tests/sluice_bpf_tests --gtest_filter='FilterRandom.*'
// runs that rule set alone (same packets), and the message prints the YAML.
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "datapath_env.h"
#include "random_rules.h"

extern "C" {
#include "map_names.h"
#include "policy.h"
#include "runtime_config.h"
#include "stats.h"
}

namespace sluice::test {
namespace {

using namespace random_rules;

// ------------------------------------------------------------------ the model

enum class Action : uint8_t { accept, drop, count };
const char* action_name(Action a) { return a == Action::accept ? "accept" : a == Action::drop ? "drop" : "count"; }

// Another protocol than tcp/udp/icmp/icmpv6, matched by its number.
constexpr uint8_t kSctp = 132;

struct FilterRule {
    AddrMatch src, dst;
    std::optional<uint8_t> proto;           // nullopt: every protocol
    std::vector<PortRange> sports, dports;  // tcp/udp only; empty = every port
    Action action = Action::accept;
};

struct RuleSet {
    AddressBook book;
    std::vector<std::vector<FilterRule>> filters;  // f0, f1: config order
    std::array<int, kZones> bound{-1, -1, -1};     // the filter of each ingress point, -1: none

    // Rule slots number the rules of all filters in config order.
    uint32_t first_slot(int filter) const {
        uint32_t slot = 0;
        for (int f = 0; f < filter; ++f) slot += static_cast<uint32_t>(filters[static_cast<size_t>(f)].size());
        return slot;
    }
    uint32_t rules() const { return first_slot(static_cast<int>(filters.size())); }
    const FilterRule& rule(uint32_t slot) const {
        for (const auto& f : filters) {
            if (slot < f.size()) return f[slot];
            slot -= static_cast<uint32_t>(f.size());
        }
        throw std::out_of_range("rule slot");
    }
};

// ---------------------------------------------------------- the reference

// A rule's fields all match (`any` or left out: every value). A protocol is
// matched by its number: in a filter `icmp` is every ICMP message (protocol 1;
// ICMPv6 is protocol 58, `icmpv6`), unlike an application's echo-only `icmp`.
// Ports only for tcp/udp (the config refuses them elsewhere), none listed =
// every port.
bool rule_matches(const RuleSet& rs, const FilterRule& r, const Packet& p) {
    if (!addresses_match(rs.book, r.src, p.fam, p.src)) return false;
    if (!addresses_match(rs.book, r.dst, p.fam, p.dst)) return false;
    if (r.proto && p.proto != *r.proto) return false;
    if (!r.sports.empty() && !in_any(r.sports, p.sport)) return false;
    if (!r.dports.empty() && !in_any(r.dports, p.dport)) return false;
    return true;
}

struct Outcome {
    bool filtered = false;             // the ingress point has a filter
    std::optional<uint32_t> decider;   // slot of the first matching accept/drop rule
    bool drop = false;
    std::vector<uint32_t> counted;     // slots, up to and including the decider
};

// Linear scan of the filter of the packet's ingress point.
Outcome reference(const RuleSet& rs, const Packet& p) {
    Outcome o;
    const int f = rs.bound[p.in];
    if (f < 0) return o;
    o.filtered = true;
    uint32_t slot = rs.first_slot(f);
    for (const FilterRule& r : rs.filters[static_cast<size_t>(f)]) {
        if (rule_matches(rs, r, p)) {
            o.counted.push_back(slot);
            if (r.action != Action::count) {
                o.decider = slot;
                o.drop = r.action == Action::drop;
                return o;
            }
        }
        ++slot;
    }
    return o;
}

// The shape a split compile groups a rule by: is source / destination `any`.
int shape_of(const FilterRule& r) { return (r.src.is_any() ? 0 : 1) | (r.dst.is_any() ? 0 : 2); }

// Whether rules of two or more shapes match the packet (anywhere in its
// filter): in a split compile, their groups' results have to be merged.
bool shapes_meet(const RuleSet& rs, const Packet& p) {
    const int f = rs.bound[p.in];
    if (f < 0) return false;
    int seen = -1;
    for (const FilterRule& r : rs.filters[static_cast<size_t>(f)]) {
        if (!rule_matches(rs, r, p)) continue;
        if (seen >= 0 && shape_of(r) != seen) return true;
        seen = shape_of(r);
    }
    return false;
}

// ---------------------------------------------------------------- rendering

std::string render_yaml(const RuleSet& rs) {
    std::ostringstream y;
    std::array<std::string, kZones> binding;
    for (size_t z = 0; z < binding.size(); ++z)
        if (rs.bound[z] >= 0) binding[z] = ", filter: f" + std::to_string(rs.bound[z]);
    render_interfaces(y, binding);
    render_address_book(y, rs.book);
    y << "default-action: permit\n"
         "filters:\n";
    uint32_t slot = 0;
    for (size_t f = 0; f < rs.filters.size(); ++f) {
        y << "  f" << f << ":" << (rs.filters[f].empty() ? " []" : "") << "\n";
        for (const FilterRule& r : rs.filters[f]) {
            y << "    - name: r" << slot << "\n";
            render_addr_field(y, "      ", "source", r.src);
            render_addr_field(y, "      ", "destination", r.dst);
            // The protocol by name or, now and then, by number (rule slot 7, 17, ...).
            if (r.proto)
                y << "      protocol: " << (slot % 10 == 7 ? std::to_string(*r.proto) : protocol_text(*r.proto))
                  << "\n";
            if (!r.sports.empty()) y << "      source-port: " << port_set_text(r.sports) << "\n";
            if (!r.dports.empty()) y << "      destination-port: " << port_set_text(r.dports) << "\n";
            y << "      action: " << action_name(r.action) << "\n";
            ++slot;
        }
    }
    return y.str();
}

std::string describe_outcome(const RuleSet& rs, const Outcome& o) {
    if (!o.filtered) return "no filter on this ingress: accepted, nothing counted";
    std::string s =
        o.decider ? "r" + std::to_string(*o.decider) + " (" + action_name(rs.rule(*o.decider).action) + ") decides"
                  : "no rule decides: accepted";
    s += ", counted:";
    for (uint32_t slot : o.counted) s += " r" + std::to_string(slot);
    if (o.counted.empty()) s += " none";
    return s;
}

// ---------------------------------------------------------------- generation

class Generator : public FieldGenerator {
public:
    using FieldGenerator::FieldGenerator;

    RuleSet rule_set(int rules, int filters) {
        RuleSet rs;
        rs.book = start_rule_set();
        rs.filters.resize(static_cast<size_t>(filters));
        // Rules per filter; now and then the second filter has none.
        std::vector<int> sizes = {rules};
        if (filters == 2) {
            int first = rules == 1 || chance(10) ? rules : pick(1, rules - 1);
            sizes = {first, rules - first};
        }
        for (size_t f = 0; f < rs.filters.size(); ++f) fill_filter(rs, rs.filters[f], sizes[f]);
        // Bindings: every ingress point mostly has a filter; at least one does.
        do {
            for (int& f : rs.bound) f = chance(12) ? -1 : pick(0, filters - 1);
        } while (std::all_of(rs.bound.begin(), rs.bound.end(), [](int f) { return f < 0; }));
        return rs;
    }

    // Aimed at a rule (often just inside or just outside its edges), or random
    // over the space the rule set talks about.
    Packet packet(const RuleSet& rs, bool& aimed) {
        aimed = false;
        if (chance(60)) {
            std::vector<Zone> filtered;
            for (Zone z : {kTrust, kUntrust, kDmz})
                if (rs.bound[z] >= 0 && !rs.filters[static_cast<size_t>(rs.bound[z])].empty()) filtered.push_back(z);
            if (!filtered.empty()) {
                aimed = true;
                Zone in = one_of(filtered);
                // Often at a `count` rule: the packet is then counted by it and, most
                // likely, by a rule after it.
                const auto& rules = rs.filters[static_cast<size_t>(rs.bound[in])];
                std::vector<const FilterRule*> targets;
                for (const FilterRule& r : rules)
                    if (r.action == Action::count) targets.push_back(&r);
                if (targets.empty() || chance(60))
                    for (const FilterRule& r : rules) targets.push_back(&r);
                Packet p = aimed_at(rs, *one_of(targets));
                p.in = in;
                if (chance(35)) near_miss(rs, p);
                return p;
            }
        }
        return random_packet(rs);
    }

private:
    void fill_filter(RuleSet& rs, std::vector<FilterRule>& rules, int n) {
        while (static_cast<int>(rules.size()) < n) {
            if (n >= 8 && chance(12)) {
                nested_chain(rs, rules, n);
                continue;
            }
            rules.push_back(random_rule(rs));
        }
        // Actions: at most 5 `count` rules, so that no packet is counted by
        // more than 6 (the compiler's limit), mostly in the first half of the
        // filter where later rules can still decide; the rest accept/drop.
        for (FilterRule& r : rules) r.action = chance(45) ? Action::accept : Action::drop;
        std::vector<size_t> front, back;
        for (size_t i = 0; i < rules.size(); ++i) (i < (rules.size() + 1) / 2 ? front : back).push_back(i);
        std::shuffle(front.begin(), front.end(), rng_);
        std::shuffle(back.begin(), back.end(), rng_);
        for (int counts = chance(90) ? pick(2, 5) : 0; counts > 0 && !(front.empty() && back.empty()); --counts) {
            std::vector<size_t>& from = back.empty() || (!front.empty() && chance(70)) ? front : back;
            rules[from.back()].action = Action::count;
            from.pop_back();
        }
        // Most `count` rules watch broadly (a source, a destination, or a
        // protocol), so that packets aimed at other rules meet them too.
        for (FilterRule& r : rules) {
            if (r.action != Action::count || chance(30)) continue;
            switch (pick(0, 2)) {
            case 0: r.dst.style = Style::any_scalar; r.proto.reset(); break;
            case 1: r.src.style = Style::any_scalar; r.proto.reset(); break;
            default:
                r.src.style = r.dst.style = Style::any_scalar;
                if (!r.proto) r.proto = kUdp;
                break;
            }
            r.sports.clear();
            r.dports.clear();
        }
    }

    FilterRule random_rule(const RuleSet& rs) {
        FilterRule r;
        r.src = random_match(rs.book);
        r.dst = random_match(rs.book);
        int k = pick(0, 99);
        if (k < 15) r.proto = std::nullopt;
        else if (k < 45) r.proto = kTcp;
        else if (k < 72) r.proto = kUdp;
        else if (k < 82) r.proto = kIcmp;
        else if (k < 90) r.proto = kIcmpv6;
        else r.proto = chance(70) ? kGre : kSctp;
        // A rule that matches everything would end most rule sets early.
        if (!r.proto && r.src.is_any() && r.dst.is_any() && chance(70)) r.proto = chance(50) ? kTcp : kUdp;
        if (r.proto == kTcp || r.proto == kUdp) {
            if (chance(60))
                for (int j = pick(1, 3); j > 0; --j) r.dports.push_back(random_range());
            if (chance(35))
                for (int j = pick(1, 3); j > 0; --j) r.sports.push_back(random_range());
        }
        return r;
    }

    // Rules that differ only in one address field: the same anchor at nested lengths.
    void nested_chain(RuleSet& rs, std::vector<FilterRule>& rules, int n) {
        FilterRule base = random_rule(rs);
        const std::vector<Prefix> chain = nested_prefixes();
        bool on_source = chance(50);
        for (const Prefix& prefix : chain) {
            if (static_cast<int>(rules.size()) >= n) return;
            FilterRule r = base;
            AddrMatch& m = on_source ? r.src : r.dst;
            m.style = Style::list;
            m.items = {inline_item(prefix)};
            if (chance(25)) m.items.push_back(inline_item(random_prefix(prefix.fam == Fam::v4 ? Fam::v6 : Fam::v4)));
            rules.push_back(r);
        }
    }

    // Every prefix the rule set's rules name, of family f.
    std::vector<Prefix> all_prefixes(const RuleSet& rs, Fam f) {
        std::vector<Prefix> all;
        for (const auto& rules : rs.filters)
            for (const FilterRule& r : rules)
                for (const AddrMatch* m : {&r.src, &r.dst}) {
                    auto some = prefixes_of(rs.book, *m, f);
                    all.insert(all.end(), some.begin(), some.end());
                }
        return all;
    }

    // A destination anywhere: a host with a neighbour (redirected), an
    // address of a subnet, or of the universe.
    Addr random_destination(Fam f) {
        int r = pick(0, 99);
        if (r < 25) {
            const bool lan = chance(50);
            return f == Fam::v4 ? (lan ? kLanHostA4 : kWanHostA4) : (lan ? kLanHostA6 : kWanHostA6);
        }
        if (r < 60) return random_in(f, subnet(f, chance(50) ? kTrust : kUntrust), f == Fam::v6 && chance(60));
        return random_in(f, universe(f), f == Fam::v6 && chance(50));
    }

    // Protocol and ports the rule matches, often at a range's edge.
    void l4_for(const FilterRule& r, Packet& p) {
        if (!r.proto) {
            random_l4(p);
            return;
        }
        switch (*r.proto) {
        case kTcp:
        case kUdp:
            set_l4(p, *r.proto, r.dports.empty() ? random_port() : port_in(one_of(r.dports)));
            if (!r.sports.empty()) p.sport = port_in(one_of(r.sports));
            return;
        case kIcmp:
        case kIcmpv6: {
            // Echo or another message of the packet's family (a filter's icmp is every type).
            static const std::vector<uint8_t> types4 = {8, 0, 13}, types6 = {128, 129, 200};
            set_l4(p, p.fam == Fam::v4 ? kIcmp : kIcmpv6, p.fam == Fam::v4 ? one_of(types4) : one_of(types6));
            return;
        }
        default: set_l4(p, *r.proto, 0); return;
        }
    }

    Packet aimed_at(const RuleSet& rs, const FilterRule& r) {
        Packet p;
        // A family both address fields (and the protocol) can match.
        std::vector<Fam> fams;
        for (Fam f : {Fam::v4, Fam::v6}) {
            bool src_ok = r.src.is_any() || !prefixes_of(rs.book, r.src, f).empty();
            bool dst_ok = r.dst.is_any() || !prefixes_of(rs.book, r.dst, f).empty();
            bool proto_ok = !(r.proto == kIcmp && f == Fam::v6) && !(r.proto == kIcmpv6 && f == Fam::v4);
            if (src_ok && dst_ok && proto_ok) fams.push_back(f);
        }
        p.fam = fams.empty() ? (chance(50) ? Fam::v4 : Fam::v6) : one_of(fams);
        const std::vector<Prefix> src = r.src.is_any() ? std::vector<Prefix>{} : prefixes_of(rs.book, r.src, p.fam);
        const std::vector<Prefix> dst = r.dst.is_any() ? std::vector<Prefix>{} : prefixes_of(rs.book, r.dst, p.fam);
        p.src = src.empty() ? random_source(p.fam) : address_in(one_of(src));
        p.dst = dst.empty() ? random_destination(p.fam) : address_in(one_of(dst));
        l4_for(r, p);
        return p;
    }

    // One field moved just past an edge of the rule set's prefixes or ranges,
    // or to another protocol, ICMP type or ingress point.
    void near_miss(const RuleSet& rs, Packet& p) {
        switch (pick(0, 6)) {
        case 0:
        case 1: {  // an address next to a prefix edge, inside the test's range
            std::vector<Prefix> all = all_prefixes(rs, p.fam);
            if (all.empty()) return;
            Addr a = next_to(one_of(all));
            if (!universe(p.fam).contains(p.fam, a)) return;
            (chance(50) ? p.src : p.dst) = a;
            return;
        }
        case 2:
        case 3: {  // a destination or source port next to a range edge
            if (p.proto != kTcp && p.proto != kUdp) return;
            const bool source = chance(40);
            std::vector<PortRange> ranges;
            for (const auto& rules : rs.filters)
                for (const FilterRule& r : rules)
                    if (r.proto == p.proto) {
                        const auto& some = source ? r.sports : r.dports;
                        ranges.insert(ranges.end(), some.begin(), some.end());
                    }
            if (ranges.empty()) return;
            const PortRange& r = one_of(ranges);
            (source ? p.sport : p.dport) = static_cast<uint16_t>(chance(50) ? r.lo - 1 : r.hi + 1);
            return;
        }
        case 4:  // the other transport, or another protocol number
            if (p.proto == kTcp) p.proto = kUdp;
            else if (p.proto == kUdp) p.proto = kTcp;
            else if (p.proto == kGre) p.proto = kSctp;
            else if (p.proto == kSctp) p.proto = kGre;
            return;
        case 5:  // ICMP: another message type
            if (p.proto == kIcmp) p.icmp_type = p.icmp_type == 8 ? 13 : 8;
            else if (p.proto == kIcmpv6) p.icmp_type = p.icmp_type == 128 ? 200 : 128;
            return;
        default:  // another ingress point (maybe another filter, or none)
            p.in = static_cast<Zone>((p.in + pick(1, 2)) % kZones);
            return;
        }
    }

    Packet random_packet(const RuleSet& rs) {
        Packet p;
        p.in = static_cast<Zone>(pick(0, kZones - 1));
        p.fam = chance(50) ? Fam::v4 : Fam::v6;
        std::vector<Prefix> all = all_prefixes(rs, p.fam);
        if (chance(40) && !all.empty()) {
            p.src = address_in(one_of(all));
            p.dst = address_in(one_of(all));
        } else {
            p.src = random_source(p.fam);
            p.dst = random_destination(p.fam);
        }
        random_l4(p);
        if (p.proto == kGre && chance(40)) p.proto = kSctp;
        return p;
    }
};

// ---------------------------------------------------------------- datapath

struct Totals {
    size_t packets = 0, rule_sets = 0, rules = 0;
    size_t grouped = 0;      // rule sets classified through 2+ groups
    size_t aimed = 0;        // packets aimed at a rule (its edges, or just past them)
    size_t drop = 0, accept_by_rule = 0, no_decider = 0, unfiltered = 0;
    size_t counted_2plus = 0;     // packets counted by two or more rules
    size_t counted_only = 0;      // ... by `count` rules and no decider
    size_t shapes_meet = 0;       // packets of split rule sets that rules of 2+ shapes match
    size_t v4 = 0, v6 = 0, tcp = 0, udp = 0, icmp = 0, other = 0;
    size_t redirected = 0, passed = 0, dropped = 0;
};

constexpr uint64_t kDefaultSeed = 0x51c3'2026'f117ull;
constexpr int kRuleSets = 28;
constexpr int kPacketsPerRuleSet = 800;
// Filter rule slots whose counters are compared in full before and after each
// rule set, in both generations (a rule set has at most 60 rules).
constexpr uint32_t kSweptSlots = 256;

class FilterRandom : public RandomRulesTest {};

struct Counter {
    uint64_t packets = 0, bytes = 0;
    bool operator==(const Counter&) const = default;
};

Result<Counter> read_counter(int hits_fd, uint32_t index) {
    auto v = read_percpu_sums(hits_fd, index, sizeof(filter_rule_counter));
    if (!v) return make_error(v.error().message);
    return Counter{v.value().at(0), v.value().at(1)};
}

Result<uint64_t> read_drop_filter(int stats_fd) {
    auto v = read_percpu_sums(stats_fd, STAT_DROP_FILTER, sizeof(stat_counter));
    if (!v) return make_error(v.error().message);
    return v.value().at(0);
}

// The active classifier generation (runtime_config.policy_generation).
Result<uint32_t> active_generation(int cfg_fd) {
    runtime_config cfg{};
    uint32_t key = 0;
    if (bpf_map_lookup_elem(cfg_fd, &key, &cfg) != 0) return make_error("runtime_cfg lookup failed");
    return static_cast<uint32_t>(cfg.policy_generation & 1);
}

// Counters of slots [0, kSweptSlots) in both generations.
Result<std::vector<Counter>> sweep(int hits_fd) {
    std::vector<Counter> all;
    for (uint32_t gen = 0; gen < POLICY_GENERATIONS; ++gen)
        for (uint32_t slot = 0; slot < kSweptSlots; ++slot) {
            auto c = read_counter(hits_fd, gen * FILTER_MAX_RULES + slot);
            if (!c) return make_error(c.error().message);
            all.push_back(c.value());
        }
    return all;
}

TEST_F(FilterRandom, VerdictAndCountersMatchLinearScan) {
    use_environment("FILTER_RANDOM", kDefaultSeed);
    const int hits_fd = env_->map_fd(SLUICE_MAP_FILTER_HITS), stats_fd = env_->map_fd(SLUICE_MAP_STATS);
    const int cfg_fd = env_->map_fd(SLUICE_MAP_RUNTIME_CONFIG);
    for (int fd : {hits_fd, stats_fd, cfg_fd}) ASSERT_GE(fd, 0);

    Totals t;
    size_t mismatches = 0, verdict_mismatches = 0, printed = 0;

    for (int set = 0; set < kRuleSets; ++set) {
        if (!selected(set)) continue;
        Generator gen(set_seed(set));
        // Sizes: a few tiny sets, most mid-sized, some at 40-60 rules.
        const int size_class = gen.pick(0, 99);
        const int rules = size_class < 15 ? gen.pick(1, 5) : size_class < 60 ? gen.pick(6, 40) : gen.pick(40, 60);
        const RuleSet rs = gen.rule_set(rules, gen.chance(50) ? 2 : 1);
        const std::string yaml = render_yaml(rs);
        uint32_t groups = 0;
        ASSERT_TRUE(apply_rule_set(set, yaml, &groups));
        auto generation = active_generation(cfg_fd);
        ASSERT_TRUE(generation.ok()) << generation.error().message;
        const uint32_t base = generation.value() * FILTER_MAX_RULES;
        const uint32_t n = rs.rules();
        ++t.rule_sets;
        t.rules += n;
        if (groups > 1) ++t.grouped;

        auto swept_before = sweep(hits_fd);
        ASSERT_TRUE(swept_before.ok()) << swept_before.error().message;
        // The rule set's counters, as the last packet left them.
        std::vector<Counter> last(n);
        for (uint32_t slot = 0; slot < n; ++slot) {
            auto c = read_counter(hits_fd, base + slot);
            ASSERT_TRUE(c.ok()) << c.error().message;
            last[slot] = c.value();
        }
        auto drops = read_drop_filter(stats_fd);
        ASSERT_TRUE(drops.ok()) << drops.error().message;
        uint64_t last_drops = drops.value();

        std::unordered_set<std::string> used;
        size_t set_mismatches = 0;
        for (int i = 0; i < kPacketsPerRuleSet; ++i) {
            bool aimed = false;
            // Never a "land" packet (source = destination): the datapath
            // drops those before the filter (anomaly_test.cpp).
            Packet p = gen.packet(rs, aimed);
            while (p.src == p.dst) p = gen.packet(rs, aimed);
            // A packet the filter accepts opens a session (default permit): a
            // tuple seen before, in either direction, would meet the old one.
            if (used.count(tuple_id(p, false)) || used.count(tuple_id(p, true))) {
                clear_flows();
                used.clear();
            }
            used.insert(tuple_id(p, false));

            const Outcome want = reference(rs, p);
            const Bytes frame = frame_of(p, static_cast<uint32_t>(i) * 7919u);
            const int verdict = run(frame, ingress_of(p)).retval;

            // What changed: the drop-filter counter and every rule counter.
            std::vector<std::string> wrong;
            auto d = read_drop_filter(stats_fd);
            ASSERT_TRUE(d.ok()) << d.error().message;
            const uint64_t drop_delta = d.value() - last_drops;
            last_drops = d.value();
            std::vector<uint32_t> counted_seen;
            std::string counter_errors;
            for (uint32_t slot = 0; slot < n; ++slot) {
                auto c = read_counter(hits_fd, base + slot);
                ASSERT_TRUE(c.ok()) << c.error().message;
                const Counter delta{c.value().packets - last[slot].packets, c.value().bytes - last[slot].bytes};
                last[slot] = c.value();
                const bool expected = std::find(want.counted.begin(), want.counted.end(), slot) != want.counted.end();
                const Counter expect_delta = expected ? Counter{1, frame.size()} : Counter{};
                if (delta.packets) counted_seen.push_back(slot);
                if (!(delta == expect_delta))
                    counter_errors += " r" + std::to_string(slot) + " +" + std::to_string(delta.packets) +
                                      " packets +" + std::to_string(delta.bytes) + " bytes (expected +" +
                                      std::to_string(expect_delta.packets) + "/+" +
                                      std::to_string(expect_delta.bytes) + ");";
            }

            if (want.drop != (verdict == XDP_DROP) || verdict == XDP_ABORTED) {
                ++verdict_mismatches;
                wrong.push_back("verdict " + xdp_verdict_name(verdict) + ", expected " +
                                (want.drop ? "XDP_DROP" : "not dropped"));
            }
            if (drop_delta != (want.drop ? 1u : 0u))
                wrong.push_back("drop-filter +" + std::to_string(drop_delta) + ", expected +" +
                                (want.drop ? "1" : "0"));
            if (!counter_errors.empty()) wrong.push_back("rule counters:" + counter_errors);

            if (!wrong.empty()) {
                ++mismatches;
                ++set_mismatches;
                if (printed < 12) {
                    ++printed;
                    std::string seen;
                    for (uint32_t slot : counted_seen) seen += " r" + std::to_string(slot);
                    // The rules of the packet's filter it matches, in order.
                    std::string matching;
                    if (const int f = rs.bound[p.in]; f >= 0)
                        for (uint32_t slot = rs.first_slot(f); slot < rs.first_slot(f + 1); ++slot)
                            if (rule_matches(rs, rs.rule(slot), p))
                                matching += " r" + std::to_string(slot) + "(" + action_name(rs.rule(slot).action) + ")";
                    std::string msg;
                    for (const auto& w : wrong) msg += (msg.empty() ? "" : "; ") + w;
                    ADD_FAILURE() << where(set) << " (" << n << " rules, " << groups
                                  << " group(s)) packet " << i << ": " << describe_packet(p) << ", "
                                  << frame.size() << " bytes, filter "
                                  << (rs.bound[p.in] >= 0 ? "f" + std::to_string(rs.bound[p.in]) : std::string("none"))
                                  << "\n  reference: " << describe_outcome(rs, want)
                                  << "\n  its filter's rules matching:" << (matching.empty() ? " none" : matching)
                                  << "\n  datapath:  " << xdp_verdict_name(verdict) << ", counted:"
                                  << (seen.empty() ? " none" : seen) << "\n  wrong: " << msg
                                  << "\n  reproduce: " << reproduce(set);
                }
            }

            // Totals.
            ++t.packets;
            t.aimed += aimed;
            if (!want.filtered) ++t.unfiltered;
            else if (!want.decider) ++t.no_decider;
            else if (want.drop) ++t.drop;
            else ++t.accept_by_rule;
            t.counted_2plus += want.counted.size() >= 2;
            t.counted_only += !want.decider && !want.counted.empty();
            t.shapes_meet += groups > 1 && shapes_meet(rs, p);
            (p.fam == Fam::v4 ? t.v4 : t.v6)++;
            if (p.proto == kTcp) ++t.tcp;
            else if (p.proto == kUdp) ++t.udp;
            else if (p.proto == kIcmp || p.proto == kIcmpv6) ++t.icmp;
            else ++t.other;
            if (verdict == XDP_REDIRECT) ++t.redirected;
            else if (verdict == XDP_PASS) ++t.passed;
            else if (verdict == XDP_DROP) ++t.dropped;
        }

        // Nothing outside the rule set's slots of the active generation moved.
        auto swept_after = sweep(hits_fd);
        ASSERT_TRUE(swept_after.ok()) << swept_after.error().message;
        for (uint32_t k = 0; k < swept_after.value().size(); ++k) {
            const uint32_t gen_of = k / kSweptSlots, slot = k % kSweptSlots;
            if (gen_of * FILTER_MAX_RULES == base && slot < n) continue;
            if (!(swept_after.value()[k] == swept_before.value()[k])) {
                ++set_mismatches;
                ++mismatches;
                ADD_FAILURE() << where(set) << ": filter_hits generation " << gen_of << " slot " << slot
                              << " changed (+" << swept_after.value()[k].packets - swept_before.value()[k].packets
                              << " packets), but the rule set has " << n << " rules in generation "
                              << base / FILTER_MAX_RULES;
            }
        }
        show_rule_set(set, set_mismatches, kPacketsPerRuleSet, yaml);
    }

    std::ostringstream s;
    s << "filter-random: seed " << seed() << ", " << t.rule_sets << " rule sets (" << t.rules << " rules), "
      << t.packets << " packets, " << mismatches << " disagreements (" << verdict_mismatches
      << " in the verdict); drop " << t.drop << ", accept-by-rule " << t.accept_by_rule << ", no decider "
      << t.no_decider << "; packets counted by 2+ rules " << t.counted_2plus << "; rule sets split into 2+ groups "
      << t.grouped << "\n"
      << "  aimed at rules (edges, just past them) " << t.aimed << "; no filter on the ingress " << t.unfiltered
      << "; counted without a decider " << t.counted_only << "; packets of split sets that rules of 2+ shapes match "
      << t.shapes_meet << "\n"
      << "  IPv4 " << t.v4 << ", IPv6 " << t.v6 << "; TCP " << t.tcp << ", UDP " << t.udp << ", ICMP " << t.icmp
      << ", GRE/SCTP " << t.other << "; verdicts: redirect " << t.redirected << ", pass " << t.passed << ", drop "
      << t.dropped;
    if (!check_run(s.str(), mismatches, t.packets, 20000, t.grouped, kRuleSets)) return;
    const size_t floor = t.packets / 50;  // every outcome at least 2% of the packets
    EXPECT_GE(t.drop, floor) << "drop rules decided too rarely";
    EXPECT_GE(t.accept_by_rule, floor) << "accept rules decided too rarely";
    EXPECT_GE(t.no_decider, floor) << "too few packets no rule decides";
    EXPECT_GE(t.counted_2plus, t.packets / 10) << "too few packets counted by two or more rules";
    EXPECT_GE(t.counted_only, floor / 2) << "too few packets only `count` rules match";
    EXPECT_GE(t.shapes_meet, t.packets / 10) << "too few packets whose groups' results are merged";
    EXPECT_GE(t.aimed, t.packets / 2);
    for (size_t v : {t.v4, t.v6, t.tcp, t.udp, t.icmp}) EXPECT_GE(v, floor);
    EXPECT_GE(t.other, floor / 2);
    EXPECT_GE(t.redirected, floor);
}

}  // namespace
}  // namespace sluice::test
