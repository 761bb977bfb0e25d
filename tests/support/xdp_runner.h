// Runs an XDP program on one frame with BPF_PROG_TEST_RUN, and checks a table
// of fixtures (Katran's tester idea): description, input frame, ingress
// interface, expected verdict, expected output bytes. The same runner runs a
// TC (SCHED_CLS) program, the pipeline's TC build, on the same fixtures: its
// verdict is reported as the XDP verdict that means the same (Hook::tc).
//
//   XdpRunner run(prog_fd);
//   auto r = run.run(frame, ns.lan().ifindex);       // {retval, output, duration}
//   EXPECT_TRUE(check_fixture(run, fixture));         // readable hex diff on mismatch
#pragma once

#include <gtest/gtest.h>
#include <linux/bpf.h>  // XDP_* verdicts

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "packet_builder.h"

namespace sluice::test {

// XDP_ABORTED..XDP_REDIRECT as text ("XDP_DROP"), or the number.
std::string xdp_verdict_name(int verdict);

// The hook a program was built for. On Hook::tc a run reports TC_ACT_OK and
// TC_ACT_UNSPEC (passed on to the next filter) as XDP_PASS, TC_ACT_SHOT as
// XDP_DROP, TC_ACT_REDIRECT as XDP_TX when the pipeline marked it as going
// back out of the ingress port (maps/tc_marks.h), else XDP_REDIRECT; a
// fixture that expects XDP_ABORTED accepts XDP_DROP (TC has no abort).
enum class Hook { xdp, tc };
const char* hook_name(Hook hook);

struct XdpRunResult {
    int retval = -1;          // the program's verdict (on TC: as the XDP verdict that means the same)
    int raw_retval = -1;      // the program's own return value
    Bytes output;             // the frame as the program left it
    uint32_t duration_ns = 0; // per run, as measured by the kernel
};

class XdpRunner {
public:
    explicit XdpRunner(int prog_fd, Hook hook = Hook::xdp) : prog_fd_(prog_fd), hook_(hook) {}

    // The kernel refuses XDP test frames shorter than an Ethernet header.
    static constexpr size_t kMinTestFrame = 14;

    // One run. `ingress_ifindex` must exist in the calling thread's namespace.
    Result<XdpRunResult> run(const Bytes& input, uint32_t ingress_ifindex, int repeat = 1) const;

    int prog_fd() const { return prog_fd_; }
    Hook hook() const { return hook_; }
    // Whether `verdict` (an XDP_* value) means what `expected` does on this hook.
    bool same_verdict(int verdict, int expected) const;

private:
    Result<XdpRunResult> run_tc(const Bytes& input, uint32_t ingress_ifindex, int repeat) const;

    int prog_fd_;
    Hook hook_ = Hook::xdp;
};

struct Fixture {
    std::string description;
    Bytes input;
    uint32_t ingress_ifindex = 0;
    int expected_verdict = 0;                  // XDP_* value
    std::optional<Bytes> expected_output;      // exact bytes, when the test knows them
};

// Byte diff: rows of 16 with the differing bytes marked, plus one-line
// summaries of both frames (parsed independently).
std::string hex_diff(const Bytes& expected, const Bytes& actual);

// One-line summary of a frame: "IPv4 a -> b TCP 1->2 [S] ttl 63 ...".
std::string summarize_frame(const Bytes& frame);

// Runs the fixture; on success *result (if given) holds the run.
::testing::AssertionResult check_fixture(const XdpRunner& runner, const Fixture& fixture,
                                         XdpRunResult* result = nullptr);

}  // namespace sluice::test
