// Where an instance keeps its state: pinned maps/programs on bpffs, and a
// state file under /run. Instances are per network namespace, so the same
// instance name in two namespaces (fw0 and fw1 of a local cluster) never
// collides.
#pragma once

#include <string>

#include "common/result.h"

namespace sluice {

struct InstancePaths {
    std::string pin_dir;     // bpffs: maps pinned by name, progs/ below
    std::string state_dir;   // /run/...: state.json
    std::string state_file() const { return state_dir + "/state.json"; }
    // The inspection stage's counters (shared memory, read by show inspect).
    std::string inspect_counters_file() const { return state_dir + "/inspect-counters"; }
};

// Prepares bpffs: under `ip netns exec` (a private mount namespace whose
// /sys/fs/bpf would vanish with the process) joins the parent's mount
// namespace; mounts bpffs if still absent. Must run before threads start.
Status prepare_bpffs();

// Moves this process into the named network namespace (/run/netns/NAME),
// keeping its mount namespace (and so the host's bpffs). Before threads start.
Status enter_netns(const std::string& name);

// The namespace part of paths: "" in the initial network namespace, else
// "netns/<name>" (the name `ip netns` knows it by) or "netns/<inode>".
std::string netns_label();

InstancePaths instance_paths(const std::string& instance);

// Removes dir and then each parent left empty, up to (not including) the
// top-level "sluice" folder, so no empty per-namespace folders remain.
Status remove_instance_dir(const std::string& dir);

}  // namespace sluice
