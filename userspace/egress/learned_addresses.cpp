#include "egress/learned_addresses.h"

#include <bpf/bpf.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "loader/map_io.h"

namespace sluice::egress {

namespace {

std::vector<egress_port_range> ports_of(const LearnedAddress& a) {
    std::vector<egress_port_range> out;
    if (a.rule)
        for (const auto& r : a.rule->ports) out.push_back({r.lo, r.hi});
    return out;
}

// The union of two entries' ports (empty = every port), or the newer's when
// the union does not fit an entry.
std::vector<egress_port_range> merged(const egress_learned& old, std::vector<egress_port_range> fresh) {
    if (old.port_ranges == 0 || fresh.empty()) return {};
    std::vector<egress_port_range> out(old.ports, old.ports + old.port_ranges);
    for (const auto& r : fresh) {
        bool known = std::any_of(out.begin(), out.end(),
                                 [&](const egress_port_range& o) { return o.first == r.first && o.last == r.last; });
        if (!known) out.push_back(r);
    }
    return out.size() <= SLUICE_EGRESS_PORT_RANGES ? out : fresh;
}

template <typename Key>
Key key_of(uint8_t scope, const std::array<uint8_t, 16>& address) {
    Key k{};
    k.scope = scope;
    std::memcpy(&k.addr, address.data(), sizeof(k.addr));
    return k;
}

}  // namespace

uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

Status LearnedAddresses::learn(uint8_t scope, const std::vector<LearnedAddress>& addresses, std::chrono::seconds grace) {
    std::lock_guard lock(mutex_);
    const uint64_t now = monotonic_ns();
    for (const auto& a : addresses) {
        const uint64_t expires =
            now + uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(a.ttl + grace).count());
        egress_learned_key_v4 k4{};
        egress_learned_key_v6 k6{};
        const void* key = nullptr;
        int fd = -1;
        if (a.family == AF_INET) {
            k4 = key_of<egress_learned_key_v4>(scope, a.address);
            key = &k4;
            fd = fd_v4_;
        } else {
            k6 = key_of<egress_learned_key_v6>(scope, a.address);
            key = &k6;
            fd = fd_v6_;
        }
        egress_learned value{};
        std::vector<egress_port_range> ports = ports_of(a);
        egress_learned old{};
        const bool live = bpf_map_lookup_elem(fd, key, &old) == 0 && old.expires_ns > now;
        if (live) {
            ports = merged(old, std::move(ports));
            value.expires_ns = std::max<uint64_t>(old.expires_ns, expires);
        } else {
            value.expires_ns = expires;
        }
        value.port_ranges = static_cast<uint8_t>(ports.size());
        std::copy(ports.begin(), ports.end(), value.ports);
        if (bpf_map_update_elem(fd, key, &value, BPF_ANY) != 0) {
            const int err = errno;
            write_failures_++;
            return make_error(std::string("cannot learn an address for egress scope ") + std::to_string(scope) + ": " +
                              (err == E2BIG ? "the learned-address map is full (" +
                                                  std::to_string(SLUICE_EGRESS_LEARNED_ENTRIES) + " entries per family)"
                                            : std::strerror(err)));
        }
        (live ? refreshed_ : learned_)++;
    }
    return {};
}

template <typename Key>
size_t LearnedAddresses::remove_if(int fd, bool expired_only, uint8_t scope, uint64_t now) {
    size_t n = 0;
    for (const Key& k : map_keys<Key>(fd)) {
        egress_learned v{};
        if (bpf_map_lookup_elem(fd, &k, &v) != 0 || (scope != 0 && k.scope != scope)) continue;
        if (expired_only && v.expires_ns > now) continue;
        if (bpf_map_delete_elem(fd, &k) == 0) ++n;
    }
    return n;
}

size_t LearnedAddresses::expire() {
    std::lock_guard lock(mutex_);
    const uint64_t now = monotonic_ns();
    size_t n = remove_if<egress_learned_key_v4>(fd_v4_, true, 0, now) + remove_if<egress_learned_key_v6>(fd_v6_, true, 0, now);
    expired_ += n;
    return n;
}

size_t LearnedAddresses::forget(uint8_t scope) {
    std::lock_guard lock(mutex_);
    return remove_if<egress_learned_key_v4>(fd_v4_, false, scope, 0) + remove_if<egress_learned_key_v6>(fd_v6_, false, scope, 0);
}

std::vector<LearnedEntry> LearnedAddresses::list() const {
    std::vector<LearnedEntry> out;
    const uint64_t now = monotonic_ns();
    auto walk = [&](int fd, auto key_type, int family) {
        for (const auto& k : map_keys<decltype(key_type)>(fd)) {
            egress_learned v{};
            if (bpf_map_lookup_elem(fd, &k, &v) != 0) continue;  // expired and removed meanwhile
            LearnedEntry e;
            e.scope = static_cast<uint8_t>(k.scope);
            e.family = family;
            std::memcpy(e.address.data(), &k.addr, sizeof(k.addr));
            e.remaining = std::chrono::nanoseconds(v.expires_ns > now ? v.expires_ns - now : 0);
            e.ports.assign(v.ports, v.ports + std::min<int>(v.port_ranges, SLUICE_EGRESS_PORT_RANGES));
            out.push_back(std::move(e));
        }
    };
    walk(fd_v4_, egress_learned_key_v4{}, AF_INET);
    walk(fd_v6_, egress_learned_key_v6{}, AF_INET6);
    return out;
}

LearnedCounters LearnedAddresses::counters() const {
    return {learned_.load(), refreshed_.load(), expired_.load(), write_failures_.load()};
}

}  // namespace sluice::egress
