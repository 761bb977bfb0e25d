// Sizing the session maps (sessions_v4, sessions_v6) from `limits.sessions`
// before the BPF object is loaded. A pinned map keeps the size it was created
// with (the kernel cannot resize a hash map, and libbpf refuses to reuse a
// pin whose size differs), so a mismatch is reported here, in words an
// operator can act on, instead of as libbpf's "couldn't reuse pinned map".
#pragma once

#include <bpf/libbpf.h>

#include <cstdint>
#include <string>

#include "common/result.h"

namespace sluice {

// Sets both session maps of the opened (not yet loaded) `obj` to hold
// `sessions` flows per family. With a pin directory, first checks any
// sessions_v4/v6 pinned there: one of another size is an error that names
// both sizes, `origin` (where the asked-for size comes from) and the way to
// resize (`sluice down`, then `sluice run`).
Status size_session_maps(bpf_object* obj, uint32_t sessions, const std::string& pin_dir,
                         const std::string& origin = "limits.sessions");

// Caps max_entries of every hash map other than the session table at `cap`
// (DatapathOptions::state_map_cap); 0 or a pin directory: nothing changes
// (pins keep the sizes they were made with).
Status cap_state_maps(bpf_object* obj, uint32_t cap, const std::string& pin_dir);

// max_entries of the map behind fd (bpf_map_info).
Result<uint32_t> map_max_entries(int fd);

// The size of an instance's pinned session table in sessions (flows) per
// family, read from its pinned sessions_v4.
Result<uint32_t> pinned_session_capacity(const std::string& pin_dir);

}  // namespace sluice
