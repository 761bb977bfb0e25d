// The HA wire protocol (docs/ha.md "Messages"): heartbeats and session sync
// between the two nodes of a pair, one UDP datagram per message, every
// field in network byte order at a fixed offset. Decoding checks every
// field before anything reaches a caller, so a malformed or foreign
// datagram is counted and dropped, never written into the maps.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace sluice::ha {

inline constexpr uint32_t kMagic = 0x534c4841;  // "SLHA"
inline constexpr uint8_t kVersion = 1;
// One datagram stays under the fabric's MTU (1500) without fragments.
inline constexpr size_t kMaxDatagram = 1400;

enum class MessageType : uint8_t {
    heartbeat = 1,
    sessions = 2,       // flows created or changed: FlowRecord each
    deletes = 3,        // flows gone: FlowKey each
    bulk_request = 4,   // "send me every flow you have" (a node that joins)
    bulk_end = 5,       // the last message of a bulk sync
};
std::string to_string(MessageType type);

// Per group, what the sender is and wants.
struct GroupHeartbeat {
    uint8_t group = 0;       // 1-based id (config order)
    uint8_t priority = 0;    // effective: 0 when a monitored interface is down
    uint8_t active = 0;      // the sender carries the group now
    uint8_t flags = 0;       // kGroupWantsFailover: give the group up to the peer
};
inline constexpr uint8_t kGroupReleasing = 1;  // planned switchover: the sender is leaving

struct Heartbeat {
    std::vector<GroupHeartbeat> groups;
};

// A flow's identity: its initiator entry's key (the tuple its first packet
// had on the wire).
struct FlowKey {
    uint8_t family = 0;      // SLUICE_FAMILY_IPV4 / _IPV6
    uint8_t protocol = 0;
    std::array<uint8_t, 16> src{}, dst{};   // IPv4 in the first 4 bytes
    uint16_t src_port = 0, dst_port = 0;    // host order
    bool operator==(const FlowKey&) const = default;
};

// What the peer needs to rebuild both entries of a flow as the datapath
// made them (session_create, bpf/conntrack.bpf.h).
struct FlowRecord {
    FlowKey key;
    uint8_t tcp_state = 0;
    uint8_t flags = 0;           // initiator entry's SESSION_F_* (FIN bits, seen-reply)
    uint8_t verdict = 0;
    uint8_t nat_flags = 0;       // initiator entry's SESSION_NAT_*
    uint16_t zone_in = 0, zone_out = 0;
    uint32_t policy_id = 0;
    uint16_t ruleset_id = 0;
    std::array<uint8_t, 16> nat_src{}, nat_dst{};  // the tuple the initiator's packets leave with
    uint16_t nat_src_port = 0, nat_dst_port = 0;   // host order
    uint32_t nat_rule_id = 0;    // the nat.source rule holding the port (SESSION_NAT_PORT_HELD)
    uint32_t age_ms = 0;         // since the flow was created
    uint32_t idle_ms = 0;        // since the initiator's last packet
    uint32_t reply_idle_ms = 0;  // since the responder's last packet
    uint64_t packets = 0, bytes = 0, reply_packets = 0, reply_bytes = 0;
    bool operator==(const FlowRecord&) const = default;
};

struct Header {
    MessageType type = MessageType::heartbeat;
    uint8_t node_id = 0;         // the sender's ha.nodes id
    uint32_t seq = 0;            // per sender, +1 per message
    uint32_t config_hash = 0;    // of the ha section; a mismatch is refused
    uint32_t boot_id = 0;        // random per process start: a new one means the peer restarted
};

struct Message {
    Header header;
    Heartbeat heartbeat;             // heartbeat
    std::vector<FlowRecord> flows;   // sessions
    std::vector<FlowKey> deletes;    // deletes
};

inline constexpr size_t kHeaderSize = 24;
inline constexpr size_t kFlowRecordSize = 136;
inline constexpr size_t kFlowKeySize = 38;
inline constexpr size_t kFlowsPerDatagram = (kMaxDatagram - kHeaderSize) / kFlowRecordSize;
inline constexpr size_t kDeletesPerDatagram = (kMaxDatagram - kHeaderSize) / kFlowKeySize;

std::vector<uint8_t> encode(const Message& message);

// Why a datagram was refused; each has a counter (docs/ha.md).
enum class RejectReason : uint8_t {
    truncated,        // shorter than its header or its stated length
    bad_magic,
    bad_version,
    bad_type,
    bad_length,       // stated length or record count does not match the bytes
    bad_record,       // a field out of range (family, state, zone, ...)
    count_,
};
std::string to_string(RejectReason reason);

struct Decoded {
    bool ok = false;
    RejectReason reason = RejectReason::truncated;
    std::string detail;     // what was wrong, for the log
    Message message;
};

Decoded decode(const uint8_t* data, size_t size);

}  // namespace sluice::ha
