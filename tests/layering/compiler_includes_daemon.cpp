// Must not build (test_layering.sh): the compiler layer sees no header of the
// daemon layer above it.
#include "daemon/daemon.h"

int layering_probe_up() { return 0; }
