#include "bench/interrupt.h"

#include <signal.h>

#include <atomic>
#include <cstring>
#include <string>

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

}  // namespace sluice::bench
