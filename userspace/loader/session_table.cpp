#include "loader/session_table.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace sluice {
namespace {

template <typename K>
Status dump_map(int fd, std::vector<SessionEntry>& out, uint8_t family) {
    constexpr uint32_t kBatch = 4096;
    std::vector<K> keys(kBatch);
    std::vector<session_value> values(kBatch);
    K out_batch{};
    bool first = true;
    for (;;) {
        uint32_t count = kBatch;
        LIBBPF_OPTS(bpf_map_batch_opts, opts);
        int rc = bpf_map_lookup_batch(fd, first ? nullptr : &out_batch, &out_batch, keys.data(), values.data(),
                                      &count, &opts);
        int err = errno;
        for (uint32_t i = 0; i < count; ++i) {
            SessionEntry e;
            e.family = family;
            const K& k = keys[i];
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
            e.value = values[i];
            out.push_back(e);
        }
        first = false;
        if (rc != 0) {
            if (err == ENOENT) return {};
            return make_error(std::string("cannot read sessions: ") + std::strerror(err));
        }
    }
}

}  // namespace

Result<std::vector<SessionEntry>> dump_sessions(int fd_v4, int fd_v6) {
    std::vector<SessionEntry> out;
    if (auto s = dump_map<session_key_v4>(fd_v4, out, SLUICE_FAMILY_IPV4); !s) return s.error();
    if (auto s = dump_map<session_key_v6>(fd_v6, out, SLUICE_FAMILY_IPV6); !s) return s.error();
    return out;
}

SessionEntry reverse_of(const SessionEntry& e) {
    SessionEntry r = e;
    std::memcpy(r.src_addr, e.dst_addr, 16);
    std::memcpy(r.dst_addr, e.src_addr, 16);
    r.src_port = e.dst_port;
    r.dst_port = e.src_port;
    return r;
}

bool same_key(const SessionEntry& a, const SessionEntry& b) {
    return a.family == b.family && a.protocol == b.protocol && a.src_port == b.src_port &&
           a.dst_port == b.dst_port && std::memcmp(a.src_addr, b.src_addr, 16) == 0 &&
           std::memcmp(a.dst_addr, b.dst_addr, 16) == 0;
}

std::string key_bytes(const SessionEntry& e) {
    std::string k(38, '\0');
    k[0] = static_cast<char>(e.family);
    k[1] = static_cast<char>(e.protocol);
    std::memcpy(&k[2], &e.src_port, 2);
    std::memcpy(&k[4], &e.dst_port, 2);
    std::memcpy(&k[6], e.src_addr, 16);
    std::memcpy(&k[22], e.dst_addr, 16);
    return k;
}

Status delete_session_entry(int fd_v4, int fd_v6, const SessionEntry& e) {
    int rc;
    if (e.family == SLUICE_FAMILY_IPV4) {
        session_key_v4 k{};
        k.src_addr = e.src_addr[0];
        k.dst_addr = e.dst_addr[0];
        k.src_port = e.src_port;
        k.dst_port = e.dst_port;
        k.protocol = e.protocol;
        rc = bpf_map_delete_elem(fd_v4, &k);
    } else {
        session_key_v6 k{};
        std::memcpy(k.src_addr, e.src_addr, 16);
        std::memcpy(k.dst_addr, e.dst_addr, 16);
        k.src_port = e.src_port;
        k.dst_port = e.dst_port;
        k.protocol = e.protocol;
        rc = bpf_map_delete_elem(fd_v6, &k);
    }
    if (rc != 0 && errno != ENOENT) return make_error(std::string("cannot delete session: ") + std::strerror(errno));
    return {};
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

}  // namespace sluice
