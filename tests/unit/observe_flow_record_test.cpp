// Flow-log lines (observe/flow_record.h): what each event says, from a
// datapath record and from the GC's view of a removed flow.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <nlohmann/json.hpp>

#include "observe/flow_record.h"

using namespace sluice;
using namespace sluice::observe;
using nlohmann::json;

namespace {

const auto kWhen = std::chrono::system_clock::time_point(std::chrono::seconds(1'796'500'000)) +
                   std::chrono::microseconds(123456);

FlowNames names() {
    FlowNames n;
    n.policies = {"web-out", "no-in"};
    n.zones = {"", "trust", "untrust"};
    return n;
}

flow_event v4_event(uint8_t type) {
    flow_event e{};
    e.type = type;
    e.family = SLUICE_FAMILY_IPV4;
    e.protocol = IPPROTO_TCP;
    inet_pton(AF_INET, "198.18.1.10", &e.src_addr[0]);
    inet_pton(AF_INET, "198.18.100.200", &e.dst_addr[0]);
    e.src_port = htons(40000);
    e.dst_port = htons(443);
    e.zone_in = 1;
    e.zone_out = 2;
    e.l3_len = 60;
    return e;
}

// A permitted open of policy `policy_id`, source-translated to 198.18.100.1:1024.
flow_event snat_open(uint32_t policy_id) {
    flow_event e = v4_event(FLOW_EVENT_OPEN);
    e.policy_id = policy_id;
    e.action = POLICY_ACTION_PERMIT;
    e.nat.flags = SESSION_NAT_SRC;
    inet_pton(AF_INET, "198.18.100.1", &e.nat.new_src_addr[0]);
    e.nat.new_src_port = htons(1024);
    return e;
}

}  // namespace

TEST(FlowRecord, OpenCarriesTupleNatPolicyAndZones) {
    const flow_event e = snat_open(0);
    const json j = json::parse(flow_record_json(e, names(), kWhen));
    EXPECT_EQ(j["time"], "2026-12-05T19:46:40.123456Z");
    EXPECT_EQ(j["event"], "open");
    EXPECT_EQ(j["src"], "198.18.1.10");
    EXPECT_EQ(j["src_port"], 40000);
    EXPECT_EQ(j["dst"], "198.18.100.200");
    EXPECT_EQ(j["dst_port"], 443);
    EXPECT_EQ(j["protocol"], "tcp");
    EXPECT_EQ(j["policy"], "web-out");
    EXPECT_EQ(j["zone_in"], "trust");
    EXPECT_EQ(j["zone_out"], "untrust");
    EXPECT_EQ(j["nat"]["src"], "198.18.100.1");
    EXPECT_EQ(j["nat"]["src_port"], 1024);
    EXPECT_FALSE(j["nat"].contains("dst"));
    EXPECT_EQ(j["bytes"], 60);
    EXPECT_EQ(flow_event_msg_id(e), std::string("flow-open"));
}

TEST(FlowRecord, DenyNamesTheReasonAndTheDefault) {
    flow_event e = v4_event(FLOW_EVENT_DENY);
    e.policy_id = SESSION_POLICY_RELATED;
    e.action = POLICY_ACTION_DENY;
    e.reason = STAT_DROP_POLICY_DEFAULT;
    e.tcp_flags = 0x02;
    const json j = json::parse(flow_record_json(e, names(), kWhen));
    EXPECT_EQ(j["event"], "deny");
    EXPECT_EQ(j["policy"], "(default)");
    EXPECT_EQ(j["reason"], "drop-policy-default");
    EXPECT_EQ(j["tcp_flags"], "S");
    EXPECT_EQ(flow_event_msg_id(e), std::string("flow-deny"));
}

TEST(FlowRecord, CloseFromTheGcCountsBothDirections) {
    SessionEntry initiator, reply;
    initiator.family = reply.family = SLUICE_FAMILY_IPV6;
    initiator.protocol = reply.protocol = IPPROTO_UDP;
    inet_pton(AF_INET6, "2001:2:0:1::10", initiator.src_addr);
    inet_pton(AF_INET6, "2001:2:0:100::200", initiator.dst_addr);
    initiator.src_port = htons(5353);
    initiator.dst_port = htons(53);
    initiator.value.created_ns = 1'000'000'000;
    initiator.value.packets = 5;
    initiator.value.bytes = 740;
    initiator.value.policy_id = 1;
    initiator.value.zone_in = 2;
    initiator.value.zone_out = 1;
    initiator.value.last_seen_ns = 2'000'000'000;
    reply.value = initiator.value;
    reply.value.flags = SESSION_F_REPLY;
    reply.value.packets = 4;
    reply.value.bytes = 600;
    reply.value.last_seen_ns = 2'500'000'000;   // the last packet: the answer
    const flow_event e = close_event_of(initiator, &reply, 3'500'000'000);
    const json j = json::parse(flow_record_json(e, names(), kWhen));
    EXPECT_EQ(j["event"], "close");
    EXPECT_EQ(j["family"], "ipv6");
    EXPECT_EQ(j["src"], "2001:2:0:1::10");
    EXPECT_EQ(j["policy"], "no-in");
    EXPECT_EQ(j["packets_out"], 5);
    EXPECT_EQ(j["bytes_out"], 740);
    EXPECT_EQ(j["packets_in"], 4);
    EXPECT_EQ(j["bytes_in"], 600);
    EXPECT_EQ(j["duration_s"], 1.5);   // first packet to last, not to the removal (3.5 s)
    EXPECT_EQ(e.time_ns, 2'500'000'000u);
    EXPECT_EQ(nlohmann::ordered_json::parse(flow_record_json(e, names(), kWhen)).begin().key(), "time");
    EXPECT_EQ(j["close_reason"], "idle-timeout");
    // The reply entry left alone: its counts are the way back.
    const flow_event orphan = close_event_of(reply, nullptr, 3'500'000'000);
    EXPECT_EQ(orphan.packets[0], 0u);
    EXPECT_EQ(orphan.packets[1], 4u);
    EXPECT_EQ(json::parse(flow_record_json(orphan, names(), kWhen))["tuple"], "reply");
}

TEST(FlowRecord, CloseReasonFollowsTcpState) {
    flow_event e = v4_event(FLOW_EVENT_CLOSE);
    e.tcp_state = TCP_SESSION_CLOSED;
    EXPECT_EQ(close_reason(e), "rst");
    e.tcp_state = TCP_SESSION_TIME_WAIT;
    EXPECT_EQ(close_reason(e), "fin");
    e.tcp_state = TCP_SESSION_ESTABLISHED;
    EXPECT_EQ(close_reason(e), "idle-timeout");
}

// Names come from the config: quotes, backslashes, control characters and
// UTF-8 in them still make one valid JSON line that reads back as the name.
TEST(FlowRecord, NamesAreEscapedIntoOneValidLine) {
    FlowNames n = names();
    n.policies[0] = "we\"b\\out\tnäme\x01";
    flow_event e = v4_event(FLOW_EVENT_OPEN);
    e.policy_id = 0;
    const std::string line = flow_record_json(e, n, kWhen);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(line.find('\t'), std::string::npos);
    const json j = json::parse(line);
    EXPECT_EQ(j["policy"], n.policies[0]);
    EXPECT_EQ(line.front(), '{');
    EXPECT_EQ(line.back(), '}');
}

// The order a reader sees: time and event first, the NAT as an object.
TEST(FlowRecord, KeysComeInTheWrittenOrder) {
    EXPECT_EQ(flow_record_json(snat_open(1), names(), kWhen),
              R"({"time":"2026-12-05T19:46:40.123456Z","event":"open","family":"ipv4","protocol":"tcp",)"
              R"("src":"198.18.1.10","dst":"198.18.100.200","src_port":40000,"dst_port":443,"zone_in":"trust",)"
              R"("zone_out":"untrust","policy":"no-in","action":"permit","nat":{"src":"198.18.100.1","src_port":1024},)"
              R"("bytes":60})");
}
