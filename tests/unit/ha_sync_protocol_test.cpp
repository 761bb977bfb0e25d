// The HA wire protocol: what is encoded decodes to the same message, and
// every malformed datagram is refused with its reason before any record
// reaches a caller.
#include <gtest/gtest.h>

#include <random>

#include "ha/sync_protocol.h"

extern "C" {
#include "sluice_maps.h"
}

using namespace sluice::ha;

namespace {

FlowRecord tcp_flow(uint8_t last_octet) {
    FlowRecord f;
    f.key.family = SLUICE_FAMILY_IPV4;
    f.key.protocol = 6;
    f.key.src = {198, 18, 1, 10};
    f.key.dst = {198, 18, 100, last_octet};
    f.key.src_port = 40000;
    f.key.dst_port = 5201;
    f.tcp_state = TCP_SESSION_ESTABLISHED;
    f.flags = SESSION_F_SEEN_REPLY;
    f.nat_flags = SESSION_NAT_SRC | SESSION_NAT_PORT_HELD;
    f.zone_in = 1;
    f.zone_out = 2;
    f.policy_id = 3;
    f.nat_src = {198, 18, 100, 1};
    f.nat_dst = f.key.dst;
    f.nat_src_port = 61000;
    f.nat_dst_port = 5201;
    f.nat_rule_id = 0;
    f.age_ms = 1234;
    f.idle_ms = 5;
    f.reply_idle_ms = 7;
    f.packets = 1ull << 40;
    f.bytes = 99;
    f.reply_packets = 3;
    f.reply_bytes = 4;
    return f;
}

Message sessions_message() {
    Message m;
    m.header = {MessageType::sessions, 1, 77, 0xdeadbeef, 0x01020304};
    m.flows = {tcp_flow(200), tcp_flow(201)};
    FlowRecord v6;
    v6.key.family = SLUICE_FAMILY_IPV6;
    v6.key.protocol = 17;
    v6.key.src = {0x20, 0x01, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x10};
    v6.key.dst = {0x20, 0x01, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0};
    v6.key.src_port = 5353;
    v6.key.dst_port = 53;
    v6.zone_in = 1;
    v6.zone_out = 2;
    m.flows.push_back(v6);
    return m;
}

Decoded decode_bytes(const std::vector<uint8_t>& b) { return decode(b.data(), b.size()); }

}  // namespace

TEST(HaSyncProtocol, SessionsRoundTrip) {
    const Message m = sessions_message();
    const auto bytes = encode(m);
    EXPECT_EQ(bytes.size(), kHeaderSize + 3 * kFlowRecordSize);
    const Decoded d = decode_bytes(bytes);
    ASSERT_TRUE(d.ok) << d.detail;
    EXPECT_EQ(d.message.header.type, MessageType::sessions);
    EXPECT_EQ(d.message.header.node_id, 1);
    EXPECT_EQ(d.message.header.seq, 77u);
    EXPECT_EQ(d.message.header.config_hash, 0xdeadbeefu);
    EXPECT_EQ(d.message.header.boot_id, 0x01020304u);
    ASSERT_EQ(d.message.flows.size(), 3u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(d.message.flows[i], m.flows[i]) << "record " << i;
}

TEST(HaSyncProtocol, FieldsAreBigEndianAtFixedOffsets) {
    const auto bytes = encode(sessions_message());
    EXPECT_EQ(bytes[0], 'S');
    EXPECT_EQ(bytes[3], 'A');
    EXPECT_EQ(bytes[4], kVersion);
    EXPECT_EQ(bytes[5], static_cast<uint8_t>(MessageType::sessions));
    EXPECT_EQ(bytes[8] << 8 | bytes[9], static_cast<int>(bytes.size()));
    EXPECT_EQ(bytes[10] << 8 | bytes[11], 3);
    // First record: family, protocol, then the source address.
    EXPECT_EQ(bytes[kHeaderSize], SLUICE_FAMILY_IPV4);
    EXPECT_EQ(bytes[kHeaderSize + 1], 6);
    EXPECT_EQ(bytes[kHeaderSize + 2], 198);
    // Source port 40000 = 0x9c40 after both addresses.
    EXPECT_EQ(bytes[kHeaderSize + 34], 0x9c);
    EXPECT_EQ(bytes[kHeaderSize + 35], 0x40);
}

TEST(HaSyncProtocol, HeartbeatDeletesAndBulkRoundTrip) {
    Message hb;
    hb.header = {MessageType::heartbeat, 2, 1, 5, 6};
    hb.heartbeat.groups = {{1, 200, 1, 0}, {2, 0, 0, kGroupReleasing}};
    Decoded d = decode_bytes(encode(hb));
    ASSERT_TRUE(d.ok) << d.detail;
    ASSERT_EQ(d.message.heartbeat.groups.size(), 2u);
    EXPECT_EQ(d.message.heartbeat.groups[0].priority, 200);
    EXPECT_EQ(d.message.heartbeat.groups[0].active, 1);
    EXPECT_EQ(d.message.heartbeat.groups[1].flags, kGroupReleasing);

    Message del;
    del.header.type = MessageType::deletes;
    del.deletes = {tcp_flow(200).key, tcp_flow(9).key};
    d = decode_bytes(encode(del));
    ASSERT_TRUE(d.ok) << d.detail;
    ASSERT_EQ(d.message.deletes.size(), 2u);
    EXPECT_EQ(d.message.deletes[1], tcp_flow(9).key);

    for (MessageType t : {MessageType::bulk_request, MessageType::bulk_end}) {
        Message m;
        m.header.type = t;
        d = decode_bytes(encode(m));
        ASSERT_TRUE(d.ok) << d.detail;
        EXPECT_EQ(d.message.header.type, t);
        EXPECT_EQ(encode(m).size(), kHeaderSize);
    }
}

TEST(HaSyncProtocol, AFullDatagramFitsTheFabricMtu) {
    Message m;
    m.header.type = MessageType::sessions;
    m.flows.assign(kFlowsPerDatagram, tcp_flow(1));
    EXPECT_LE(encode(m).size(), kMaxDatagram);
    m.header.type = MessageType::deletes;
    m.deletes.assign(kDeletesPerDatagram, tcp_flow(1).key);
    EXPECT_LE(encode(m).size(), kMaxDatagram);
    EXPECT_GE(kFlowsPerDatagram, 9u);
}

struct Corruption {
    const char* name;
    size_t offset;
    uint8_t value;
    RejectReason reason;
};

class HaSyncCorrupt : public testing::TestWithParam<Corruption> {};

TEST_P(HaSyncCorrupt, IsRefusedWithItsReason) {
    auto bytes = encode(sessions_message());
    const Corruption& c = GetParam();
    bytes[c.offset] = c.value;
    const Decoded d = decode_bytes(bytes);
    EXPECT_FALSE(d.ok);
    EXPECT_EQ(to_string(d.reason), to_string(c.reason)) << d.detail;
    EXPECT_FALSE(d.detail.empty());
}

const size_t R = kHeaderSize;  // first record
INSTANTIATE_TEST_SUITE_P(
    Fields, HaSyncCorrupt,
    testing::Values(Corruption{"magic", 0, 'X', RejectReason::bad_magic},
                    Corruption{"version", 4, 2, RejectReason::bad_version},
                    Corruption{"type_zero", 5, 0, RejectReason::bad_type},
                    Corruption{"type_unknown", 5, 9, RejectReason::bad_type},
                    Corruption{"length", 9, 0, RejectReason::bad_length},
                    Corruption{"count", 11, 2, RejectReason::bad_length},
                    Corruption{"family", R + 0, 5, RejectReason::bad_record},
                    Corruption{"ipv4_tail", R + 2 + 7, 1, RejectReason::bad_record},
                    Corruption{"tcp_state", R + 38, TCP_SESSION_STATE_COUNT, RejectReason::bad_record},
                    Corruption{"tcp_state_none", R + 38, TCP_SESSION_NONE, RejectReason::bad_record},
                    Corruption{"flags", R + 39, SESSION_F_REPLY, RejectReason::bad_record},
                    Corruption{"verdict", R + 40, 3, RejectReason::bad_record},
                    Corruption{"nat_flags", R + 41, 0x80, RejectReason::bad_record},
                    Corruption{"port_held_without_snat", R + 41, SESSION_NAT_PORT_HELD, RejectReason::bad_record},
                    Corruption{"zone_in_zero", R + 43, 0, RejectReason::bad_record}),
    [](const testing::TestParamInfo<Corruption>& info) { return std::string(info.param.name); });

TEST(HaSyncProtocol, TruncatedDatagrams) {
    const auto bytes = encode(sessions_message());
    for (size_t n : {size_t{0}, size_t{1}, kHeaderSize - 1}) {
        const Decoded d = decode(bytes.data(), n);
        EXPECT_FALSE(d.ok);
        EXPECT_EQ(to_string(d.reason), "truncated") << n;
    }
    // Cut inside a record: the stated length no longer matches.
    const Decoded d = decode(bytes.data(), bytes.size() - 1);
    EXPECT_FALSE(d.ok);
    EXPECT_EQ(to_string(d.reason), "bad-length");
}

// Random damage to a valid datagram: decode either refuses it or returns
// records that pass every check; it never reads past the buffer (run under
// the sanitizers this would show) and never accepts a bad family or state.
TEST(HaSyncProtocol, RandomDamageNeverYieldsAnInvalidRecord) {
    const auto good = encode(sessions_message());
    std::mt19937 rng(20261202);
    int refused = 0, accepted = 0;
    for (int i = 0; i < 20000; ++i) {
        auto bytes = good;
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < flips; ++k) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
        if (rng() % 8 == 0) bytes.resize(rng() % bytes.size());
        const Decoded d = decode(bytes.data(), bytes.size());
        if (!d.ok) {
            ++refused;
            continue;
        }
        ++accepted;
        for (const FlowRecord& f : d.message.flows) {
            ASSERT_TRUE(f.key.family == SLUICE_FAMILY_IPV4 || f.key.family == SLUICE_FAMILY_IPV6);
            ASSERT_LT(f.tcp_state, TCP_SESSION_STATE_COUNT);
            ASSERT_GT(f.zone_in, 0);
            ASSERT_LT(f.zone_out, SLUICE_MAX_ZONES);
        }
    }
    EXPECT_GT(refused, 1000);
    EXPECT_GT(accepted, 100);  // damage to counters and addresses is not detectable, and need not be
}
