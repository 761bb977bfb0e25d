// The loaded datapath: the BPF object with its maps (reused from pins when an
// earlier run left them, so sessions survive a restart) and the operations the
// controller performs on it. The one place that turns a CompiledConfig into
// map writes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "compiler/compiled_config.h"
#include "config/session_table_size.h"
#include "loader/bpf_object.h"

namespace sluice {

struct DatapathOptions {
    // bpffs directory for the maps (created if needed). Empty: nothing is
    // pinned (tests and benchmarks).
    std::string pin_dir;
    // Session table size (limits.sessions): flows per address family; the
    // maps get two entries per flow. Pinned maps of another size are refused.
    uint32_t sessions = config::kDefaultSessions;
    // Where that size came from, for the error about a pinned table of
    // another size ("fw.yaml:21:3 limits.sessions").
    std::string sessions_origin = "limits.sessions";
    // Largest max_entries of every hash map but the session table (NAT port
    // reservations, per-address limits, fragments, host flows, and the
    // classifier's sparse table); 0 keeps the sizes the BPF object declares.
    // The kernel fills a preallocated map and zeroes a hash map's buckets at
    // creation, which is most of what opening a datapath costs: the BPF tests
    // open hundreds and set this. sluice never does.
    uint32_t state_map_cap = 0;
};

// An interface as the kernel knows it, resolved from a CompiledInterface.
struct ResolvedInterface {
    std::string name;
    uint32_t ifindex = 0;          // the device XDP attaches to (the parent for VLANs)
    uint32_t vlan_ifindex = 0;     // the VLAN device itself, when it exists
    uint16_t vlan_id = 0;
    uint16_t zone_id = 0;
    uint16_t filter_id = 0;        // stateless filter on its ingress, 0 = none
    std::string xdp_mode;
    uint8_t ha_group = 0;          // redundancy group, 0 = none (maps/ha.h)
};

class Datapath {
public:
    static Result<std::unique_ptr<Datapath>> open(const DatapathOptions& options);

    int map_fd(std::string_view name) const;
    // A program of either build (XDP: xdp_*_prog and the two TC programs;
    // the TC build, once loaded: tc_main_prog and its stages), or -1.
    int prog_fd(std::string_view name) const;
    // Loads the TC build of the pipeline (the `tc` mode) on first use: the
    // same maps, by fd, but for its own tail-call table, which it fills.
    // Interfaces that do not use `tc` never pay for its verification.
    Status load_tc();
    bool tc_loaded() const { return tc_skel_ != nullptr; }
    // Whether XDP hands punted packets to TC in the metadata area (the
    // kernel lets XDP call bpf_xdp_adjust_meta). Without it the hand-off is
    // a per-CPU slot, sound for generic XDP and tc but not for native XDP,
    // which runs a batch of frames before TC sees the first.
    bool xdp_handoff_in_meta() const { return xdp_handoff_in_meta_; }
    // Every program of the objects loaded, by name.
    std::vector<std::string> program_names() const;
    const std::string& pin_dir() const { return pin_dir_; }
    // Flows per family the loaded session maps hold (set at open, fixed after).
    uint32_t session_capacity() const;

    // The policy generation a new config must be compiled for (the inactive one).
    uint8_t inactive_generation() const;

    // Resolves every interface of the config in the current network namespace.
    static Result<std::vector<ResolvedInterface>> resolve(const CompiledConfig& config);

    // Writes a config compiled for inactive_generation(), then makes it
    // active with one write, and points the tail calls at this process's
    // programs. On error the running config stays in force.
    Status apply(const CompiledConfig& config, const std::vector<ResolvedInterface>& interfaces);

    // Invalidates every cached FIB result (routes or neighbours changed).
    Status bump_fib_generation();

    // Pins the programs under pin_dir/progs (replacing older pins).
    Status pin_programs() const;

private:
    Datapath() = default;
    Status wire_jump_table();
    Status wire_tc_jump_table();

    SkeletonPtr skel_;
    TcSkeletonPtr tc_skel_;
    std::string pin_dir_;
    bool xdp_handoff_in_meta_ = true;
};

// Removes an instance's pins (maps and programs).
Status remove_pins(const std::string& pin_dir);

}  // namespace sluice
