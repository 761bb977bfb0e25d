// The kernel's own CPU accounting, from /proc/stat: how much of the
// machine's time went to what between two readings. Its unit is USER_HZ
// (sysconf(_SC_CLK_TCK), 100 on Linux); without CONFIG_IRQ_TIME_ACCOUNTING
// the kernel fills it by sampling at every timer tick what the CPU is doing
// (user, system, softirq, idle...), so a share is exact on average and its
// spread shrinks with the number of ticks in the interval.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace sluice::bench {

// The "cpu " line of /proc/stat (the sum over every CPU), in USER_HZ ticks:
// total = user..steal, idle = idle + iowait; cpus = the "cpuN" lines. On a
// tickless kernel (NO_HZ) idle and iowait are clocked, not sampled (the
// kernel reads them from its idle-time bookkeeping), while user, system and
// softirq are tick samples: so wall time x cpus - idle is the busy time to
// USER_HZ's resolution, and busy from the sampled fields is not.
struct CpuSample {
    uint64_t total = 0, idle = 0, softirq = 0;
    int cpus = 0;
};
Result<CpuSample> parse_cpu_sample(const std::string& proc_stat);

// The whole machine's busy and softirq shares between two samples, percent
// rounded to 0.1 (0 when no time passed).
struct CpuShare {
    double busy_percent = 0, softirq_percent = 0;
};
CpuShare cpu_share(const CpuSample& before, const CpuSample& after);

}  // namespace sluice::bench
