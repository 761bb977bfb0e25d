// Ctrl-C, SIGTERM and SIGHUP during a benchmark: the handler only records the
// signal; the harness checks between steps and unwinds with an Error, so the
// lab's destructor stops every process and removes the topology (a benchmark
// never leaves namespaces, pins or processes behind).
#pragma once

#include "common/result.h"

namespace sluice::bench {

// Installs the handlers (idempotent).
void catch_interrupts();

// Ok, or an Error naming the signal that arrived.
Status check_interrupted();

// Sleeps `seconds`, waking every 50 ms for a signal: an Error when one came.
Status pause(double seconds);

}  // namespace sluice::bench
