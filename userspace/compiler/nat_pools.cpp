// nat.pools → nat_pools slots: per pool, one slot per family, each config
// range one (first address, count) entry counting up in one 32-bit word.
#include <cstring>

#include "compiler/compile_nat.h"

namespace sluice::compiler {
namespace {

Status add_range(const config::AddressRange& range, const std::string& pool, nat_pool& slot) {
    size_t used = 0;
    while (used < NAT_POOL_MAX_RANGES && slot.ranges[used].count) ++used;
    const uint64_t count = config::address_count(range);
    if (!config::fits_one_word(range) || used == NAT_POOL_MAX_RANGES ||
        slot.address_count + count > config::kMaxPoolAddresses)
        return make_error("pool \"" + pool + "\": \"" + range.text + "\" does not fit the pool's entries");
    std::memcpy(slot.ranges[used].first, range.first.addr.data(), sizeof slot.ranges[used].first);
    slot.ranges[used].count = static_cast<__u32>(count);
    slot.address_count += static_cast<__u32>(count);
    return {};
}

}  // namespace

Result<std::vector<nat_pool>> compile_nat_pools(const config::Nat& nat) {
    if (nat.pools.size() > NAT_MAX_POOLS) return make_error("too many NAT pools");
    std::vector<nat_pool> slots(NAT_POOL_SLOTS);
    std::memset(slots.data(), 0, slots.size() * sizeof(nat_pool));
    for (size_t index = 0; index < nat.pools.size(); ++index) {
        const config::NatPool& pool = nat.pools[index];
        for (const config::AddressRange& range : pool.addresses) {
            const bool ipv6 = range.first.family == config::Family::ipv6;
            nat_pool& slot = slots[index * 2 + ipv6];
            slot.port_first = pool.ports.lo;
            slot.port_last = pool.ports.hi;
            slot.family = ipv6 ? SLUICE_FAMILY_IPV6 : SLUICE_FAMILY_IPV4;
            slot.flags = pool.persistent ? NAT_POOL_PERSISTENT : 0;
            slot.pool_index = static_cast<__u16>(index);
            if (auto s = add_range(range, pool.name, slot); !s) return s.error();
        }
    }
    return slots;
}

}  // namespace sluice::compiler
