// compile_classifier: rules → field classes → cross-product tables → results
// (maps/policy.h). Everything a packet will look up is computed here, once.
#include <cstring>
#include <map>
#include <string>

#include "compiler/class_set.h"
#include "compiler/classifier_rule.h"
#include "compiler/lpm_tables.h"
#include "compiler/port_classes.h"

namespace sluice::compiler {
namespace {

// Bitset memory the compiler allows itself for combined classes.
constexpr uint64_t kMaxClassBytes = uint64_t{1} << 30;

// Rough kernel memory per entry, for `check`: LPM trie nodes and hash elements
// carry ~48 bytes of bookkeeping besides key and value.
constexpr uint64_t kNodeOverhead = 48;

struct Table {
    uint32_t width = 0;               // classes of the right-hand side
    std::vector<uint32_t> entries;    // [left * width + right]
};

std::string with_commas(uint64_t n) {
    std::string s = std::to_string(n);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
    return s;
}

Status check_budget(const char* table, const char* left_name, size_t left, const char* right_name, size_t right,
                    size_t& budget) {
    const uint64_t need = uint64_t{left} * right;
    if (need > budget)
        return make_error(std::string("the rules need more classifier table space than a generation holds: ") +
                          table + " is " + with_commas(left) + " " + left_name + " classes x " + with_commas(right) +
                          " " + right_name + " classes = " + with_commas(need) + " entries, " +
                          with_commas(budget) + " left of " + with_commas(CLASSIFIER_CROSS_PER_GEN) +
                          "; fewer distinct combinations of these fields across rules fit");
    budget -= need;
    return {};
}

// out[l][r] = class of left[l] ∩ right[r].
Result<Table> cross_classes(const ClassSet& left, const ClassSet& right, ClassSet& out, const char* table,
                            const char* left_name, const char* right_name, size_t& budget) {
    if (auto s = check_budget(table, left_name, left.size(), right_name, right.size(), budget); !s) return s.error();
    Table t{static_cast<uint32_t>(right.size()), std::vector<uint32_t>(left.size() * right.size(), 0)};
    Bits both(out.words());
    for (uint32_t l = 1; l < left.size(); ++l) {
        const Bits& a = left[l];
        for (uint32_t r = 1; r < right.size(); ++r) {
            const Bits& b = right[r];
            for (size_t w = 0; w < both.size(); ++w) both[w] = a[w] & b[w];
            t.entries[size_t{l} * t.width + r] = out.intern(both);
        }
        if (uint64_t{out.size()} * out.words() * 8 > kMaxClassBytes)
            return make_error(std::string("the rules combine into too many distinct classes in ") + table +
                              " (over " + with_commas(out.size()) + "); fewer distinct combinations fit");
    }
    return t;
}

class ResultSet {
public:
    ResultSet() { results_.push_back(empty()); }

    Result<uint32_t> of(const Bits& matched, const std::vector<ClassifierRule>& rules) {
        classifier_result res = empty();
        std::vector<const ClassifierRule*> counted;
        bool decided = false;
        for (size_t w = 0; w < matched.size() && !decided; ++w) {
            for (uint64_t bits = matched[w]; bits && !decided; bits &= bits - 1) {
                const ClassifierRule& rule = rules[w * 64 + static_cast<size_t>(__builtin_ctzll(bits))];
                if (rule.counted) {
                    if (res.counted_n == CLASSIFIER_MAX_COUNTED) {
                        std::string names;
                        for (const ClassifierRule* r : counted) names += "\n  " + r->where;
                        return make_error(rule.where + ": a packet can match this rule after " +
                                          std::to_string(CLASSIFIER_MAX_COUNTED) +
                                          " other rules of its filter that count it; at most " +
                                          std::to_string(CLASSIFIER_MAX_COUNTED) +
                                          " rules (the deciding one included) may count one packet, so merge "
                                          "some `count` rules. Those matched first:" + names);
                    }
                    res.counted[res.counted_n++] = rule.id;
                    counted.push_back(&rule);
                }
                if (rule.decides) {
                    res.rule = rule.id;
                    res.action = rule.action;
                    res.ruleset_id = rule.ruleset_id;
                    decided = true;
                }
            }
        }
        if (!decided && res.counted_n == 0) return 0u;
        std::string key(reinterpret_cast<const char*>(&res), sizeof res);
        auto [it, inserted] = ids_.try_emplace(key, static_cast<uint32_t>(results_.size()));
        if (inserted) {
            if (results_.size() >= CLASSIFIER_MAX_RESULTS)
                return make_error("the rules have more than " + with_commas(CLASSIFIER_MAX_RESULTS) +
                                  " distinct outcomes (deciding rule and counted rules)");
            results_.push_back(res);
        }
        return it->second;
    }

    std::vector<classifier_result> take() { return std::move(results_); }

private:
    static classifier_result empty() {
        classifier_result r;
        std::memset(&r, 0, sizeof r);
        r.rule = CLASSIFIER_NO_RULE;
        return r;
    }
    std::vector<classifier_result> results_;
    std::map<std::string, uint32_t> ids_;
};

Result<Table> cross_results(const ClassSet& left, const ClassSet& right, const std::vector<ClassifierRule>& rules,
                            ResultSet& results, size_t& budget) {
    if (auto s = check_budget("T_FINAL", "scope+port", left.size(), "address", right.size(), budget); !s)
        return s.error();
    Table t{static_cast<uint32_t>(right.size()), std::vector<uint32_t>(left.size() * right.size(), 0)};
    Bits both(left.words());
    for (uint32_t l = 1; l < left.size(); ++l) {
        for (uint32_t r = 1; r < right.size(); ++r) {
            for (size_t w = 0; w < both.size(); ++w) both[w] = left[l][w] & right[r][w];
            auto id = results.of(both, rules);
            if (!id) return id.error();
            t.entries[size_t{l} * t.width + r] = id.value();
        }
    }
    return t;
}

template <typename Key>
std::vector<std::pair<Key, uint32_t>> to_classes(const std::vector<std::pair<Key, Bits>>& entries, ClassSet& classes) {
    std::vector<std::pair<Key, uint32_t>> out;
    out.reserve(entries.size());
    for (const auto& [key, bits] : entries) out.emplace_back(key, classes.intern(bits));
    return out;
}

}  // namespace

Result<CompiledClassifier> compile_classifier(const std::vector<ClassifierRule>& rules, uint8_t generation) {
    if (rules.size() > CLASSIFIER_MAX_RULES)
        return make_error("too many rules: " + with_commas(rules.size()) + " policies and filter rules, at most " +
                          with_commas(CLASSIFIER_MAX_RULES));
    const size_t words = words_for(rules.size());
    CompiledClassifier out;
    out.generation = generation;
    out.rule_count = static_cast<uint32_t>(rules.size());

    // Scopes: one class per (kind, a, b), holding exactly that scope's rules.
    ClassSet scopes(words);
    {
        std::map<std::tuple<int, uint16_t, uint16_t>, Bits> by_scope;
        for (uint32_t i = 0; i < rules.size(); ++i) {
            auto [it, inserted] =
                by_scope.try_emplace({rules[i].kind, rules[i].scope_a, rules[i].scope_b}, Bits(words));
            set_bit(it->second, i);
        }
        for (const auto& [scope, bits] : by_scope) {
            classifier_scope_key key;
            std::memset(&key, 0, sizeof key);
            key.kind = static_cast<__u8>(std::get<0>(scope));
            key.a = std::get<1>(scope);
            key.b = std::get<2>(scope);
            key.generation = generation;
            out.scopes.emplace_back(key, scopes.intern(bits));
        }
    }

    // Addresses: LPM entries per family, classes shared by both families.
    ClassSet sources(words), destinations(words);
    {
        std::vector<const PrefixSet*> src, dst;
        for (const ClassifierRule& rule : rules) {
            src.push_back(&rule.source);
            dst.push_back(&rule.destination);
        }
        out.src_v4 = to_classes(lpm_entries_v4(src, generation, words), sources);
        out.src_v6 = to_classes(lpm_entries_v6(src, generation, words), sources);
        out.dst_v4 = to_classes(lpm_entries_v4(dst, generation, words), destinations);
        out.dst_v6 = to_classes(lpm_entries_v6(dst, generation, words), destinations);
    }

    // Ports.
    ClassSet dports(words), sports(words);
    {
        std::vector<const AppSet*> d, s;
        for (const ClassifierRule& rule : rules) {
            d.push_back(&rule.ports);
            s.push_back(&rule.source_ports);
        }
        out.port_class = port_class_array(d, dports);
        out.sport_class = port_class_array(s, sports);
    }

    // Cross products, back to back in this generation's half of pol_cross.
    size_t budget = CLASSIFIER_CROSS_PER_GEN;
    ClassSet scope_app(words), with_sport(words), addresses(words);
    auto t0 = cross_classes(scopes, dports, scope_app, "T_SCOPE_APP", "scope", "destination-port", budget);
    if (!t0) return t0.error();
    auto t1 = cross_classes(scope_app, sports, with_sport, "T_SPORT", "scope+destination-port", "source-port", budget);
    if (!t1) return t1.error();
    auto t2 = cross_classes(sources, destinations, addresses, "T_SRC_DST", "source", "destination", budget);
    if (!t2) return t2.error();
    ResultSet results;
    auto t3 = cross_results(with_sport, addresses, rules, results, budget);
    if (!t3) return t3.error();

    uint32_t base = uint32_t{generation} * CLASSIFIER_CROSS_PER_GEN;
    const Table* tables[CLASSIFIER_TABLES] = {&t0.value(), &t1.value(), &t2.value(), &t3.value()};
    for (int i = 0; i < CLASSIFIER_TABLES; ++i) {
        out.layout.table[i].base = base;
        out.layout.table[i].width = tables[i]->width;
        out.cross.insert(out.cross.end(), tables[i]->entries.begin(), tables[i]->entries.end());
        base += static_cast<uint32_t>(tables[i]->entries.size());
    }
    out.results = results.take();

    out.field_classes = {static_cast<uint32_t>(scopes.size()), static_cast<uint32_t>(sources.size()),
                         static_cast<uint32_t>(destinations.size()), static_cast<uint32_t>(dports.size()),
                         static_cast<uint32_t>(sports.size())};
    out.combined_classes = {static_cast<uint32_t>(scope_app.size()), static_cast<uint32_t>(with_sport.size()),
                            static_cast<uint32_t>(addresses.size())};
    out.field_sets = {scopes.take(), sources.take(), destinations.take(), dports.take(), sports.take()};
    const uint64_t lpm_entries = out.src_v4.size() + out.dst_v4.size() + out.src_v6.size() + out.dst_v6.size();
    out.map_bytes = lpm_entries * (kNodeOverhead + sizeof(policy_lpm_key_v6) + 4) +
                    out.scopes.size() * (kNodeOverhead + sizeof(classifier_scope_key) + 4) +
                    (out.port_class.size() + out.sport_class.size()) * 4 + out.cross.size() * 4 +
                    out.results.size() * sizeof(classifier_result);
    return out;
}

}  // namespace sluice::compiler
