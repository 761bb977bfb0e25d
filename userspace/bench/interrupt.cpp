#include "bench/interrupt.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace sluice::bench {
namespace {

std::atomic<int> g_signal{0};

void record(int sig) {
    g_signal.store(sig);
}

}  // namespace

void catch_interrupts() {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = record;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

Status check_interrupted() {
    int sig = g_signal.load();
    if (sig == 0) return {};
    return make_error(std::string("interrupted by ") + strsignal(sig) + "; cleaning up");
}

Status pause(double seconds) {
    using Clock = std::chrono::steady_clock;
    auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (Clock::now() < until) {
        if (auto s = check_interrupted(); !s) return s;
        std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
    }
    return check_interrupted();
}

}  // namespace sluice::bench
