// What the HA BPF tests share: a flow made by the datapath itself (the
// client's first packet and the server's answer, with or without source
// NAT), its two entries as the maps hold them, and a comparison of entries
// that allows for what sync does not carry (the cached route) and for the
// wire's millisecond clock.
#pragma once

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cstring>
#include <string>
#include <vector>

#include "ha/flow_record.h"
#include "nat_env.h"

namespace sluice::test {

// runtime_cfg.ha_sync as the HA agent sets it.
inline void set_ha_sync(int runtime_cfg_fd, bool on) {
    uint32_t key = 0;
    runtime_config cfg{};
    ASSERT_EQ(bpf_map_lookup_elem(runtime_cfg_fd, &key, &cfg), 0);
    cfg.ha_sync = on ? 1 : 0;
    ASSERT_EQ(bpf_map_update_elem(runtime_cfg_fd, &key, &cfg, BPF_ANY), 0);
}

// Every record waiting in ha_events, read with libbpf's ring buffer.
inline std::vector<ha_event> drain_ha_events(int events_fd) {
    std::vector<ha_event> out;
    auto cb = [](void* ctx, void* data, size_t size) -> int {
        if (size != sizeof(ha_event)) return -1;
        ha_event e;
        std::memcpy(&e, data, sizeof e);
        static_cast<std::vector<ha_event>*>(ctx)->push_back(e);
        return 0;
    };
    ring_buffer* rb = ring_buffer__new(events_fd, cb, &out, nullptr);
    EXPECT_NE(rb, nullptr);
    if (!rb) return out;
    EXPECT_GE(ring_buffer__consume(rb), 0);
    ring_buffer__free(rb);
    return out;
}

class HaFlowTest : public NatTest {
protected:
    struct MadeFlow {
        SessionEntry initiator, reply;
        Bytes answer;             // the server's next packet
        uint16_t client_port = 0;
    };

    // The datapath forwards `kind`'s first packet LAN -> WAN and the server's
    // answer; returns the flow it made.
    MadeFlow make_flow(L4Kind kind, bool v6, bool nat, uint16_t cport = 42000) {
        MadeFlow f;
        f.client_port = cport;
        const uint16_t sport = kind == L4Kind::tcp ? 80 : 53;
        auto out = run(request(from_lan(v6, lan_host(v6), wan_host(v6)), kind, v6, cport, sport), lan_if());
        EXPECT_EQ(out.retval, XDP_REDIRECT);
        const uint16_t translated = frame_sport(out.output);
        f.answer = response(from_wan(v6, wan_host(v6), nat ? wan_addr(v6) : lan_host(v6)), kind, v6, sport, translated);
        EXPECT_EQ(run(f.answer, wan_if()).retval, XDP_REDIRECT);
        auto entries = flow_entries(cport);
        f.initiator = entries.first;
        f.reply = entries.second;
        EXPECT_EQ(has_translation(f.initiator.value), nat);
        return f;
    }

    // The two entries of the flow whose client port is `cport`.
    std::pair<SessionEntry, SessionEntry> flow_entries(uint16_t cport) {
        auto all = dump_sessions(fd4(), fd6());
        EXPECT_TRUE(all.ok());
        std::pair<SessionEntry, SessionEntry> out;
        if (!all.ok()) return out;
        int found = 0;
        for (const SessionEntry& e : all.value())
            if (!(e.value.flags & SESSION_F_REPLY) && ntohs(e.src_port) == cport) out.first = e, ++found;
        const SessionEntry want = reverse_of(out.first);
        for (const SessionEntry& e : all.value())
            if (same_key(e, want)) out.second = e, ++found;
        EXPECT_EQ(found, 2) << "the flow from client port " << cport << " should have two entries";
        return out;
    }

    // Equal but for the cached route and timestamps within a millisecond.
    static ::testing::AssertionResult same_entry(const SessionEntry& want, const SessionEntry& got) {
        if (!same_key(want, got)) return ::testing::AssertionFailure() << "different keys";
        session_value a = want.value, b = got.value;
        auto near = [](uint64_t x, uint64_t y) { return (x > y ? x - y : y - x) <= 1000000; };
        if (!near(a.created_ns, b.created_ns) || !near(a.last_seen_ns, b.last_seen_ns))
            return ::testing::AssertionFailure() << "timestamps differ by more than 1 ms";
        a.created_ns = b.created_ns = a.last_seen_ns = b.last_seen_ns = 0;
        a.fib = b.fib = session_fib{};
        if (std::memcmp(&a, &b, sizeof a) != 0)
            return ::testing::AssertionFailure()
                   << "values differ: tcp_state " << int(a.tcp_state) << "/" << int(b.tcp_state) << " flags "
                   << int(a.flags) << "/" << int(b.flags) << " nat " << int(a.nat.flags) << "/" << int(b.nat.flags)
                   << " zones " << a.zone_in << ">" << a.zone_out << "/" << b.zone_in << ">" << b.zone_out
                   << " packets " << a.packets << "/" << b.packets;
        return ::testing::AssertionSuccess();
    }

    uint32_t config_generation() {
        runtime_config cfg{};
        uint32_t key = 0;
        EXPECT_EQ(bpf_map_lookup_elem(env_->map_fd(SLUICE_MAP_RUNTIME_CONFIG), &key, &cfg), 0);
        return cfg.config_generation;
    }

    void clear_sessions() {
        auto all = dump_sessions(fd4(), fd6());
        ASSERT_TRUE(all.ok());
        for (const SessionEntry& e : all.value()) ASSERT_TRUE(delete_session_entry(fd4(), fd6(), e));
    }

    // The server's answer is forwarded by an existing session, none created.
    void expect_answer_forwarded(const MadeFlow& f) {
        snapshot_stats();
        auto again = run(f.answer, wan_if());
        EXPECT_EQ(again.retval, XDP_REDIRECT);
        EXPECT_EQ(stat_change(STAT_SESSION_HIT), 1);
        EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 0);
        EXPECT_EQ(frame_dport(again.output), f.client_port);
    }

    int fd4() const { return env_->map_fd(SLUICE_MAP_SESSIONS_V4); }
    int fd6() const { return env_->map_fd(SLUICE_MAP_SESSIONS_V6); }
};

}  // namespace sluice::test
