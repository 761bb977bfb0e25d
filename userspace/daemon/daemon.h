// `sluice run`: load, attach, then serve until SIGTERM: the control socket,
// signals (SIGHUP reloads), session GC, the netlink watcher. A small
// composition of parts with one job each (daemon.cpp "Parts"): the datapath,
// InterfaceAttachments, InspectionHost, NatAddressSync, ConfigApplier, the
// state publisher and SessionGc. Everything it prints goes to stderr.
#pragma once

#include <string>

namespace sluice {

struct RunOptions {
    std::string config_path;
    std::string instance = "default";
    std::string node;   // --node: which node of the ha: pair (docs/ha.md)
};

// Returns the process exit status.
int run_daemon(const RunOptions& options);

}  // namespace sluice
