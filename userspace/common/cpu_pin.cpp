#include "common/cpu_pin.h"

#include <cerrno>
#include <string>

namespace sluice {

Status pin_to_cpu(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return errno_error("sched_setaffinity to CPU " + std::to_string(cpu), errno);
    return {};
}

Status pin_to_current_cpu() {
    const int cpu = sched_getcpu();
    if (cpu < 0) return errno_error("sched_getcpu", errno);
    return pin_to_cpu(cpu);
}

Result<std::unique_ptr<CpuPin>> CpuPin::to(int cpu) {
    cpu_set_t before;
    if (sched_getaffinity(0, sizeof before, &before) != 0) return errno_error("sched_getaffinity", errno);
    if (auto s = pin_to_cpu(cpu); !s) return s.error();
    return std::unique_ptr<CpuPin>(new CpuPin(before));
}

CpuPin::~CpuPin() {
    (void)sched_setaffinity(0, sizeof before_, &before_);
}

}  // namespace sluice
