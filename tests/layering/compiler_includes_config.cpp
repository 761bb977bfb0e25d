// Control for test_layering.sh: the compiler layer may include the config
// layer below it, so this builds.
#include "config/config.h"

int layering_probe_down() { return static_cast<int>(sizeof(sluice::config::Config)); }
