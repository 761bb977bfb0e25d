// delete_session_entries (loader/session_table.h): the GC's batched delete
// on real hash maps of the session maps' key and value layout: every listed
// entry goes, in both families, past the size of one batch, entries that are
// already gone (the datapath removed them after the dump) are stepped over,
// and entries not listed stay.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "loader/session_table.h"
#include "netns_fixture.h"

namespace sluice::test {
namespace {

class SessionMaps {
public:
    SessionMaps() {
        v4_ = bpf_map_create(BPF_MAP_TYPE_HASH, "t_sess_v4", sizeof(session_key_v4), sizeof(session_value), 8192,
                             nullptr);
        v6_ = bpf_map_create(BPF_MAP_TYPE_HASH, "t_sess_v6", sizeof(session_key_v6), sizeof(session_value), 8192,
                             nullptr);
    }
    ~SessionMaps() {
        if (v4_ >= 0) close(v4_);
        if (v6_ >= 0) close(v6_);
    }
    int v4() const { return v4_; }
    int v6() const { return v6_; }

private:
    int v4_ = -1, v6_ = -1;
};

SessionEntry entry(uint8_t family, uint16_t port) {
    SessionEntry e;
    e.family = family;
    e.protocol = 6;
    e.src_addr[0] = htonl(0xc6120100u | (port & 0xff));  // 198.18.1.x
    e.dst_addr[0] = htonl(0xc6126402u);                  // 198.18.100.2
    if (family == SLUICE_FAMILY_IPV6) {
        e.src_addr[0] = htonl(0x20010002u);  // 2001:2::/48
        e.dst_addr[0] = htonl(0x20010002u);
        e.src_addr[3] = htonl(port);
        e.dst_addr[3] = htonl(2);
    }
    e.src_port = htons(port);
    e.dst_port = htons(80);
    e.value.policy_id = port;
    return e;
}

TEST(SessionTableDelete, BatchDeletesListedEntriesAndStepsOverMissingOnes) {
    SLUICE_SKIP_WITHOUT_BPF();
    SessionMaps maps;
    ASSERT_GE(maps.v4(), 0) << std::strerror(errno);
    ASSERT_GE(maps.v6(), 0) << std::strerror(errno);
    // 5,000 IPv4 and 300 IPv6 entries; every third one is kept.
    std::vector<SessionEntry> all;
    for (uint16_t p = 1; p <= 5000; ++p) all.push_back(entry(SLUICE_FAMILY_IPV4, p));
    for (uint16_t p = 1; p <= 300; ++p) all.push_back(entry(SLUICE_FAMILY_IPV6, p));
    for (const auto& e : all) ASSERT_TRUE(write_session_entry(maps.v4(), maps.v6(), e).ok());
    std::vector<const SessionEntry*> doomed;
    size_t kept = 0;
    for (size_t i = 0; i < all.size(); ++i) {
        if (i % 3 == 0) {
            ++kept;
            continue;
        }
        doomed.push_back(&all[i]);
    }
    // Gone before the delete: the first listed, one in the middle, the last
    // of each family.
    for (size_t i : {size_t{0}, doomed.size() / 2, doomed.size() - 1})
        ASSERT_TRUE(delete_session_entry(maps.v4(), maps.v6(), *doomed[i]).ok());
    const SessionEntry* last_v4 = nullptr;
    for (const SessionEntry* e : doomed)
        if (e->family == SLUICE_FAMILY_IPV4) last_v4 = e;
    ASSERT_TRUE(delete_session_entry(maps.v4(), maps.v6(), *last_v4).ok());

    auto s = delete_session_entries(maps.v4(), maps.v6(), doomed);
    ASSERT_TRUE(s.ok()) << s.error().message;

    auto left = dump_sessions(maps.v4(), maps.v6());
    ASSERT_TRUE(left.ok()) << left.error().message;
    EXPECT_EQ(left.value().size(), kept);
    for (const auto& e : left.value()) {
        const auto it = std::find_if(all.begin(), all.end(), [&](const SessionEntry& a) { return same_key(a, e); });
        ASSERT_NE(it, all.end());
        EXPECT_EQ((it - all.begin()) % 3, 0) << "a listed entry is still there (policy_id " << e.value.policy_id << ")";
    }
    // Nothing listed: nothing happens.
    EXPECT_TRUE(delete_session_entries(maps.v4(), maps.v6(), {}).ok());
}

}  // namespace
}  // namespace sluice::test
