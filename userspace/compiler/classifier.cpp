// compile_classifier: rules → field classes → cross-product tables → results
// (maps/policy.h). Everything a packet will look up is computed here, once.
#include <algorithm>
#include <array>
#include <cstdint>
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

// Candidate (left, right) pairs a sparse table may look at before the
// compiler gives up (each is a few word operations).
constexpr uint64_t kMaxSparseVisits = uint64_t{1} << 28;

struct Table {
    uint32_t width = 0;               // classes of the right-hand side; 0: sparse
    std::vector<uint32_t> entries;    // dense: [left * width + right]
    std::vector<std::array<uint32_t, 3>> sparse;  // sparse: (left, right, value), values != 0
};

// What is left of a generation's table space.
struct Budget {
    size_t dense = CLASSIFIER_CROSS_PER_GEN;
    size_t sparse = CLASSIFIER_SPARSE_PER_GEN;
    bool allow_sparse = true;   // false: fail fast where a dense table does not fit
    bool out_of_space = false;  // set when a table did not fit: splitting by shape may help
};

struct TableName {
    const char* table;
    const char* left;
    const char* right;
};

std::string with_commas(uint64_t n) {
    std::string s = std::to_string(n);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
    return s;
}

Error no_space(const TableName& name, size_t left, size_t right, Budget& budget, const std::string& sparse) {
    budget.out_of_space = true;
    return make_error(std::string("the rules need more classifier table space than a generation holds: ") +
                      name.table + " is " + with_commas(left) + " " + name.left + " classes x " + with_commas(right) +
                      " " + name.right + " classes = " + with_commas(uint64_t{left} * right) + " cells, more than the " +
                      with_commas(budget.dense) + " dense entries left of " + with_commas(CLASSIFIER_CROSS_PER_GEN) +
                      ", and " + sparse + "; fewer distinct combinations of these fields across rules fit");
}

// The table of left x right, entry = value_of(left[l] ∩ right[r]) (0 for an
// empty intersection). Dense (an array of every cell) when the product fits
// what is left of pol_cross; else sparse: only the cells whose rule sets
// overlap, found through the rules they share, if they fit pol_cross_sparse.
template <typename ValueOf>
Result<Table> cross_table(const ClassSet& left, const ClassSet& right, const TableName& name, Budget& budget,
                          ValueOf value_of) {
    const uint64_t need = uint64_t{left.size()} * right.size();
    Bits both(left.words());
    Table t;
    if (need <= budget.dense) {
        budget.dense -= need;
        t.width = static_cast<uint32_t>(right.size());
        t.entries.assign(need, 0);
        for (uint32_t l = 1; l < left.size(); ++l) {
            for (uint32_t r = 1; r < right.size(); ++r) {
                for (size_t w = 0; w < both.size(); ++w) both[w] = left[l][w] & right[r][w];
                auto v = value_of(both);
                if (!v) return v.error();
                t.entries[size_t{l} * t.width + r] = v.value();
            }
        }
        return t;
    }
    if (!budget.allow_sparse) return no_space(name, left.size(), right.size(), budget, "no sparse table was tried");
    std::vector<std::vector<uint32_t>> right_by_rule(left.words() * 64);
    for (uint32_t r = 1; r < right.size(); ++r)
        for (size_t w = 0; w < right.words(); ++w)
            for (uint64_t bits = right[r][w]; bits; bits &= bits - 1)
                right_by_rule[w * 64 + static_cast<size_t>(__builtin_ctzll(bits))].push_back(r);
    std::vector<uint32_t> seen(right.size(), 0);
    uint64_t visits = 0;
    for (uint32_t l = 1; l < left.size(); ++l) {
        for (size_t w = 0; w < left.words(); ++w) {
            for (uint64_t bits = left[l][w]; bits; bits &= bits - 1) {
                for (uint32_t r : right_by_rule[w * 64 + static_cast<size_t>(__builtin_ctzll(bits))]) {
                    if (++visits > kMaxSparseVisits)
                        return no_space(name, left.size(), right.size(), budget,
                                        "too many of its cells are non-empty to list them as sparse entries");
                    if (seen[r] == l) continue;
                    seen[r] = l;
                    for (size_t i = 0; i < both.size(); ++i) both[i] = left[l][i] & right[r][i];
                    auto v = value_of(both);
                    if (!v) return v.error();
                    if (!v.value()) continue;
                    if (t.sparse.size() == budget.sparse)
                        return no_space(name, left.size(), right.size(), budget,
                                        "more than " + with_commas(budget.sparse) +
                                            " of its cells are non-empty, the sparse entries left of " +
                                            with_commas(CLASSIFIER_SPARSE_PER_GEN));
                    t.sparse.push_back({l, r, v.value()});
                }
            }
        }
    }
    budget.sparse -= t.sparse.size();
    return t;
}

// out[l][r] = class of left[l] ∩ right[r]. Stops with out-of-space once
// `out` holds more than max_out classes: the caller's next table, which
// multiplies `out` by another class count, could not be dense then, so an
// attempt without sparse tables fails early instead of filling this table.
Result<Table> cross_classes(const ClassSet& left, const ClassSet& right, ClassSet& out, const TableName& name,
                            Budget& budget, size_t max_out = SIZE_MAX) {
    return cross_table(left, right, name, budget, [&](const Bits& both) -> Result<uint32_t> {
        const uint32_t id = out.intern(both);
        if (out.size() > max_out) {
            budget.out_of_space = true;
            return make_error(std::string("the rules combine into more than ") + with_commas(max_out) + " classes in " +
                              name.table + ", too many for a dense table after it");
        }
        if (uint64_t{out.size()} * out.words() * 8 > kMaxClassBytes) {
            budget.out_of_space = true;
            return make_error(std::string("the rules combine into too many distinct classes in ") + name.table +
                              " (over " + with_commas(out.size()) + "); fewer distinct combinations fit");
        }
        return id;
    });
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
                        for (const ClassifierRule* r : counted)
                            names += "\n  " + r->where + " (" + r->at.file + ":" + std::to_string(r->at.line) + ")";
                        Error e = make_error(ErrorCode::InvalidConfig,
                                             rule.where + ": a packet can match this rule after " +
                                                 std::to_string(CLASSIFIER_MAX_COUNTED) +
                                                 " other rules of its filter that count it; at most " +
                                                 std::to_string(CLASSIFIER_MAX_COUNTED) +
                                                 " rules (the deciding one included) may count one packet, so merge "
                                                 "some `count` rules. Those matched first:" + names);
                        e.where = rule.at;
                        return e;
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
                            ResultSet& results, Budget& budget) {
    return cross_table(left, right, TableName{"T_FINAL", "scope+port", "address"}, budget,
                       [&](const Bits& both) { return results.of(both, rules); });
}

template <typename Key>
std::vector<std::pair<Key, uint32_t>> to_classes(const std::vector<std::pair<Key, Bits>>& entries, ClassSet& classes) {
    std::vector<std::pair<Key, uint32_t>> out;
    out.reserve(entries.size());
    for (const auto& [key, bits] : entries) out.emplace_back(key, classes.intern(bits));
    return out;
}

enum FieldIndex { kScope = 0, kSource = 1, kDestination = 2, kDestinationPort = 3, kSourcePort = 4, kFields = 5 };

// The five fields cut into classes over all rules, and the entries that point
// at those classes. Groups project these classes onto their own rules.
struct Fields {
    explicit Fields(size_t words)
        : classes{ClassSet(words), ClassSet(words), ClassSet(words), ClassSet(words), ClassSet(words)} {}
    std::array<ClassSet, kFields> classes;
    std::vector<std::pair<classifier_scope_key, uint32_t>> scopes;
    std::vector<std::pair<policy_lpm_key_v4, uint32_t>> src_v4, dst_v4;
    std::vector<std::pair<policy_lpm_key_v6, uint32_t>> src_v6, dst_v6;
    std::vector<uint32_t> port_class, sport_class;
};

Fields field_classes(const std::vector<ClassifierRule>& rules, uint8_t generation, size_t words) {
    Fields f(words);
    // Scopes: one class per (kind, a, b), holding exactly that scope's rules.
    std::map<std::tuple<int, uint16_t, uint16_t>, Bits> by_scope;
    for (uint32_t i = 0; i < rules.size(); ++i) {
        auto [it, inserted] = by_scope.try_emplace({rules[i].kind, rules[i].scope_a, rules[i].scope_b}, Bits(words));
        set_bit(it->second, i);
    }
    for (const auto& [scope, bits] : by_scope) {
        classifier_scope_key key;
        std::memset(&key, 0, sizeof key);
        key.kind = static_cast<__u8>(std::get<0>(scope));
        key.a = std::get<1>(scope);
        key.b = std::get<2>(scope);
        key.generation = generation;
        f.scopes.emplace_back(key, f.classes[kScope].intern(bits));
    }
    // Addresses: LPM entries per family, classes shared by both families.
    std::vector<const PrefixSet*> src, dst;
    std::vector<const AppSet*> dports, sports;
    for (const ClassifierRule& rule : rules) {
        src.push_back(&rule.source);
        dst.push_back(&rule.destination);
        dports.push_back(&rule.ports);
        sports.push_back(&rule.source_ports);
    }
    f.src_v4 = to_classes(lpm_entries_v4(src, generation, words), f.classes[kSource]);
    f.src_v6 = to_classes(lpm_entries_v6(src, generation, words), f.classes[kSource]);
    f.dst_v4 = to_classes(lpm_entries_v4(dst, generation, words), f.classes[kDestination]);
    f.dst_v6 = to_classes(lpm_entries_v6(dst, generation, words), f.classes[kDestination]);
    f.port_class = port_class_array(dports, f.classes[kDestinationPort]);
    f.sport_class = port_class_array(sports, f.classes[kSourcePort]);
    return f;
}

// Rules classified through one set of tables.
struct GroupPlan {
    std::string shape;
    Bits members;
};

// One group compiled: for each field, global class -> group class; its tables.
struct GroupTables {
    std::array<std::vector<uint32_t>, kFields> project;
    std::array<Table, CLASSIFIER_TABLES> tables;
    ClassifierGroup info;
};

Result<GroupTables> compile_group(const Fields& f, const GroupPlan& plan, const std::vector<ClassifierRule>& rules,
                                  ResultSet& results, Budget& budget) {
    const size_t words = plan.members.size();
    GroupTables g;
    g.info.shape = plan.shape;
    for (uint64_t w : plan.members) g.info.rules += static_cast<uint32_t>(__builtin_popcountll(w));
    std::array<ClassSet, kFields> own{ClassSet(words), ClassSet(words), ClassSet(words), ClassSet(words),
                                      ClassSet(words)};
    Bits masked(words);
    for (int field = 0; field < kFields; ++field) {
        const ClassSet& global = f.classes[field];
        g.project[field].resize(global.size());
        for (uint32_t c = 0; c < global.size(); ++c) {
            for (size_t w = 0; w < words; ++w) masked[w] = global[c][w] & plan.members[w];
            g.project[field][c] = own[field].intern(masked);
        }
    }

    ClassSet scope_app(words), with_sport(words), addresses(words);
    auto t0 = cross_classes(own[kScope], own[kDestinationPort], scope_app,
                            TableName{"T_SCOPE_APP", "scope", "destination-port"}, budget);
    if (!t0) return t0.error();
    auto t1 = cross_classes(scope_app, own[kSourcePort], with_sport,
                            TableName{"T_SPORT", "scope+destination-port", "source-port"}, budget);
    if (!t1) return t1.error();
    // Without sparse tables T_FINAL is with_sport x addresses dense cells: a
    // bound on the address classes that lets a rule base that will not fit
    // fail here (quickly) rather than after interning millions of classes.
    const size_t max_addresses = budget.allow_sparse ? SIZE_MAX : budget.dense / with_sport.size();
    auto t2 = cross_classes(own[kSource], own[kDestination], addresses,
                            TableName{"T_SRC_DST", "source", "destination"}, budget, max_addresses);
    if (!t2) return t2.error();
    auto t3 = cross_results(with_sport, addresses, rules, results, budget);
    if (!t3) return t3.error();
    g.tables = {std::move(t0.value()), std::move(t1.value()), std::move(t2.value()), std::move(t3.value())};

    for (int field = 0; field < kFields; ++field) g.info.field_classes[field] = static_cast<uint32_t>(own[field].size());
    g.info.combined_classes = {static_cast<uint32_t>(scope_app.size()), static_cast<uint32_t>(with_sport.size()),
                               static_cast<uint32_t>(addresses.size())};
    for (const Table& t : g.tables) {
        g.info.cross_entries += t.entries.size();
        g.info.sparse_entries += t.sparse.size();
    }
    for (int field = 0; field < kFields; ++field) g.info.field_sets[field] = own[field].take();
    return g;
}

const char* const kAllRules = "all rules";

// Rules by shape: whether source and destination are `any`. Rules of one
// shape share a wildcard, so their classes do not multiply with those of the
// other shapes (3,000 source-host rules and 3,000 destination-host rules make
// 3,000 + 3,000 address classes in two groups, not 3,000 x 3,000 in one).
std::vector<GroupPlan> groups_by_shape(const std::vector<ClassifierRule>& rules, size_t words) {
    static const char* const kShapes[CLASSIFIER_GROUPS] = {
        "source any, destination any", "source set, destination any", "source any, destination set",
        "source set, destination set"};
    std::vector<GroupPlan> shapes(CLASSIFIER_GROUPS);
    for (int i = 0; i < CLASSIFIER_GROUPS; ++i) shapes[i] = {kShapes[i], Bits(words)};
    for (uint32_t i = 0; i < rules.size(); ++i)
        set_bit(shapes[(rules[i].source.any ? 0 : 1) | (rules[i].destination.any ? 0 : 2)].members, i);
    std::vector<GroupPlan> used;
    for (auto& plan : shapes)
        if (!none_set(plan.members)) used.push_back(std::move(plan));
    return used;
}

struct Compiled {
    std::vector<GroupTables> groups;
    std::vector<classifier_result> results;
};

// *out_of_space: the failure was table space (not a counting limit or too
// many outcomes), which another grouping may cure.
Result<Compiled> compile_groups(const Fields& f, const std::vector<GroupPlan>& plans,
                                const std::vector<ClassifierRule>& rules, bool allow_sparse, bool all_sparse,
                                bool* out_of_space) {
    Budget budget;
    budget.allow_sparse = allow_sparse;
    if (all_sparse) budget.dense = 0;
    ResultSet results;
    Compiled out;
    for (size_t i = 0; i < plans.size(); ++i) {
        auto g = compile_group(f, plans[i], rules, results, budget);
        if (!g) {
            if (out_of_space) *out_of_space = budget.out_of_space;
            if (!budget.out_of_space || plans[i].shape == kAllRules) return g.error();
            uint32_t n = 0;
            for (uint64_t w : plans[i].members) n += static_cast<uint32_t>(__builtin_popcountll(w));
            const std::string where =
                plans.size() == 1 ? "all " + with_commas(n) + " rules have one shape, " + plans[i].shape +
                                        ", so splitting by shape does not help"
                                  : "split by shape into " + std::to_string(plans.size()) +
                                        " groups with tables of their own, as one group did not fit either; this is "
                                        "group " + std::to_string(i + 1) + ", " + with_commas(n) + " rules with " +
                                        plans[i].shape;
            return make_error(g.error().message + " (" + where + ")");
        }
        out.groups.push_back(std::move(g.value()));
    }
    out.results = results.take();
    return out;
}

template <typename Key>
std::vector<std::pair<Key, classifier_classes>> per_group(const std::vector<std::pair<Key, uint32_t>>& entries,
                                                          const std::vector<GroupTables>& groups, int field) {
    std::vector<std::pair<Key, classifier_classes>> out;
    out.reserve(entries.size());
    for (const auto& [key, cls] : entries) {
        classifier_classes v{};
        for (size_t g = 0; g < groups.size(); ++g) v.group[g] = groups[g].project[field][cls];
        out.emplace_back(key, v);
    }
    return out;
}

std::vector<classifier_classes> per_group(const std::vector<uint32_t>& array, const std::vector<GroupTables>& groups,
                                          int field) {
    std::vector<classifier_classes> out(array.size());
    for (size_t i = 0; i < array.size(); ++i)
        for (size_t g = 0; g < groups.size(); ++g) out[i].group[g] = groups[g].project[field][array[i]];
    return out;
}

}  // namespace

Result<CompiledClassifier> compile_classifier(const std::vector<ClassifierRule>& rules, uint8_t generation,
                                              ClassifierGrouping grouping) {
    if (rules.size() > CLASSIFIER_MAX_RULES)
        return make_error("too many rules: " + with_commas(rules.size()) + " policies and filter rules, at most " +
                          with_commas(CLASSIFIER_MAX_RULES));
    const size_t words = words_for(rules.size());
    const Fields f = field_classes(rules, generation, words);

    // One group with dense tables whenever the rules fit (the fewest and
    // cheapest reads per packet). Else by shape, with sparse tables where
    // dense ones do not fit; its errors are the ones reported.
    Bits all(words);
    for (uint32_t i = 0; i < rules.size(); ++i) set_bit(all, i);
    // (Out of space means there are rules, so `shapes` is not empty.)
    const std::vector<GroupPlan> shapes = groups_by_shape(rules, words);
    bool out_of_space = false;
    auto compiled =
        grouping != ClassifierGrouping::when_needed
            ? compile_groups(f, shapes, rules, true, grouping == ClassifierGrouping::by_shape_sparse, nullptr)
            : compile_groups(f, {GroupPlan{kAllRules, all}}, rules, false, false, &out_of_space);
    if (!compiled && out_of_space)
        compiled = compile_groups(f, shapes, rules, true, false, nullptr);
    if (!compiled) return compiled.error();
    std::vector<GroupTables>& groups = compiled.value().groups;

    CompiledClassifier out;
    out.generation = generation;
    out.rule_count = static_cast<uint32_t>(rules.size());
    out.scopes = per_group(f.scopes, groups, kScope);
    out.src_v4 = per_group(f.src_v4, groups, kSource);
    out.src_v6 = per_group(f.src_v6, groups, kSource);
    out.dst_v4 = per_group(f.dst_v4, groups, kDestination);
    out.dst_v6 = per_group(f.dst_v6, groups, kDestination);
    out.port_class = per_group(f.port_class, groups, kDestinationPort);
    out.sport_class = per_group(f.sport_class, groups, kSourcePort);

    // Cross products, back to back in this generation's half of pol_cross.
    out.cross_first = uint32_t{generation} * CLASSIFIER_CROSS_PER_GEN;
    uint32_t base = out.cross_first;
    out.layout.groups = static_cast<uint32_t>(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
        for (int i = 0; i < CLASSIFIER_TABLES; ++i) {
            const Table& t = groups[g].tables[i];
            out.layout.table[g][i].base = base;
            out.layout.table[g][i].width = t.width;
            out.cross.insert(out.cross.end(), t.entries.begin(), t.entries.end());
            base += static_cast<uint32_t>(t.entries.size());
            for (const auto& [left, right, value] : t.sparse) {
                classifier_sparse_key key;
                std::memset(&key, 0, sizeof key);
                key.left = left;
                key.right = right;
                key.generation = generation;
                key.group = static_cast<__u8>(g);
                key.table = static_cast<__u8>(i);
                out.sparse.emplace_back(key, value);
            }
        }
        out.groups.push_back(std::move(groups[g].info));
    }
    std::sort(out.sparse.begin(), out.sparse.end(), [](const auto& a, const auto& b) {
        return sparse_order(a.first) < sparse_order(b.first);
    });
    out.results = std::move(compiled.value().results);

    const uint64_t lpm_entries = out.src_v4.size() + out.dst_v4.size() + out.src_v6.size() + out.dst_v6.size();
    out.map_bytes = lpm_entries * (kNodeOverhead + sizeof(policy_lpm_key_v6) + sizeof(classifier_classes)) +
                    out.scopes.size() * (kNodeOverhead + sizeof(classifier_scope_key) + sizeof(classifier_classes)) +
                    (out.port_class.size() + out.sport_class.size()) * sizeof(classifier_classes) +
                    out.cross.size() * 4 + out.results.size() * sizeof(classifier_result) +
                    out.sparse.size() * (kNodeOverhead + sizeof(classifier_sparse_key) + 4);
    return out;
}

}  // namespace sluice::compiler
