// The SYN proxy (bpf/synproxy.bpf.h) on BPF_PROG_TEST_RUN: the LAN zone has
// `screen: { syn-proxy: always }`, the LAN host opens TCP connections to the
// WAN host. Checked here, IPv4 and IPv6:
//   - a SYN is answered in place (XDP_TX) by a SYN-ACK with window 0, the
//     client's options echoed as the cookie allows, and valid checksums
//     (read back with the independent parser); no session is created;
//   - the ACK that returns the cookie creates the session and leaves as the
//     SYN to the server: exact bytes, the client's ISN and options, the MSS
//     class recovered from the cookie when the client had no timestamps;
//   - a forged ACK is dropped and counted, and creates nothing;
//   - after the server's SYN-ACK (handed to TC: XDP_PASS), the segments of
//     the flow are renumbered exactly both ways (sequence, acknowledgment,
//     both timestamps, window in the receiver's scale), and a server RST
//     reaches the client in the client's numbering.
// The two packets tc_punt_prog sends at the end of the handshake need real
// interfaces: tests/integration/test_syn_proxy.sh covers them.
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include <cstring>
#include <optional>

#include "datapath_env.h"
#include "map_readers.h"

extern "C" {
#include "screen.h"
}

namespace sluice::test {
namespace {

const char* const kSynProxyYaml = R"yaml(
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
zones:
  trust: { screen: { syn-proxy: always } }
  untrust: {}
policies:
  - { name: lan-out, from: trust, to: untrust, action: permit }
default-action: deny
)yaml";

constexpr uint16_t kClientPort = 40000, kServerPort = 80;
constexpr uint32_t kClientIsn = 1000, kServerIsn = 5000000;

Bytes be32(uint32_t v) { return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)}; }
Bytes mss_opt(uint16_t mss) { return {2, 4, uint8_t(mss >> 8), uint8_t(mss)}; }
Bytes ts_opt(uint32_t tsval, uint32_t tsecr) {
    Bytes o = {8, 10};
    for (uint32_t v : {tsval, tsecr})
        for (uint8_t b : be32(v)) o.push_back(b);
    return o;
}
Bytes cat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}
const Bytes kSackPerm = {4, 2}, kNop = {1};
Bytes ws_opt(uint8_t s) { return {3, 3, s}; }

// The TCP options of a frame, read without the datapath's code.
struct TcpOptions {
    std::optional<uint16_t> mss;
    std::optional<uint8_t> wscale;
    bool sack_perm = false;
    std::optional<std::pair<uint32_t, uint32_t>> ts;
};

TcpOptions read_options(const Bytes& frame) {
    TcpOptions o;
    auto f = parse_frame(frame);
    if (!f || f->l4_proto != 6) return o;
    size_t start = f->l4_offset + 20, end = f->l4_offset + (frame[f->l4_offset + 12] >> 4) * 4;
    for (size_t i = start; i < end && i < frame.size();) {
        uint8_t kind = frame[i];
        if (kind == 0) break;
        if (kind == 1) {
            ++i;
            continue;
        }
        if (i + 1 >= end) break;
        uint8_t len = frame[i + 1];
        if (len < 2 || i + len > end) break;
        if (kind == 2 && len == 4) o.mss = uint16_t(frame[i + 2] << 8 | frame[i + 3]);
        if (kind == 3 && len == 3) o.wscale = frame[i + 2];
        if (kind == 4 && len == 2) o.sack_perm = true;
        if (kind == 8 && len == 10) {
            auto rd = [&](size_t p) {
                return uint32_t(frame[p]) << 24 | uint32_t(frame[p + 1]) << 16 | uint32_t(frame[p + 2]) << 8 |
                       frame[p + 3];
            };
            o.ts = {rd(i + 2), rd(i + 6)};
        }
        i += len;
    }
    return o;
}

class SynProxyTest : public DatapathTest, public ::testing::WithParamInterface<bool> {
protected:
    std::string config_yaml() const override { return kSynProxyYaml; }
    bool v6() const { return GetParam(); }

    PacketBuilder client() const { return v6() ? lan_to_wan6() : lan_to_wan4(); }
    PacketBuilder server() const { return v6() ? wan_to_lan6() : wan_to_lan4(); }
    PacketBuilder to_server() const { return v6() ? lan_to_wan6_out() : lan_to_wan4_out(); }
    PacketBuilder to_client() const { return v6() ? wan_to_lan6_out() : wan_to_lan4_out(); }
    uint16_t mss_header() const { return v6() ? 60 : 40; }

    size_t sessions() {
        return count_entries(env_->map_fd(v6() ? SLUICE_MAP_SESSIONS_V6 : SLUICE_MAP_SESSIONS_V4));
    }
    std::optional<session_value> client_entry() {
        return v6() ? session6(kLanHost6, kWanHost6, kClientPort, kServerPort, proto::kTcp)
                    : session4(kLanHost4, kWanHost4, kClientPort, kServerPort, proto::kTcp);
    }
    screen_counter screen(uint16_t zone) { return read_screen_counter(env_->map_fd(SLUICE_MAP_SCREEN_HITS), env_->map_fd(SLUICE_MAP_RUNTIME_CONFIG), zone); }

    // The client's SYN: MSS 1460, SACK-permitted, TS(111, 0), window scale 7.
    Bytes client_syn(bool timestamps = true, uint16_t mss = 1460, uint16_t port = kClientPort) const {
        Bytes opts = timestamps ? cat({mss_opt(mss), kSackPerm, ts_opt(111, 0), kNop, ws_opt(7)}) : mss_opt(mss);
        return client().tcp(port, kServerPort).seq(kClientIsn).syn().window(64240).tcp_options(opts).build();
    }

    // Runs the SYN; returns the SYN-ACK (checked) and its cookie and TSval.
    struct SynAck {
        uint32_t cookie = 0;
        uint32_t tsval = 0;
        TcpOptions options;
    };
    SynAck answer(const Bytes& syn, uint16_t port = kClientPort) {
        SynAck out;
        auto r = run(syn, lan_if());
        EXPECT_EQ(r.retval, XDP_TX) << xdp_verdict_name(r.retval);
        auto f = parse_frame(r.output);
        EXPECT_TRUE(f.has_value());
        if (!f) return out;
        auto sums = verify_checksums(r.output);
        EXPECT_TRUE(sums.ok()) << sums.describe();
        EXPECT_EQ(f->dst, kLanHostMac);
        EXPECT_EQ(f->src, lan_mac());
        EXPECT_EQ(f->src_ip, v6() ? kWanHost6.str() : kWanHost4.str());
        EXPECT_EQ(f->dst_ip, v6() ? kLanHost6.str() : kLanHost4.str());
        EXPECT_EQ(f->sport, kServerPort);
        EXPECT_EQ(f->dport, port);
        EXPECT_EQ(f->tcp_flags, 0x12) << "SYN+ACK";
        EXPECT_EQ(f->ack, kClientIsn + 1);
        EXPECT_EQ(f->tcp_window, 0) << "the client may send nothing before the server answers";
        out.cookie = f->seq;
        out.options = read_options(r.output);
        if (out.options.ts) out.tsval = out.options.ts->first;
        return out;
    }

    Bytes client_ack(const SynAck& sa, bool timestamps = true, uint32_t ack_delta = 1, uint16_t port = kClientPort) const {
        auto b = client().tcp(port, kServerPort).seq(kClientIsn + 1).ack_seq(sa.cookie + ack_delta).ack().window(502);
        if (timestamps) b.tcp_options(cat({kNop, kNop, ts_opt(112, sa.tsval)}));
        return b.build();
    }
};

TEST_P(SynProxyTest, SynIsAnsweredWithACookieAndNoSession) {
    snapshot_stats();
    SynAck sa = answer(client_syn());
    EXPECT_EQ(sessions(), 0u) << "a SYN creates no session";
    EXPECT_EQ(stat_change(STAT_SYNPROXY_COOKIE_SENT), 1);
    EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 0);
    EXPECT_EQ(screen(1).syn_proxy_cookies_sent, 1u);
    // Options: the egress MTU's MSS, and the client's options echoed.
    EXPECT_EQ(sa.options.mss, std::optional<uint16_t>(1500 - mss_header()));
    EXPECT_TRUE(sa.options.sack_perm);
    EXPECT_EQ(sa.options.wscale, std::optional<uint8_t>(7));
    ASSERT_TRUE(sa.options.ts.has_value());
    EXPECT_EQ(sa.options.ts->second, 111u) << "TSecr echoes the client's TSval";
    EXPECT_EQ(sa.tsval & SYNPROXY_TS_WSCALE_MASK, 7u) << "the client's window scale rides in the TSval";
    EXPECT_EQ(sa.tsval & SYNPROXY_TS_SACK, SYNPROXY_TS_SACK);
    // The same SYN again gets the same cookie (it is a function of the SYN).
    EXPECT_EQ(answer(client_syn()).cookie, sa.cookie);
}

TEST_P(SynProxyTest, ValidAckCreatesTheSessionAndSendsTheSynToTheServer) {
    SynAck sa = answer(client_syn());
    snapshot_stats();
    // The cookie's MSS class for a client MSS of 1460: 1460 (IPv4), 1440 (IPv6).
    const uint16_t mss = v6() ? 1440 : 1460;
    PacketBuilder b = to_server();
    if (!v6()) b.dont_fragment();  // the proxy writes its own IPv4 header: DF, id 0
    Bytes expected = b.tcp(kClientPort, kServerPort)
                         .seq(kClientIsn)
                         .syn()
                         .window(502 << 7)
                         .tcp_options(cat({mss_opt(mss), kSackPerm, ts_opt(112, 0), kNop, ws_opt(7)}))
                         .build();
    auto r = expect_fixture({"the ACK with the cookie", client_ack(sa), lan_if(), XDP_REDIRECT, expected});
    auto sums = verify_checksums(r.output);
    EXPECT_TRUE(sums.ok()) << sums.describe();
    EXPECT_EQ(stat_change(STAT_SYNPROXY_COOKIE_VALID), 1);
    EXPECT_EQ(stat_change(STAT_SYNPROXY_SERVER_SYN), 1);
    EXPECT_EQ(stat_change(STAT_SESSION_CREATED), 1);
    auto s = client_entry();
    ASSERT_TRUE(s.has_value());
    EXPECT_TRUE(s->punt_flags & SESSION_PUNT_SYNPROXY);
    EXPECT_EQ(s->tcp_state, TCP_SESSION_SYN_SENT);
    EXPECT_EQ(s->synproxy.proxy_isn, sa.cookie);
    EXPECT_EQ(s->synproxy.client_isn, kClientIsn);
    EXPECT_EQ(screen(1).syn_proxy_cookies_valid, 1u);
    // Anything more from the client while the server is silent resends the SYN.
    r = expect_fixture({"the client's window probe", client_ack(sa), lan_if(), XDP_REDIRECT, expected});
    EXPECT_EQ(sessions(), 2u);
}

// Without timestamps, window scale and SACK cannot survive the cookie, but
// the MSS class can: a client MSS of 1400 is class 1300 (IPv4) / 1220 (IPv6).
TEST_P(SynProxyTest, WithoutTimestampsTheMssClassSurvives) {
    SynAck sa = answer(client_syn(false, 1400));
    EXPECT_FALSE(sa.options.ts.has_value());
    EXPECT_FALSE(sa.options.wscale.has_value());
    EXPECT_FALSE(sa.options.sack_perm);
    auto r = run(client_ack(sa, false), lan_if());
    ASSERT_EQ(r.retval, XDP_REDIRECT);
    auto o = read_options(r.output);
    EXPECT_EQ(o.mss, std::optional<uint16_t>(v6() ? 1220 : 1300));
    EXPECT_FALSE(o.ts.has_value());
    EXPECT_FALSE(o.wscale.has_value());
    EXPECT_FALSE(o.sack_perm);
    auto f = parse_frame(r.output);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->tcp_window, 502) << "unscaled: the client offered no window scale";
}

TEST_P(SynProxyTest, ForgedAckIsDroppedAndCounted) {
    SynAck sa = answer(client_syn());
    // Far from the cookie: the kernel's cookie keeps the MSS class in its
    // low bits, so a neighbour of a valid cookie can itself be valid (with
    // another class); a forger still has to hit the keyed hash.
    for (uint32_t delta : {0x5a5a5a5au, 0x80000001u, 0x01000001u}) {
        snapshot_stats();
        expect_fixture({"ACK with a wrong cookie", client_ack(sa, true, delta), lan_if(), XDP_DROP, std::nullopt});
        EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_SYNPROXY_BAD_COOKIE));
    }
    // A cookie for another tuple.
    Bytes other = client().tcp(kClientPort + 1, kServerPort).seq(kClientIsn + 1).ack_seq(sa.cookie + 1).ack().build();
    snapshot_stats();
    expect_fixture({"the cookie on another port", other, lan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_SYNPROXY_BAD_COOKIE));
    EXPECT_EQ(sessions(), 0u);
    EXPECT_EQ(screen(1).syn_proxy_cookies_invalid, 4u);
}

// A client whose cookie came back but whose flow may not open (here: its
// source's rate of new sessions; then a policy changed since the SYN)
// believes it is connected: it gets a RST at the sequence it acknowledged,
// counted under the reason, and no session is left.
TEST_P(SynProxyTest, RefusedFlowResetsTheClient) {
    std::string yaml = kSynProxyYaml;
    yaml.replace(yaml.find("{ syn-proxy: always }"), 21, "{ syn-proxy: always, source-limit: { new-sessions: 1 } }");
    ASSERT_TRUE(env_->apply(yaml).ok());
    SynAck first = answer(client_syn());
    ASSERT_EQ(run(client_ack(first), lan_if()).retval, XDP_REDIRECT) << "the first flow opens";
    const uint16_t port = kClientPort + 1;
    SynAck sa = answer(client_syn(true, 1460, port), port);
    const size_t before = sessions();
    snapshot_stats();
    Bytes expected = (v6() ? PacketBuilder().eth(lan_mac(), kLanHostMac).ipv6(kWanHost6, kLanHost6).hop_limit(64)
                           : PacketBuilder().eth(lan_mac(), kLanHostMac).ipv4(kWanHost4, kLanHost4).ttl(64)
                                 .dont_fragment())
                         .tcp(kServerPort, port)
                         .seq(sa.cookie + 1)
                         .flags(tcp_flag::kRst)
                         .window(0)
                         .build();
    auto r = expect_fixture({"the second flow's ACK, over the source's rate", client_ack(sa, true, 1, port), lan_if(),
                             XDP_TX, expected});
    auto sums = verify_checksums(r.output);
    EXPECT_TRUE(sums.ok()) << sums.describe();
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_SCREEN_SOURCE_RATE));
    EXPECT_EQ(stat_change(STAT_REJECT_TCP_RST), 1);
    EXPECT_EQ(stat_change(STAT_DROP_SYNPROXY_BAD_COOKIE), 0) << "a valid cookie is not counted as forged";
    EXPECT_EQ(sessions(), before) << "no session for the refused flow";
    EXPECT_EQ(screen(1).syn_proxy_refused, 1u);
    EXPECT_EQ(screen(1).source_rate_drops, 1u);

    // The policy no longer permits the flow when its ACK returns.
    SynAck late = answer(client_syn(true, 1460, port + 1), port + 1);
    std::string deny = kSynProxyYaml;
    deny.replace(deny.find("action: permit"), 14, "action: deny");
    ASSERT_TRUE(env_->apply(deny).ok());
    snapshot_stats();
    r = run(client_ack(late, true, 1, port + 1), lan_if());
    EXPECT_EQ(r.retval, XDP_TX) << "a RST to the client";
    auto f = parse_frame(r.output);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->tcp_flags, tcp_flag::kRst);
    EXPECT_EQ(f->seq, late.cookie + 1);
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_POLICY_DENY));
    EXPECT_EQ(screen(1).syn_proxy_refused, 1u) << "counted in the new generation";
}

// After the server's SYN-ACK: the splice maps the server's ISN, TSval and
// window scale onto what the client was told.
TEST_P(SynProxyTest, EstablishedFlowIsRenumberedBothWays) {
    SynAck sa = answer(client_syn());
    ASSERT_EQ(run(client_ack(sa), lan_if()).retval, XDP_REDIRECT);
    const uint32_t server_ts = 900000;
    Bytes synack = server()
                       .tcp(kServerPort, kClientPort)
                       .seq(kServerIsn)
                       .ack_seq(kClientIsn + 1)
                       .syn()
                       .ack()
                       .window(65160)
                       .tcp_options(cat({mss_opt(1460), kSackPerm, ts_opt(server_ts, 112), kNop, ws_opt(9)}))
                       .build();
    snapshot_stats();
    auto r = run(synack, wan_if());
    ASSERT_EQ(r.retval, XDP_PASS) << "to tc_punt_prog, which answers both ends";
    auto s = client_entry();
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->tcp_state, TCP_SESSION_ESTABLISHED);
    EXPECT_TRUE(s->punt_flags & SESSION_PUNT_SPLICED);
    EXPECT_FALSE(s->punt_flags & SESSION_PUNT_SYNPROXY);

    // Client → server: ACK and TSecr in the server's numbering; the server
    // scales the client's window as the client does (it saw the scale).
    const uint32_t tsecr_delta = server_ts - sa.tsval;
    Bytes data_in = client()
                        .tcp(kClientPort, kServerPort)
                        .seq(kClientIsn + 1)
                        .ack_seq(sa.cookie + 1)
                        .ack()
                        .psh()
                        .window(502)
                        .tcp_options(cat({kNop, kNop, ts_opt(113, sa.tsval)}))
                        .payload("GET /")
                        .build();
    Bytes data_out = to_server()
                         .tcp(kClientPort, kServerPort)
                         .seq(kClientIsn + 1)
                         .ack_seq(kServerIsn + 1)
                         .ack()
                         .psh()
                         .window(502)
                         .tcp_options(cat({kNop, kNop, ts_opt(113, sa.tsval + tsecr_delta)}))
                         .payload("GET /")
                         .build();
    r = expect_fixture({"client data", data_in, lan_if(), XDP_REDIRECT, data_out});
    EXPECT_TRUE(verify_checksums(r.output).ok()) << verify_checksums(r.output).describe();

    // Server → client: sequence and TSval in the numbering the client knows,
    // the window from the server's scale (9) to the proxy's (7).
    Bytes reply_in = server()
                         .tcp(kServerPort, kClientPort)
                         .seq(kServerIsn + 1)
                         .ack_seq(kClientIsn + 6)
                         .ack()
                         .psh()
                         .window(200)
                         .tcp_options(cat({kNop, kNop, ts_opt(server_ts + 1, 113)}))
                         .payload("200 OK")
                         .build();
    Bytes reply_out = to_client()
                          .tcp(kServerPort, kClientPort)
                          .seq(sa.cookie + 1)
                          .ack_seq(kClientIsn + 6)
                          .ack()
                          .psh()
                          .window(800)
                          .tcp_options(cat({kNop, kNop, ts_opt(sa.tsval + 1, 113)}))
                          .payload("200 OK")
                          .build();
    r = expect_fixture({"server data", reply_in, wan_if(), XDP_REDIRECT, reply_out});
    EXPECT_TRUE(verify_checksums(r.output).ok()) << verify_checksums(r.output).describe();
}

TEST_P(SynProxyTest, ServerRefusalReachesTheClientInItsNumbering) {
    SynAck sa = answer(client_syn());
    ASSERT_EQ(run(client_ack(sa), lan_if()).retval, XDP_REDIRECT);
    Bytes rst = server().tcp(kServerPort, kClientPort).seq(0).ack_seq(kClientIsn + 1).rst().ack().window(0).build();
    Bytes out = to_client().tcp(kServerPort, kClientPort).seq(sa.cookie + 1).ack_seq(kClientIsn + 1).rst().ack().window(0).build();
    auto r = expect_fixture({"server RST", rst, wan_if(), XDP_REDIRECT, out});
    EXPECT_TRUE(verify_checksums(r.output).ok()) << verify_checksums(r.output).describe();
    auto s = client_entry();
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->tcp_state, TCP_SESSION_CLOSED);
}

// A SYN-ACK that does not answer the proxy's SYN is dropped.
TEST_P(SynProxyTest, SynAckForAnotherSynIsDropped) {
    SynAck sa = answer(client_syn());
    ASSERT_EQ(run(client_ack(sa), lan_if()).retval, XDP_REDIRECT);
    Bytes wrong = server().tcp(kServerPort, kClientPort).seq(kServerIsn).ack_seq(kClientIsn + 7).syn().ack().build();
    snapshot_stats();
    expect_fixture({"SYN-ACK acknowledging another ISN", wrong, wan_if(), XDP_DROP, std::nullopt});
    EXPECT_TRUE(only_drop_or_pass_counter(STAT_DROP_SYNPROXY_SYNACK));
}

INSTANTIATE_TEST_SUITE_P(Families, SynProxyTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("ipv6") : std::string("ipv4"); });

}  // namespace
}  // namespace sluice::test
