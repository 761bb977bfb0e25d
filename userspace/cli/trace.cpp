#include "cli/trace.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "daemon/state_file.h"
#include "loader/instance_paths.h"
#include "loader/stat_names.h"
#include "loader/trace_datapath.h"

namespace sluice::cli {
namespace {

using nlohmann::json;

Result<std::array<uint8_t, 6>> interface_mac(const std::string& name) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno_error("socket", errno);
    ifreq req{};
    std::strncpy(req.ifr_name, name.c_str(), IFNAMSIZ - 1);
    const int rc = ioctl(fd, SIOCGIFHWADDR, &req);
    const int saved = errno;
    close(fd);
    if (rc != 0) return errno_error("cannot read the MAC address of " + name, saved);
    std::array<uint8_t, 6> mac{};
    std::memcpy(mac.data(), req.ifr_hwaddr.sa_data, 6);
    return mac;
}

// The session key of a frame as the datapath would key it (for copying
// its live flow into the trace), or nothing for frames it keys no flow for.
struct FrameKey {
    uint8_t family = 0;
    union {
        session_key_v4 v4;
        session_key_v6 v6;
    } key{};
    std::string text;   // "tcp 198.18.1.10:40000 -> 198.18.100.200:80"
    uint8_t tcp_flags = 0;
};

std::optional<FrameKey> key_of(const std::vector<uint8_t>& f) {
    size_t off = 14;
    if (f.size() < off) return std::nullopt;
    uint16_t type = uint16_t(f[12] << 8 | f[13]);
    while ((type == ETH_P_8021Q || type == ETH_P_8021AD) && f.size() >= off + 4) {
        type = uint16_t(f[off + 2] << 8 | f[off + 3]);
        off += 4;
    }
    FrameKey k;
    uint8_t proto = 0;
    size_t l4 = 0;
    char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
    if (type == ETH_P_IP && f.size() >= off + 20) {
        k.family = SLUICE_FAMILY_IPV4;
        proto = f[off + 9];
        std::memcpy(&k.key.v4.src_addr, &f[off + 12], 4);
        std::memcpy(&k.key.v4.dst_addr, &f[off + 16], 4);
        k.key.v4.protocol = proto;
        l4 = off + size_t(f[off] & 0x0f) * 4;
        inet_ntop(AF_INET, &f[off + 12], a, sizeof(a));
        inet_ntop(AF_INET, &f[off + 16], b, sizeof(b));
    } else if (type == ETH_P_IPV6 && f.size() >= off + 40) {
        k.family = SLUICE_FAMILY_IPV6;
        proto = f[off + 6];
        std::memcpy(k.key.v6.src_addr, &f[off + 8], 16);
        std::memcpy(k.key.v6.dst_addr, &f[off + 24], 16);
        k.key.v6.protocol = proto;
        l4 = off + 40;
        inet_ntop(AF_INET6, &f[off + 8], a, sizeof(a));
        inet_ntop(AF_INET6, &f[off + 24], b, sizeof(b));
    } else {
        return std::nullopt;
    }
    uint16_t sport = 0, dport = 0;   // network order
    std::string name = std::to_string(proto);
    if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) && f.size() >= l4 + 4) {
        std::memcpy(&sport, &f[l4], 2);
        std::memcpy(&dport, &f[l4 + 2], 2);
        name = proto == IPPROTO_TCP ? "tcp" : "udp";
        if (proto == IPPROTO_TCP && f.size() >= l4 + 14) k.tcp_flags = f[l4 + 13];
        k.text = name + " " + (k.family == SLUICE_FAMILY_IPV6 ? "[" + std::string(a) + "]" : std::string(a)) + ":" +
                 std::to_string(ntohs(sport)) + " -> " +
                 (k.family == SLUICE_FAMILY_IPV6 ? "[" + std::string(b) + "]" : std::string(b)) + ":" +
                 std::to_string(ntohs(dport));
    } else if ((proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) && f.size() >= l4 + 8) {
        const uint8_t t = f[l4];
        uint16_t id;
        std::memcpy(&id, &f[l4 + 4], 2);
        // Echo requests key the identifier as the source port, replies as the destination.
        if (t == 8 || t == 128) sport = id;
        else if (t == 0 || t == 129) dport = id;
        name = proto == IPPROTO_ICMP ? "icmp" : "icmpv6";
        k.text = name + " " + a + " -> " + b + " type " + std::to_string(t);
    } else {
        k.text = name + " " + a + " -> " + b;
    }
    if (k.family == SLUICE_FAMILY_IPV4) {
        k.key.v4.src_port = sport;
        k.key.v4.dst_port = dport;
    } else {
        k.key.v6.src_port = sport;
        k.key.v6.dst_port = dport;
    }
    return k;
}

const char* action_name(int a) {
    switch (a) {
    case XDP_ABORTED: return "XDP_ABORTED";
    case XDP_DROP: return "XDP_DROP";
    case XDP_PASS: return "XDP_PASS";
    case XDP_TX: return "XDP_TX";
    case XDP_REDIRECT: return "XDP_REDIRECT";
    default: return "?";
    }
}

std::string ifname(uint32_t ifindex) {
    char buf[IF_NAMESIZE] = {};
    return ifindex && if_indextoname(ifindex, buf) ? buf : std::to_string(ifindex);
}

std::string address(uint8_t family, const __be32* a) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(family == SLUICE_FAMILY_IPV4 ? AF_INET : AF_INET6, a, buf, sizeof(buf));
    return buf;
}

json nat_json(uint8_t family, uint8_t protocol, const session_nat& n) {
    if (!(n.flags & (SESSION_NAT_SRC | SESSION_NAT_DST))) return nullptr;
    const bool ports = protocol == IPPROTO_TCP || protocol == IPPROTO_UDP;
    json j = json::object();
    if (n.flags & SESSION_NAT_SRC) {
        j["src"] = address(family, n.new_src_addr);
        if (ports) j["src_port"] = ntohs(n.new_src_port);
    }
    if (n.flags & SESSION_NAT_DST) {
        j["dst"] = address(family, n.new_dst_addr);
        if (ports) j["dst_port"] = ntohs(n.new_dst_port);
    }
    return j;
}

// What one run says, as JSON (the text form is printed from it).
json describe(const TraceRun& r, const std::optional<FrameKey>& key, const state::PublishedState& state,
              const std::string& in, size_t frame_len) {
    json j;
    j["packet"] = key ? key->text : "not IP";
    j["in"] = in;
    j["length"] = frame_len;
    j["xdp_action"] = action_name(r.action);
    // The drop or pass reason decides what the verdict is called.
    std::string reason;
    json counted = json::array();
    for (int i = 0; i < STAT_REASON_COUNT; ++i) {
        if (!r.counted[i]) continue;
        counted.push_back(std::string(stat_info(i).name));
        if (stat_info(i).kind != "info") reason = std::string(stat_info(i).name);
    }
    j["counted"] = counted;
    j["reason"] = reason.empty() ? json(nullptr) : json(reason);
    std::string verdict;
    switch (r.action) {
    case XDP_REDIRECT: verdict = "forward"; break;
    case XDP_TX: verdict = reason.starts_with("drop-policy-reject") ? "reject" : "answer"; break;
    case XDP_PASS: verdict = "pass"; break;
    case XDP_DROP: verdict = "drop"; break;
    default: verdict = "aborted";
    }
    j["verdict"] = verdict;
    j["egress_interface"] = r.action == XDP_REDIRECT && r.pc.fib.ifindex ? json(ifname(r.pc.fib.ifindex)) : json(nullptr);
    // Who decided.
    j["filter_rule"] = nullptr;
    if (!r.filter_slots.empty())
        for (const auto& f : state.filters)
            for (const auto& rule : f.rules)
                if (rule.slot == r.filter_slots.back())
                    j["filter_rule"] = {{"filter", f.name}, {"rule", rule.name}, {"action", rule.action}};
    j["policy"] = nullptr;
    if (r.policy_judged) {
        if (r.policy_id == SESSION_POLICY_RELATED) {
            j["policy"] = {{"name", "(default)"}, {"action", state.default_action}};
        } else {
            for (const auto& p : state.policies)
                if (p.id == r.policy_id) j["policy"] = {{"name", p.name}, {"id", p.id}, {"action", p.action}};
        }
    }
    const bool hit = r.counted[STAT_SESSION_HIT] != 0;
    j["session"] = !r.sessions_created.empty() ? "created" : hit ? "existing" : "none";
    json nat = nullptr;
    for (const auto& e : r.sessions_created)
        if (!(e.value.flags & SESSION_F_REPLY)) nat = nat_json(e.family, e.protocol, e.value.nat);
    if (nat.is_null() && r.pc.family) nat = nat_json(r.pc.family, r.pc.protocol, r.pc.nat);
    j["nat"] = nat;
    std::string decided;
    if (!j["filter_rule"].is_null() && (reason == "drop-filter" || j["policy"].is_null()))
        decided = "filter " + j["filter_rule"]["filter"].get<std::string>() + " rule " +
                  j["filter_rule"]["rule"].get<std::string>() + " (" + j["filter_rule"]["action"].get<std::string>() + ")";
    else if (!j["policy"].is_null() && r.policy_id == SESSION_POLICY_RELATED)
        decided = "the default action (" + j["policy"]["action"].get<std::string>() + ")";
    else if (!j["policy"].is_null())
        decided = "policy " + j["policy"]["name"].get<std::string>() + " (" + j["policy"]["action"].get<std::string>() + ")";
    else if (hit)
        decided = "its session (an established flow)";
    else if (!reason.empty())
        decided = reason;
    j["decided_by"] = decided;
    return j;
}

void print_text(const json& j, size_t n, std::ostream& out) {
    out << "packet " << n << ": " << j["packet"].get<std::string>() << ", " << j["length"] << " bytes, in "
        << j["in"].get<std::string>() << "\n";
    out << "  verdict:    " << j["verdict"].get<std::string>();
    if (!j["egress_interface"].is_null()) out << " to " << j["egress_interface"].get<std::string>();
    out << " (" << j["xdp_action"].get<std::string>();
    if (!j["reason"].is_null()) out << ", " << j["reason"].get<std::string>();
    out << ")\n";
    out << "  decided by: " << (j["decided_by"].get<std::string>().empty() ? "-" : j["decided_by"].get<std::string>())
        << "; session " << j["session"].get<std::string>() << "\n";
    if (!j["nat"].is_null()) {
        out << "  nat:       ";
        if (j["nat"].contains("src"))
            out << " source " << j["nat"]["src"].get<std::string>()
                << (j["nat"].contains("src_port") ? ":" + std::to_string(j["nat"]["src_port"].get<int>()) : "");
        if (j["nat"].contains("dst"))
            out << " destination " << j["nat"]["dst"].get<std::string>()
                << (j["nat"].contains("dst_port") ? ":" + std::to_string(j["nat"]["dst_port"].get<int>()) : "");
        out << "\n";
    }
    out << "  counted:   ";
    for (const auto& c : j["counted"]) out << " " << c.get<std::string>();
    out << "\n";
}

}  // namespace

int trace(const TraceOptions& o, std::ostream& out, std::ostream& err) {
    // The command line first: its mistakes need no running instance.
    if (auto s = check_fields_apply(o.fields, o.given, !o.pcap.empty()); !s) {
        err << "sluice: trace: " << s.error().message << "\n";
        return 1;
    }
    const InstancePaths paths = instance_paths(o.instance);
    auto state = read_state(paths.state_file());
    if (!state) {
        err << "sluice: trace: instance " << o.instance << " is not running (" << state.error().message << ")\n";
        return 1;
    }
    const uint32_t ifindex = if_nametoindex(o.in.c_str());
    if (!ifindex) {
        err << "sluice: trace: --in " << o.in << ": no such interface here\n";
        return 1;
    }
    std::vector<std::vector<uint8_t>> frames;
    if (!o.pcap.empty()) {
        auto read = read_pcap_frames(o.pcap);
        if (!read) {
            err << "sluice: trace: " << read.error().message << "\n";
            return 1;
        }
        frames = std::move(read.value());
        if (frames.empty()) {
            err << "sluice: trace: " << o.pcap << " holds no packet\n";
            return 1;
        }
    } else {
        if (o.fields.src.empty() || o.fields.dst.empty()) {
            err << "sluice: trace: give the packet (--src and --dst, with --protocol, --sport, --dport, ...) or "
                   "--pcap FILE\n";
            return 1;
        }
        auto mac = interface_mac(o.in);
        if (!mac) {
            err << "sluice: trace: " << mac.error().message << "\n";
            return 1;
        }
        auto frame = build_frame(o.fields, mac.value());
        if (!frame) {
            err << "sluice: trace: " << frame.error().message << "\n";
            return 1;
        }
        frames.push_back(std::move(frame.value()));
    }
    auto dp = TraceDatapath::open(state.value().pin_dir.empty() ? paths.pin_dir : state.value().pin_dir);
    if (!dp) {
        err << "sluice: trace: " << dp.error().message << "\n";
        return 1;
    }
    json all = json::array();
    for (size_t i = 0; i < frames.size(); ++i) {
        const auto key = key_of(frames[i]);
        // The live flow, once: later packets meet what the earlier ones left.
        if (key && i == 0) (void)dp.value()->seed_flow(key->family, &key->key);
        auto run = dp.value()->run(frames[i], ifindex);
        if (!run) {
            err << "sluice: trace: " << run.error().message << "\n";
            return 1;
        }
        json j = describe(run.value(), key, state.value(), o.in, frames[i].size());
        if (!o.json) print_text(j, i + 1, out);
        all.push_back(std::move(j));
    }
    if (o.json) out << json{{"instance", o.instance}, {"packets", all}}.dump(2) << "\n";
    return 0;
}

}  // namespace sluice::cli
