#include "loader/session_table.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <functional>
#include <string_view>

#include "loader/map_dump.h"

namespace sluice {
namespace {

template <typename K>
Status dump_map(int fd, std::vector<SessionEntry>& out, uint8_t family) {
    return batch_dump<K, session_value>(fd, "sessions", [&](const K& k, const session_value& v) {
        SessionEntry e;
        e.family = family;
        if constexpr (sizeof(K) == sizeof(session_key_v4)) {
            e.src_addr[0] = k.src_addr;
            e.dst_addr[0] = k.dst_addr;
        } else {
            std::memcpy(e.src_addr, k.src_addr, 16);
            std::memcpy(e.dst_addr, k.dst_addr, 16);
        }
        e.src_port = k.src_port;
        e.dst_port = k.dst_port;
        e.protocol = k.protocol;
        e.value = v;
        out.push_back(e);
    });
}

}  // namespace

Result<std::vector<SessionEntry>> dump_sessions(int fd_v4, int fd_v6, size_t expected) {
    std::vector<SessionEntry> out;
    out.reserve(expected);
    if (auto s = dump_map<session_key_v4>(fd_v4, out, SLUICE_FAMILY_IPV4); !s) return s.error();
    if (auto s = dump_map<session_key_v6>(fd_v6, out, SLUICE_FAMILY_IPV6); !s) return s.error();
    return out;
}

bool has_translation(const session_value& v) { return (v.nat.flags & (SESSION_NAT_SRC | SESSION_NAT_DST)) != 0; }

SessionEntry translated_tuple(const SessionEntry& e) {
    SessionEntry t = e;
    if (!has_translation(e.value)) return t;
    // Every field is filled when a flag is set, changed or not (maps/nat.h).
    std::memcpy(t.src_addr, e.value.nat.new_src_addr, 16);
    std::memcpy(t.dst_addr, e.value.nat.new_dst_addr, 16);
    t.src_port = e.value.nat.new_src_port;
    t.dst_port = e.value.nat.new_dst_port;
    return t;
}

SessionEntry reverse_of(const SessionEntry& e) {
    SessionEntry t = translated_tuple(e);
    SessionEntry r = e;
    std::memcpy(r.src_addr, t.dst_addr, 16);
    std::memcpy(r.dst_addr, t.src_addr, 16);
    r.src_port = t.dst_port;
    r.dst_port = t.src_port;
    return r;
}

bool same_key(const SessionEntry& a, const SessionEntry& b) {
    return a.family == b.family && a.protocol == b.protocol && a.src_port == b.src_port &&
           a.dst_port == b.dst_port && std::memcmp(a.src_addr, b.src_addr, 16) == 0 &&
           std::memcmp(a.dst_addr, b.dst_addr, 16) == 0;
}

SessionKeyBytes key_bytes(const SessionEntry& e) {
    SessionKeyBytes k{};
    k[0] = e.family;
    k[1] = e.protocol;
    std::memcpy(&k[2], &e.src_port, 2);
    std::memcpy(&k[4], &e.dst_port, 2);
    std::memcpy(&k[6], e.src_addr, 16);
    std::memcpy(&k[22], e.dst_addr, 16);
    return k;
}

size_t SessionKeyHash::operator()(const SessionKeyBytes& k) const noexcept {
    return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(k.data()), k.size()));
}

namespace {

// Calls op(map fd, key pointer) with e's key in its family's map layout.
template <typename Op>
int with_session_key(int fd_v4, int fd_v6, const SessionEntry& e, Op op) {
    if (e.family == SLUICE_FAMILY_IPV4) {
        session_key_v4 k{};
        k.src_addr = e.src_addr[0];
        k.dst_addr = e.dst_addr[0];
        k.src_port = e.src_port;
        k.dst_port = e.dst_port;
        k.protocol = e.protocol;
        return op(fd_v4, static_cast<const void*>(&k));
    }
    session_key_v6 k{};
    std::memcpy(k.src_addr, e.src_addr, 16);
    std::memcpy(k.dst_addr, e.dst_addr, 16);
    k.src_port = e.src_port;
    k.dst_port = e.dst_port;
    k.protocol = e.protocol;
    return op(fd_v6, static_cast<const void*>(&k));
}

}  // namespace

Status delete_session_entry(int fd_v4, int fd_v6, const SessionEntry& e) {
    int rc = with_session_key(fd_v4, fd_v6, e, [](int fd, const void* k) { return bpf_map_delete_elem(fd, k); });
    if (rc != 0 && errno != ENOENT) return make_error(std::string("cannot delete session: ") + std::strerror(errno));
    return {};
}

namespace {

// Deletes keys[0..n) from fd in batches. A batch stops at a key that is not
// there (the datapath may have removed it since the dump: ENOENT, with count
// saying how many went before it); the rest go on after it.
template <typename K>
Status delete_keys(int fd, std::vector<K>& keys) {
    LIBBPF_OPTS(bpf_map_batch_opts, opts);
    size_t done = 0;
    while (done < keys.size()) {
        __u32 count = static_cast<__u32>(keys.size() - done);
        if (bpf_map_delete_batch(fd, &keys[done], &count, &opts) == 0) break;
        const int err = errno;
        if (err != ENOENT) return make_error(std::string("cannot delete sessions: ") + std::strerror(err));
        done += count + 1;  // the ones deleted, and the one that was gone
    }
    return {};
}

}  // namespace

Status delete_session_entries(int fd_v4, int fd_v6, const std::vector<const SessionEntry*>& entries) {
    std::vector<session_key_v4> v4;
    std::vector<session_key_v6> v6;
    for (const SessionEntry* e : entries)
        with_session_key(fd_v4, fd_v6, *e, [&](int, const void* k) {
            if (e->family == SLUICE_FAMILY_IPV4)
                v4.push_back(*static_cast<const session_key_v4*>(k));
            else
                v6.push_back(*static_cast<const session_key_v6*>(k));
            return 0;
        });
    if (Status s = delete_keys(fd_v4, v4); !s) return s;
    return delete_keys(fd_v6, v6);
}

bool read_session_entry(int fd_v4, int fd_v6, SessionEntry& e) {
    return with_session_key(fd_v4, fd_v6, e, [&e](int fd, const void* k) {
               return bpf_map_lookup_elem(fd, k, &e.value);
           }) == 0;
}

namespace {

Status write_entry(int fd_v4, int fd_v6, const SessionEntry& e, uint64_t flags, const char* what) {
    int rc = with_session_key(fd_v4, fd_v6, e, [&e, flags](int fd, const void* k) {
        return bpf_map_update_elem(fd, k, &e.value, flags);
    });
    if (rc != 0) return errno_error(std::string("cannot ") + what + " session " + endpoint_text(e.family, e.src_addr, e.src_port) + " -> " + endpoint_text(e.family, e.dst_addr, e.dst_port), errno);
    return {};
}

}  // namespace

Status update_session_entry(int fd_v4, int fd_v6, const SessionEntry& e) {
    return write_entry(fd_v4, fd_v6, e, BPF_EXIST, "update");
}

Status write_session_entry(int fd_v4, int fd_v6, const SessionEntry& e) {
    return write_entry(fd_v4, fd_v6, e, BPF_ANY, "write");
}

int timeout_class_of(const session_value& v, uint8_t protocol) {
    switch (protocol) {
    case IPPROTO_TCP:
        switch (v.tcp_state) {
        case TCP_SESSION_SYN_SENT:
        case TCP_SESSION_SYN_RECV: return TIMEOUT_TCP_SYN;
        case TCP_SESSION_ESTABLISHED: return TIMEOUT_TCP_ESTABLISHED;
        case TCP_SESSION_TIME_WAIT: return TIMEOUT_TCP_TIME_WAIT;
        default: return TIMEOUT_TCP_CLOSING;
        }
    case IPPROTO_UDP: return TIMEOUT_UDP;
    case IPPROTO_ICMP:
    case IPPROTO_ICMPV6: return TIMEOUT_ICMP;
    default: return TIMEOUT_OTHER;
    }
}

uint64_t coarse_now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string tcp_state_name(uint8_t state) {
    switch (state) {
    case TCP_SESSION_NONE: return "none";
    case TCP_SESSION_SYN_SENT: return "syn-sent";
    case TCP_SESSION_SYN_RECV: return "syn-received";
    case TCP_SESSION_ESTABLISHED: return "established";
    case TCP_SESSION_FIN_WAIT: return "fin-wait";
    case TCP_SESSION_CLOSING: return "closing";
    case TCP_SESSION_TIME_WAIT: return "time-wait";
    case TCP_SESSION_CLOSED: return "closed";
    default: return "unknown";
    }
}

std::string protocol_name(uint8_t protocol) {
    switch (protocol) {
    case IPPROTO_TCP: return "tcp";
    case IPPROTO_UDP: return "udp";
    case IPPROTO_ICMP: return "icmp";
    case IPPROTO_ICMPV6: return "icmpv6";
    default: return std::to_string(protocol);
    }
}

std::string address_text(uint8_t family, const uint32_t addr[4]) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(family == SLUICE_FAMILY_IPV4 ? AF_INET : AF_INET6, addr, buf, sizeof(buf));
    return buf;
}

std::string endpoint_text(uint8_t family, const uint32_t addr[4], uint16_t port) {
    std::string a = address_text(family, addr);
    return (family == SLUICE_FAMILY_IPV4 ? a : "[" + a + "]") + ":" + std::to_string(ntohs(port));
}

}  // namespace sluice
