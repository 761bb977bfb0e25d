// Keeping the calling thread on one CPU. BPF_PROG_TEST_RUN runs on its
// caller's CPU, and the datapath keeps per-CPU state (scratch, the flow
// cache, counters): a caller that reads what one run left, or runs a second
// packet expecting the first one's state, must not move in between. A
// benchmark keeps its own commands off the CPU its traffic runs on.
#pragma once

#include <sched.h>

#include <memory>

#include "common/result.h"

namespace sluice {

// The calling thread on `cpu` from now on.
Status pin_to_cpu(int cpu);

// The calling thread on the CPU it runs on now, from now on.
Status pin_to_current_cpu();

// The calling thread on one CPU while this lives, on the CPUs it had before
// when it goes. Threads and processes started meanwhile inherit the one CPU.
class CpuPin {
public:
    static Result<std::unique_ptr<CpuPin>> to(int cpu);
    ~CpuPin();
    CpuPin(const CpuPin&) = delete;
    CpuPin& operator=(const CpuPin&) = delete;

private:
    explicit CpuPin(const cpu_set_t& before) : before_(before) {}
    cpu_set_t before_;
};

}  // namespace sluice
