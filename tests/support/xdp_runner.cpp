#include "xdp_runner.h"

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "checksum_verify.h"

extern "C" {
#include "tc_marks.h"
}

namespace sluice::test {

std::string xdp_verdict_name(int verdict) {
    switch (verdict) {
        case XDP_ABORTED: return "XDP_ABORTED";
        case XDP_DROP: return "XDP_DROP";
        case XDP_PASS: return "XDP_PASS";
        case XDP_TX: return "XDP_TX";
        case XDP_REDIRECT: return "XDP_REDIRECT";
        default: return "verdict " + std::to_string(verdict);
    }
}

const char* hook_name(Hook hook) { return hook == Hook::tc ? "tc" : "xdp"; }

bool XdpRunner::same_verdict(int verdict, int expected) const {
    if (verdict == expected) return true;
    if (hook_ != Hook::tc) return false;
    return expected == XDP_ABORTED && verdict == XDP_DROP;
}

Result<XdpRunResult> XdpRunner::run_tc(const Bytes& input, uint32_t ingress_ifindex, int repeat) const {
    Bytes data = input;
    Bytes out(data.size() + 4096);
    // The skb arrives on ingress_ifindex (the kernel builds it on that
    // device and runs the program at its MAC header, as at TC ingress).
    struct __sk_buff ctx;
    std::memset(&ctx, 0, sizeof ctx);
    ctx.ifindex = ingress_ifindex;
    ctx.ingress_ifindex = ingress_ifindex;

    LIBBPF_OPTS(bpf_test_run_opts, opts);
    opts.data_in = data.data();
    opts.data_size_in = static_cast<__u32>(data.size());
    opts.data_out = out.data();
    opts.data_size_out = static_cast<__u32>(out.size());
    struct __sk_buff ctx_out;
    std::memset(&ctx_out, 0, sizeof ctx_out);
    opts.ctx_in = &ctx;
    opts.ctx_size_in = sizeof ctx;
    opts.ctx_out = &ctx_out;
    opts.ctx_size_out = sizeof ctx_out;
    opts.repeat = repeat;
    if (bpf_prog_test_run_opts(prog_fd_, &opts) != 0) {
        int err = errno;
        return make_error("BPF_PROG_TEST_RUN (tc) on prog fd " + std::to_string(prog_fd_) + " (ifindex " +
                          std::to_string(ingress_ifindex) + ", " + std::to_string(input.size()) +
                          " bytes): " + std::strerror(err));
    }
    XdpRunResult r;
    r.raw_retval = static_cast<int>(opts.retval);
    switch (r.raw_retval) {
        case TC_ACT_OK:
        case TC_ACT_UNSPEC: r.retval = XDP_PASS; break;
        case TC_ACT_SHOT: r.retval = XDP_DROP; break;
        // The pipeline marks a redirect back out of the ingress port.
        case TC_ACT_REDIRECT: r.retval = ctx_out.mark == SLUICE_TC_TX_MARK ? XDP_TX : XDP_REDIRECT; break;
        default: r.retval = 100 + r.raw_retval; break;  // no XDP verdict means it
    }
    r.duration_ns = opts.duration;
    out.resize(std::min<size_t>(opts.data_size_out, out.size()));
    r.output = std::move(out);
    return r;
}

Result<XdpRunResult> XdpRunner::run(const Bytes& input, uint32_t ingress_ifindex, int repeat) const {
    if (input.size() < kMinTestFrame) {
        // BPF_PROG_TEST_RUN refuses XDP frames shorter than ETH_HLEN, even
        // behind XDP metadata (checked on 6.18): such frames cannot be tested.
        return make_error("BPF_PROG_TEST_RUN cannot run a " + std::to_string(input.size()) +
                          "-byte frame (the kernel needs at least 14)");
    }
    if (hook_ == Hook::tc) return run_tc(input, ingress_ifindex, repeat);
    Bytes data = input;
    Bytes out(data.size() + 4096);
    struct xdp_md ctx;
    std::memset(&ctx, 0, sizeof ctx);
    ctx.data = 0;
    ctx.data_end = static_cast<__u32>(data.size());
    ctx.ingress_ifindex = ingress_ifindex;
    ctx.rx_queue_index = 0;

    LIBBPF_OPTS(bpf_test_run_opts, opts);
    opts.data_in = data.data();
    opts.data_size_in = static_cast<__u32>(data.size());
    opts.data_out = out.data();
    opts.data_size_out = static_cast<__u32>(out.size());
    opts.ctx_in = &ctx;
    opts.ctx_size_in = sizeof ctx;
    opts.repeat = repeat;

    if (bpf_prog_test_run_opts(prog_fd_, &opts) != 0) {
        int err = errno;
        return make_error("BPF_PROG_TEST_RUN on prog fd " + std::to_string(prog_fd_) +
                          " (ingress ifindex " + std::to_string(ingress_ifindex) + ", " +
                          std::to_string(input.size()) + " bytes): " + std::strerror(err));
    }
    XdpRunResult r;
    r.retval = static_cast<int>(opts.retval);
    r.raw_retval = r.retval;
    r.duration_ns = opts.duration;
    out.resize(std::min<size_t>(opts.data_size_out, out.size()));
    r.output = std::move(out);
    return r;
}

std::string summarize_frame(const Bytes& frame) {
    std::string err;
    auto f = parse_frame(frame, &err);
    if (!f) return "(" + std::to_string(frame.size()) + " bytes, unparsed: " + err + ")";
    std::ostringstream s;
    s << f->src.str() << " > " << f->dst.str();
    for (auto v : f->vlan_ids) s << " vlan " << v;
    if (f->ip_version == 0) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "%04x", f->ethertype);
        s << " ethertype 0x" << buf;
    } else {
        s << " IPv" << f->ip_version << " " << f->src_ip << " > " << f->dst_ip << " ttl "
          << int(f->ttl);
        if (f->is_fragment)
            s << " frag off " << f->frag_offset << (f->more_fragments ? " MF" : "");
        if (f->l4_present && (f->l4_proto == 6 || f->l4_proto == 17)) {
            s << (f->l4_proto == 6 ? " TCP " : " UDP ") << f->sport << " > " << f->dport;
            if (f->l4_proto == 6) {
                s << " [";
                const char* names = "FSRPAU";
                for (int i = 0; i < 6; ++i)
                    if (f->tcp_flags & (1 << i)) s << names[i];
                s << "] seq " << f->seq << " ack " << f->ack << " win " << f->tcp_window;
            }
        } else if (f->l4_present) {
            s << (f->l4_proto == 1 ? " ICMP" : " ICMPv6") << " type " << int(f->icmp_type) << " code "
              << int(f->icmp_code) << " id " << f->icmp_id << " seq " << f->icmp_seq;
        } else {
            s << " proto " << int(f->l4_proto);
        }
    }
    s << " (" << frame.size() << " bytes)";
    return s.str();
}

std::string hex_diff(const Bytes& expected, const Bytes& actual) {
    std::ostringstream s;
    s << "expected: " << summarize_frame(expected) << "\n";
    s << "actual:   " << summarize_frame(actual) << "\n";
    if (expected.size() != actual.size())
        s << "length differs: expected " << expected.size() << ", actual " << actual.size() << "\n";
    size_t n = std::max(expected.size(), actual.size());
    char buf[24];
    for (size_t row = 0; row < n; row += 16) {
        std::string e, a, mark;
        bool differs = false;
        for (size_t i = row; i < row + 16 && i < n; ++i) {
            bool he = i < expected.size(), ha = i < actual.size();
            std::snprintf(buf, sizeof buf, he ? "%02x " : "-- ", he ? expected[i] : 0);
            e += buf;
            std::snprintf(buf, sizeof buf, ha ? "%02x " : "-- ", ha ? actual[i] : 0);
            a += buf;
            bool d = !(he && ha && expected[i] == actual[i]);
            differs |= d;
            mark += d ? "^^ " : "   ";
        }
        std::snprintf(buf, sizeof buf, "%04zx", row);
        s << buf << " exp " << e << "\n     act " << a << "\n";
        if (differs) s << "         " << mark << "\n";
    }
    return s.str();
}

::testing::AssertionResult check_fixture(const XdpRunner& runner, const Fixture& fixture,
                                         XdpRunResult* result) {
    auto r = runner.run(fixture.input, fixture.ingress_ifindex);
    if (!r) return ::testing::AssertionFailure() << fixture.description << ": " << r.error().message;
    if (result) *result = r.value();
    const XdpRunResult& run = r.value();
    if (!runner.same_verdict(run.retval, fixture.expected_verdict)) {
        return ::testing::AssertionFailure()
               << fixture.description << " (" << hook_name(runner.hook()) << "): verdict "
               << xdp_verdict_name(run.retval) << ", expected "
               << xdp_verdict_name(fixture.expected_verdict) << "\ninput:  " << summarize_frame(fixture.input)
               << "\noutput: " << summarize_frame(run.output);
    }
    if (fixture.expected_output && *fixture.expected_output != run.output) {
        return ::testing::AssertionFailure() << fixture.description << ": output bytes differ ("
                                             << xdp_verdict_name(run.retval) << ")\n"
                                             << hex_diff(*fixture.expected_output, run.output);
    }
    return ::testing::AssertionSuccess();
}

}  // namespace sluice::test
