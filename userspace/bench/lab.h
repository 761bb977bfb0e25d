// The lab a benchmark runs in: one topology from cluster/topology.h, built
// with nothing started (`sluice cluster up --topology T --bare`), and every
// process the benchmark starts in it. The destructor stops those processes
// by PID (last started first) and takes the lab down (`cluster down`: sluice
// down in the firewall, namespaces, pins), also after an error or Ctrl-C.
#pragma once

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cluster/executor.h"
#include "cluster/netns_executor.h"
#include "common/result.h"

namespace sluice::bench {

class Lab {
public:
    // Builds topology `topology` under `prefix`; the sluice binary is the one
    // running (/proc/self/exe). Scratch files go to a fresh directory under /tmp.
    static Result<std::unique_ptr<Lab>> create(const std::string& topology, const std::string& prefix,
                                               std::ostream& log);
    ~Lab();
    Lab(const Lab&) = delete;
    Lab& operator=(const Lab&) = delete;

    const std::string& prefix() const { return prefix_; }
    std::string ns(const std::string& node) const;  // "P-fw"
    const std::string& tmp() const { return tmp_; }  // scratch directory, removed with the lab
    const std::string& sluice_binary() const { return sluice_; }

    // argv in node's namespace; "" node = this machine's namespace.
    Result<cluster::CommandResult> run(const std::string& node, const std::vector<std::string>& argv,
                                       std::chrono::seconds timeout = std::chrono::seconds(60));
    // As run, but a non-zero exit is an Error carrying the command's output;
    // returns its stdout.
    Result<std::string> output(const std::string& node, const std::vector<std::string>& argv,
                               std::chrono::seconds timeout = std::chrono::seconds(60));
    Status must(const std::string& node, const std::vector<std::string>& argv,
                std::chrono::seconds timeout = std::chrono::seconds(60));

    // Starts argv in node's namespace in the background (pinned to `cpu`
    // with taskset when cpu >= 0), output to tmp()/LOG_NAME.log. The PID
    // is stopped by stop() or by the destructor.
    Result<cluster::BackgroundProcess> start(const std::string& node, const std::vector<std::string>& argv,
                                             const std::string& log_name, int cpu = -1);
    // SIGTERM, SIGKILL after `grace`; forgets the PID.
    Status stop(const cluster::BackgroundProcess& process, std::chrono::seconds grace = std::chrono::seconds(5));
    // Whether a process this lab started is still running.
    bool running(const cluster::BackgroundProcess& process) const;

    // Writes `text` to tmp()/NAME and returns the path.
    Result<std::string> write_file(const std::string& name, const std::string& text) const;

private:
    Lab() = default;

    std::string prefix_, tmp_, sluice_;
    bool built_ = false;
    cluster::NetnsExecutor exec_;
    std::vector<cluster::BackgroundProcess> started_;
};

// The start of a config for the single-firewall lab: lan0 in zone trust,
// wan0 in untrust, and the LAN host's networks as address-book entry
// lan-net. A benchmark appends its applications and policies. With
// xdp_mode ("native", "tc", ...), both interfaces get that xdp-mode.
std::string lab_zones_config(const std::string& xdp_mode = "");

// The whole text of a file ("" when it cannot be read).
std::string read_text(const std::string& path);

}  // namespace sluice::bench
