// Checks across the nat section, once every section is parsed: the limits of
// the NAT maps (maps/nat.h), overlaps that would make the translation of a
// packet ambiguous, and pools that cannot serve the family a rule matches.
// Each message names the other rule or pool of an overlap.
#include <map>
#include <tuple>

#include "config/sections.h"

extern "C" {
#include "nat.h"
}

namespace sluice::config {
namespace {

constexpr unsigned kIpv4 = 1, kIpv6 = 2, kBothFamilies = kIpv4 | kIpv6;

unsigned family_bit(Family family) {
    return family == Family::ipv4 ? kIpv4 : kIpv6;
}
std::string family_name(unsigned bits) {
    return bits == kIpv4 ? "IPv4" : "IPv6";
}

std::string address_text(const Prefix& host) {
    std::string text = host.to_string();
    return text.substr(0, text.find('/'));
}

std::string overlaps_message(const std::string& other_path, const std::string& other_text) {
    return "overlaps " + other_path + " (" + other_text + ")";
}

std::string too_many(const std::string& what, size_t count, size_t limit) {
    return "too many " + what + ": " + std::to_string(count) + " (at most " + std::to_string(limit) + ")";
}

// A static or nptv6 rule with its path ("nat.static[0]") and whole ranges.
struct PrefixRuleRef {
    const PrefixNatRule* rule;
    std::string path;
    bool nptv6;
    AddressRange inside, outside;
};

class NatChecker {
public:
    NatChecker(YamlReader& reader, const YAML::Node& nat_node, const Config& config)
        : reader_(reader), nat_node_(nat_node), config_(config), nat_(config.nat) {
        for (size_t i = 0; i < nat_.static_rules.size(); ++i)
            add_prefix_rule(nat_.static_rules[i], "nat.static", i, false);
        for (size_t i = 0; i < nat_.nptv6.size(); ++i) add_prefix_rule(nat_.nptv6[i], "nat.nptv6", i, true);
        for (const NatPool& pool : nat_.pools)
            for (const AddressRange& range : pool.addresses)
                if (fits_one_word(range)) pool_ranges_.push_back(&range);
    }

    void run() {
        limits();
        for (const NatPool& pool : nat_.pools) pool_addresses(pool);
        for (size_t i = 0; i < nat_.source.size(); ++i) source_pool_family(nat_.source[i], i);
        for (size_t i = 0; i < nat_.destination.size(); ++i) destination_rule(i);
        for (size_t i = 0; i < prefix_rules_.size(); ++i) prefix_rule(i);
    }

private:
    void add_prefix_rule(const PrefixNatRule& rule, const std::string& list, size_t index, bool nptv6) {
        prefix_rules_.push_back({&rule, index_path(list, index), nptv6, range_of(rule.inside), range_of(rule.outside)});
    }

    // Where a whole list is written; only called when the list has items, so
    // the nat section is a mapping.
    Location list_location(const char* key) const { return location_of(nat_node_[key]); }

    void limits() {
        if (nat_.pools.size() > NAT_MAX_POOLS)
            reader_.error(list_location("pools"), "nat.pools", too_many("pools", nat_.pools.size(), NAT_MAX_POOLS));
        if (nat_.source.size() > NAT_MAX_SOURCE_RULES)
            reader_.error(list_location("source"), "nat.source",
                          too_many("source rules", nat_.source.size(), NAT_MAX_SOURCE_RULES));
        if (nat_.destination.size() > NAT_MAX_DESTINATION_RULES)
            reader_.error(list_location("destination"), "nat.destination",
                          too_many("destination rules", nat_.destination.size(), NAT_MAX_DESTINATION_RULES));
        // Static and nptv6 entries share the prefix maps.
        if (prefix_rules_.size() > NAT_MAX_PREFIX_RULES) {
            const char* key = nat_.static_rules.empty() ? "nptv6" : "static";
            reader_.error(list_location(key), std::string("nat.") + key,
                          too_many("static and nptv6 rules", prefix_rules_.size(), NAT_MAX_PREFIX_RULES));
        }
    }

    // Each range must count up in one 32-bit word, ranges must not share
    // addresses (in one pool or across pools), and a family's ranges must fit
    // the pool's entries and its 32-bit address count.
    void pool_addresses(const NatPool& pool) {
        uint64_t addresses[2] = {}, ranges[2] = {};
        for (const AddressRange& range : pool.addresses) {
            if (!fits_one_word(range)) {
                reader_.error(
                    range.location, range.path,
                    "\"" + range.text + "\" is too wide: IPv6 pool ranges must differ only in the last 32 bits");
                continue;
            }
            const int family = range.first.family == Family::ipv6;
            addresses[family] += address_count(range);
            ranges[family] += 1;
            for (const AddressRange* earlier : pool_ranges_) {
                if (earlier == &range) break;
                if (overlaps(*earlier, range)) {
                    reader_.error(range.location, range.path, overlaps_message(earlier->path, earlier->text));
                    break;
                }
            }
        }
        const std::string path = field_path(field_path("nat.pools", pool.name), "addresses");
        for (int family = 0; family < 2; ++family) {
            const std::string name = family ? "IPv6" : "IPv4";
            if (ranges[family] > NAT_POOL_MAX_RANGES)
                reader_.error(pool.addresses_location, path,
                              too_many(name + " ranges", ranges[family], NAT_POOL_MAX_RANGES));
            else if (addresses[family] > kMaxPoolAddresses)
                reader_.error(pool.addresses_location, path,
                              too_many(name + " addresses", addresses[family], kMaxPoolAddresses));
        }
    }

    // Families an address field can match; unknown names were reported already.
    unsigned families(const AddressMatch& match) const {
        if (match.any) return kBothFamilies;
        unsigned bits = 0;
        for (const AddressItem& item : match.items) {
            if (item.prefix) {
                bits |= family_bit(item.prefix->family);
            } else if (const AddressBookEntry* entry = config_.find_address(item.text)) {
                for (const Prefix& prefix : entry->prefixes) bits |= family_bit(prefix.family);
            } else {
                return kBothFamilies;
            }
        }
        return bits;
    }

    // A pool rule translates only the families its pool has addresses of; a
    // rule that matches none of them would never translate anything.
    void source_pool_family(const SourceNatRule& rule, size_t index) {
        if (!rule.pool) return;
        const NatPool* pool = config_.find_pool(rule.pool->name);
        if (!pool || pool->addresses.empty()) return;
        unsigned has = 0;
        for (const AddressRange& range : pool->addresses) has |= family_bit(range.first.family);
        const unsigned wanted = families(rule.source) & families(rule.destination);
        if (wanted == 0 || (wanted & has) != 0) return;
        reader_.error(rule.pool->location, field_path(index_path("nat.source", index), "translate.pool"),
                      "pool \"" + pool->name + "\" has no " + family_name(wanted) + " address, but rule \"" +
                          rule.name + "\" matches only " + family_name(wanted));
    }

    void destination_rule(size_t index) {
        const DestinationNatRule& rule = nat_.destination[index];
        // The parser reads a host address; anything shorter means it failed
        // and said so already.
        if (rule.destination.length != rule.destination.max_length()) return;
        const std::string path = index_path("nat.destination", index);
        auto key = std::make_tuple(rule.from.name, rule.destination, rule.protocol.value_or(0), rule.port.value_or(0));
        auto [it, inserted] = destinations_.try_emplace(key, index);
        if (!inserted)
            reader_.error(rule.location, path,
                          "overlaps " + index_path("nat.destination", it->second) + " (" +
                              nat_.destination[it->second].name + ")");

        const std::string destination_path = field_path(path, "destination");
        const std::string address = address_text(rule.destination);
        const AddressRange host = range_of(rule.destination);
        for (const AddressRange* range : pool_ranges_) {
            if (overlaps(*range, host)) {
                reader_.error(rule.destination_location, destination_path,
                              "destination " + address + " is an address of " + range->path + " (" + range->text + ")");
                return;
            }
        }
        for (const PrefixRuleRef& prefix : prefix_rules_) {
            if (overlaps(prefix.outside, host)) {
                reader_.error(rule.destination_location, destination_path,
                              "destination " + address + " is also translated by " + prefix.path + " (outside " +
                                  prefix.rule->outside.to_string() + ")");
                return;
            }
        }
    }

    // Reports the first earlier static/nptv6 rule whose inside (or outside)
    // prefix overlaps this one's: both would claim the same addresses.
    void overlap_with_earlier(size_t index, bool inside) {
        const PrefixRuleRef& ref = prefix_rules_[index];
        const char* side = inside ? "inside" : "outside";
        auto range = [inside](const PrefixRuleRef& r) -> const AddressRange& { return inside ? r.inside : r.outside; };
        for (size_t earlier = 0; earlier < index; ++earlier) {
            const PrefixRuleRef& other = prefix_rules_[earlier];
            if (!overlaps(range(other), range(ref))) continue;
            reader_.error(inside ? ref.rule->inside_location : ref.rule->outside_location, field_path(ref.path, side),
                          overlaps_message(field_path(other.path, side), range(other).text));
            return;
        }
    }

    void prefix_rule(size_t index) {
        const PrefixRuleRef& ref = prefix_rules_[index];
        const PrefixNatRule& rule = *ref.rule;
        const std::string inside_path = field_path(ref.path, "inside");
        const std::string outside_path = field_path(ref.path, "outside");
        if (ref.nptv6 && rule.inside.length > 64)
            reader_.error(rule.inside_location, inside_path,
                          "NPTv6 prefixes must be /64 or shorter, got /" + std::to_string(rule.inside.length) +
                              " (RFC 6296 adjusts a 16-bit word after the prefix to keep checksums valid)");
        if (overlaps(ref.inside, ref.outside))
            reader_.error(rule.outside_location, outside_path,
                          "overlaps its own inside prefix (" + rule.inside.to_string() + ")");
        overlap_with_earlier(index, true);
        overlap_with_earlier(index, false);
        for (const AddressRange* range : pool_ranges_) {
            if (overlaps(*range, ref.outside)) {
                reader_.error(rule.outside_location, outside_path, overlaps_message(range->path, range->text));
                break;
            }
        }
    }

    YamlReader& reader_;
    const YAML::Node nat_node_;
    const Config& config_;
    const Nat& nat_;
    std::vector<PrefixRuleRef> prefix_rules_;
    std::vector<const AddressRange*> pool_ranges_;  // every pool range that fits a pool entry, in file order
    std::map<std::tuple<std::string, Prefix, uint8_t, uint16_t>, size_t> destinations_;
};

}  // namespace

void validate_nat(YamlReader& reader, const YAML::Node& root, const Config& config) {
    NatChecker(reader, root["nat"], config).run();
}

}  // namespace sluice::config
