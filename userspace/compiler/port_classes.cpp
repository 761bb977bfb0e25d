#include "compiler/port_classes.h"

#include <algorithm>

namespace sluice::compiler {
namespace {

// A rule's range starting (+1) or ending (-1, at hi + 1) at a port.
struct Event {
    uint32_t port;
    int delta;
    uint32_t rule;
};

}  // namespace

// A sweep over range boundaries per slot: between two consecutive boundaries
// the set of covering rules is constant, so each stretch costs one bitset
// snapshot instead of one per port. Rules may list overlapping ranges, so
// coverage is counted, not toggled.
std::vector<uint32_t> port_class_array(const std::vector<const AppSet*>& sets, ClassSet& classes) {
    std::vector<std::vector<Event>> events(POLICY_PROTO_SLOTS);
    for (uint32_t r = 0; r < sets.size(); ++r) {
        auto add = [&](int slot, uint32_t lo, uint32_t hi) {
            events[slot].push_back({lo, +1, r});
            events[slot].push_back({hi + 1, -1, r});  // hi + 1 = 65536 falls off the end
        };
        if (sets[r]->any)
            for (int slot = 0; slot < POLICY_PROTO_SLOTS; ++slot) add(slot, 0, 65535);
        for (const auto& range : sets[r]->ranges) add(range.slot, range.lo, range.hi);
    }

    std::vector<uint32_t> out(static_cast<size_t>(POLICY_PROTO_SLOTS) * POLICY_PORTS, 0);
    std::vector<uint32_t> coverage(sets.size(), 0);
    for (int slot = 0; slot < POLICY_PROTO_SLOTS; ++slot) {
        auto& list = events[slot];
        std::sort(list.begin(), list.end(), [](const Event& a, const Event& b) { return a.port < b.port; });
        Bits current(classes.words());
        std::fill(coverage.begin(), coverage.end(), 0);
        size_t next = 0;
        uint32_t port = 0;
        while (port < POLICY_PORTS) {
            for (; next < list.size() && list[next].port == port; ++next) {
                const Event& e = list[next];
                coverage[e.rule] += e.delta;
                if (coverage[e.rule] > 0) set_bit(current, e.rule);
                else current[e.rule / 64] &= ~(uint64_t{1} << (e.rule % 64));
            }
            uint32_t end = next < list.size() ? std::min<uint32_t>(list[next].port, POLICY_PORTS) : POLICY_PORTS;
            const uint32_t id = classes.intern(current);
            std::fill(out.begin() + slot * POLICY_PORTS + port, out.begin() + slot * POLICY_PORTS + end, id);
            port = end;
        }
    }
    return out;
}

}  // namespace sluice::compiler
