#include "observe/flow_record.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <charconv>
#include <string_view>

#include "loader/stat_names.h"

namespace sluice::observe {
namespace {


std::string address_text(uint8_t family, const __be32 addr[4]) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (family == SLUICE_FAMILY_IPV4) inet_ntop(AF_INET, addr, buf, sizeof(buf));
    else inet_ntop(AF_INET6, addr, buf, sizeof(buf));
    return buf;
}

std::string protocol_text(uint8_t protocol) {
    switch (protocol) {
    case IPPROTO_TCP: return "tcp";
    case IPPROTO_UDP: return "udp";
    case IPPROTO_ICMP: return "icmp";
    case IPPROTO_ICMPV6: return "icmpv6";
    default: return std::to_string(protocol);
    }
}

bool has_ports(uint8_t protocol) { return protocol == IPPROTO_TCP || protocol == IPPROTO_UDP; }

std::string action_text(uint8_t action) {
    switch (action) {
    case POLICY_ACTION_PERMIT: return "permit";
    case POLICY_ACTION_DENY: return "deny";
    case POLICY_ACTION_REJECT: return "reject";
    case POLICY_ACTION_INSPECT: return "inspect";
    default: return std::to_string(action);
    }
}

std::string tcp_flags_text(uint8_t flags) {
    static const char* names = "FSRPAUEC";
    std::string out;
    for (int i = 0; i < 8; ++i)
        if (flags & (1 << i)) out += names[i];
    return out;
}

std::string rfc3339(std::chrono::system_clock::time_point when) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(when.time_since_epoch()).count();
    const time_t secs = static_cast<time_t>(us / 1'000'000);
    tm t{};
    gmtime_r(&secs, &t);
    char buf[48];
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", t.tm_year + 1900, t.tm_mon + 1,
                  t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, static_cast<long long>(us % 1'000'000));
    return buf;
}

std::string name_or_id(const std::vector<std::string>& names, uint32_t id) {
    return id < names.size() && !names[id].empty() ? names[id] : std::to_string(id);
}

}  // namespace

std::string FlowNames::interface_of(uint32_t ifindex) const {
    if (auto it = interfaces_.find(ifindex); it != interfaces_.end()) return it->second;
    char buf[IF_NAMESIZE] = {};
    if (ifindex && if_indextoname(ifindex, buf)) return interfaces_[ifindex] = buf;
    return std::to_string(ifindex);   // not remembered: it may appear later
}

std::string close_reason(const flow_event& e) {
    if (e.protocol != IPPROTO_TCP) return "idle-timeout";
    switch (e.tcp_state) {
    case TCP_SESSION_CLOSED: return "rst";
    case TCP_SESSION_FIN_WAIT:
    case TCP_SESSION_CLOSING:
    case TCP_SESSION_TIME_WAIT: return "fin";
    default: return "idle-timeout";
    }
}

flow_event close_event_of(const SessionEntry& entry, const SessionEntry* peer, uint64_t time_ns) {
    flow_event e{};
    const bool reply = entry.value.flags & SESSION_F_REPLY;
    // The flow ended with its last packet (the GC removes it a timeout
    // later): the line's time, and what its duration counts to.
    e.time_ns = std::max(entry.value.last_seen_ns, peer ? peer->value.last_seen_ns : 0);
    if (e.time_ns == 0) e.time_ns = time_ns;
    e.type = FLOW_EVENT_CLOSE;
    e.family = entry.family;
    e.protocol = entry.protocol;
    for (int i = 0; i < 4; ++i) {
        e.src_addr[i] = entry.src_addr[i];
        e.dst_addr[i] = entry.dst_addr[i];
    }
    e.src_port = entry.src_port;
    e.dst_port = entry.dst_port;
    e.policy_id = entry.value.policy_id;
    e.config_generation = entry.value.policy_generation;
    e.zone_in = entry.value.zone_in;
    e.zone_out = entry.value.zone_out;
    e.tcp_state = entry.value.tcp_state;
    e.created_ns = entry.value.created_ns;
    e.reason = reply ? FLOW_CLOSE_TUPLE_REPLY : 0;
    const session_value* initiator = reply ? (peer ? &peer->value : nullptr) : &entry.value;
    const session_value* responder = reply ? &entry.value : (peer ? &peer->value : nullptr);
    if (initiator) {
        e.packets[0] = initiator->packets;
        e.bytes[0] = initiator->bytes;
        if (initiator->nat.flags & (SESSION_NAT_SRC | SESSION_NAT_DST)) e.nat = initiator->nat;
    }
    if (responder) {
        e.packets[1] = responder->packets;
        e.bytes[1] = responder->bytes;
    }
    return e;
}

const char* flow_event_msg_id(const flow_event& e) {
    switch (e.type) {
    case FLOW_EVENT_OPEN: return "flow-open";
    case FLOW_EVENT_DENY: return "flow-deny";
    default: return "flow-close";
    }
}

namespace {

// The line is built by hand, not through a JSON library's tree: the daemon
// writes tens of thousands a second under a connection flood, and the tree's
// allocations were most of the cost of a line.
class JsonObject {
public:
    explicit JsonObject(std::string& out) : out_(out) { out_ += '{'; }
    void str(std::string_view key, std::string_view value) {
        name(key);
        quote(value);
    }
    void num(std::string_view key, uint64_t value) {
        name(key);
        char buf[24];
        out_.append(buf, std::to_chars(buf, buf + sizeof(buf), value).ptr);
    }
    void num(std::string_view key, double value) {
        name(key);
        char buf[32];
        out_.append(buf, std::to_chars(buf, buf + sizeof(buf), value).ptr);
    }
    void open(std::string_view key) {
        name(key);
        out_ += '{';
        first_ = true;
    }
    void close() {
        out_ += '}';
        first_ = false;
    }

private:
    void name(std::string_view key) {
        if (!first_) out_ += ',';
        first_ = false;
        quote(key);
        out_ += ':';
    }
    // RFC 8259 string: quote, backslash and control characters escaped;
    // UTF-8 as it is.
    void quote(std::string_view v) {
        out_ += '"';
        for (char c : v) {
            const auto u = static_cast<unsigned char>(c);
            if (c == '"' || c == '\\') {
                out_ += '\\';
                out_ += c;
            } else if (u < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof(buf), "\\u%04x", u);
                out_ += buf;
            } else {
                out_ += c;
            }
        }
        out_ += '"';
    }

    std::string& out_;
    bool first_ = true;
};

}  // namespace

std::string flow_record_json(const flow_event& e, const FlowNames& names, std::chrono::system_clock::time_point when) {
    std::string line;
    line.reserve(400);
    JsonObject j(line);   // in the order written: time and event first
    j.str("time", rfc3339(when));
    j.str("event", e.type == FLOW_EVENT_OPEN ? "open" : e.type == FLOW_EVENT_DENY ? "deny" : "close");
    j.str("family", e.family == SLUICE_FAMILY_IPV4 ? "ipv4" : "ipv6");
    j.str("protocol", protocol_text(e.protocol));
    j.str("src", address_text(e.family, e.src_addr));
    j.str("dst", address_text(e.family, e.dst_addr));
    if (has_ports(e.protocol)) {
        j.num("src_port", uint64_t{ntohs(e.src_port)});
        j.num("dst_port", uint64_t{ntohs(e.dst_port)});
    } else if (e.protocol == IPPROTO_ICMP || e.protocol == IPPROTO_ICMPV6) {
        j.num("icmp_id", uint64_t{ntohs(e.src_port ? e.src_port : e.dst_port)});
    }
    j.str("zone_in", name_or_id(names.zones, e.zone_in));
    j.str("zone_out", name_or_id(names.zones, e.zone_out));
    if (e.ifindex) j.str("interface", names.interface_of(e.ifindex));
    j.str("policy", e.policy_id == SESSION_POLICY_RELATED ? std::string("(default)") : name_or_id(names.policies, e.policy_id));
    if (e.type != FLOW_EVENT_CLOSE) j.str("action", action_text(e.action));
    if (e.nat.flags & (SESSION_NAT_SRC | SESSION_NAT_DST)) {
        j.open("nat");
        if (e.nat.flags & SESSION_NAT_SRC) {
            j.str("src", address_text(e.family, e.nat.new_src_addr));
            if (has_ports(e.protocol)) j.num("src_port", uint64_t{ntohs(e.nat.new_src_port)});
        }
        if (e.nat.flags & SESSION_NAT_DST) {
            j.str("dst", address_text(e.family, e.nat.new_dst_addr));
            if (has_ports(e.protocol)) j.num("dst_port", uint64_t{ntohs(e.nat.new_dst_port)});
        }
        j.close();
    }
    if (e.type == FLOW_EVENT_DENY) {
        j.str("reason", stat_info(e.reason).name);
        j.num("bytes", uint64_t{e.l3_len});
        if (e.protocol == IPPROTO_TCP) j.str("tcp_flags", tcp_flags_text(e.tcp_flags));
    } else if (e.type == FLOW_EVENT_OPEN) {
        j.num("bytes", uint64_t{e.l3_len});
    } else {
        j.str("close_reason", e.created_ns == 0 ? "unknown" : close_reason(e));
        if (e.reason == FLOW_CLOSE_TUPLE_REPLY) j.str("tuple", "reply");
        j.num("packets_out", uint64_t{e.packets[0]});
        j.num("bytes_out", uint64_t{e.bytes[0]});
        j.num("packets_in", uint64_t{e.packets[1]});
        j.num("bytes_in", uint64_t{e.bytes[1]});
        const double duration = e.time_ns > e.created_ns ? double(e.time_ns - e.created_ns) / 1e9 : 0.0;
        j.num("duration_s", std::round(duration * 1000.0) / 1000.0);
    }
    line += '}';
    return line;
}

}  // namespace sluice::observe
