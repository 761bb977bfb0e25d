// The pinned layout's version (SLUICE_ABI_VERSION, maps/abi.h) travels with
// the pins: an empty directory `abi-<N>` beside them (bpffs holds pins and
// directories, no files). A daemon that finds pins of another version, or
// pins without a version, refuses them before libbpf reuses a single map,
// since reading another layout as its own would be undefined behaviour.
#pragma once

#include <string>

#include "common/result.h"

namespace sluice {

// The marker's name for this build: "abi-<SLUICE_ABI_VERSION>".
std::string pin_abi_marker();

// Ok when `pin_dir` holds no pins or pins of this ABI. Else an Error (code
// Incompatible) naming the version found and what to do.
Status check_pin_abi(const std::string& pin_dir);

// Marks `pin_dir`'s pins as this ABI's (after a successful load).
Status record_pin_abi(const std::string& pin_dir);

}  // namespace sluice
