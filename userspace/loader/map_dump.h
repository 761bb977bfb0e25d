// Reading a whole hash map in batches: the kernel walks its buckets, so a
// sparse table costs no syscall per empty slot. Shared by the session table
// and the NAT port reservations.
#pragma once

#include <bpf/bpf.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice {

// Calls visit(key, value) for every entry of the map behind fd.
template <typename K, typename V, typename Visit>
Status batch_dump(int fd, const std::string& name, Visit visit) {
    constexpr uint32_t kBatch = 4096;
    std::vector<K> keys(kBatch);
    std::vector<V> values(kBatch);
    K cursor{};
    bool first = true;
    for (;;) {
        uint32_t count = kBatch;
        LIBBPF_OPTS(bpf_map_batch_opts, opts);
        int rc = bpf_map_lookup_batch(fd, first ? nullptr : &cursor, &cursor, keys.data(), values.data(), &count,
                                      &opts);
        int err = errno;
        for (uint32_t i = 0; i < count; ++i) visit(keys[i], values[i]);
        first = false;
        if (rc != 0) {
            if (err == ENOENT) return {};  // the walk reached the end
            return make_error("cannot read " + name + ": " + std::strerror(err));
        }
    }
}

}  // namespace sluice
