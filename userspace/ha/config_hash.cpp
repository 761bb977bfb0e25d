#include "ha/config_hash.h"

#include <string>

namespace sluice::ha {
namespace {

// FNV-1a: stable across builds and machines, which std::hash is not.
struct Fnv {
    uint32_t h = 2166136261u;
    void bytes(const void* p, size_t n) {
        const auto* b = static_cast<const uint8_t*>(p);
        for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 16777619u;
    }
    void text(const std::string& s) {
        bytes(s.data(), s.size());
        bytes("", 1);
    }
    void number(uint64_t v) { bytes(&v, sizeof(v)); }
};

}  // namespace

uint32_t config_hash(const config::Ha& ha) {
    Fnv f;
    f.text(ha.fabric);
    f.number(ha.port);
    f.number(static_cast<uint64_t>(ha.heartbeat_interval.count()));
    f.number(static_cast<uint64_t>(ha.hold_time.count()));
    for (const auto& n : ha.nodes) {
        f.text(n.name);
        f.number(n.id);
        f.text(n.fabric_address.text);
    }
    for (const auto& g : ha.groups) {
        f.text(g.name);
        f.number(g.id);
        f.number(g.preempt);
        for (const auto& [node, prio] : g.priority) {
            f.text(node);
            f.number(prio);
        }
        for (const auto& m : g.monitor) f.text(m.interface);
        for (const auto& itf : g.interfaces) {
            f.text(itf.name);
            f.bytes(itf.virtual_mac.data(), itf.virtual_mac.size());
            for (const auto& a : itf.addresses) f.text(a.text);
        }
    }
    return f.h;
}

}  // namespace sluice::ha
