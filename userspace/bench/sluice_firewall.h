// sluice as a benchmark's system under test: started on the lab's firewall
// node with a config, proven attached, its counters read for before/after
// deltas, reloaded, stopped and proven detached. All through the sluice
// binary's own commands (`run`, `reload`, `show ... --json`, `down`), as an
// operator would drive it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/lab.h"
#include "common/result.h"

namespace sluice::bench {

// `sluice show stats --json` counters, and what moved between two readings.
using Counters = std::map<std::string, uint64_t>;
Counters counter_delta(const Counters& before, const Counters& after);
// Sum of the counters whose name starts with `prefix` ("pass-", "drop-").
uint64_t sum_prefixed(const Counters& counters, const std::string& prefix);
// "drop-x=3,pass-y=2" for the non-zero counters with these prefixes, largest first.
std::string nonzero_summary(const Counters& counters, const std::vector<std::string>& prefixes,
                            size_t max_chars = 200);

class SluiceFirewall {
public:
    SluiceFirewall(Lab& lab, std::string node = "fw", std::vector<std::string> interfaces = {"lan0", "wan0"});
    ~SluiceFirewall();

    // `sluice check -c CONFIG`: an Error with check's output when it refuses.
    Status check(const std::string& config_path);
    // Starts `sluice --netns NS run -c CONFIG` (pinned to cpu when >= 0) and
    // waits for "running (pid N)" (up to 60 s) and sluice's XDP program on
    // every interface. attach_summary() and started_in() describe the start.
    // `run_args` go after `run -c CONFIG` (e.g. {"--node", "fw0"}).
    Status start(const std::string& config_path, int cpu = -1, const std::vector<std::string>& run_args = {});
    // `sluice --netns NS reload` after the config file changed; seconds taken.
    Result<double> reload();
    // Stops the daemon by PID, runs `sluice down` and proves no XDP program
    // is left on the interfaces.
    Status stop();
    bool running() const { return process_.has_value(); }
    // A crash: SIGKILL, nothing cleaned up (programs stay attached, pins
    // stay; the lab's teardown removes them). The daemon is forgotten.
    Status kill_hard();
    // The daemon's PID (0 when not running), e.g. to SIGSTOP it.
    int pid() const { return process_ ? process_->pid : 0; }

    Result<Counters> stats();
    // `sluice --netns NS show WHAT --json`, parsed.
    Result<nlohmann::json> show(const std::string& what);
    // Ok when sluice's XDP program is on every interface.
    Status attached();

    const std::string& attach_summary() const { return attach_summary_; }
    double started_in() const { return started_in_; }
    std::string log_tail(size_t lines = 30) const;

private:
    Lab& lab_;
    std::string node_;
    std::vector<std::string> interfaces_;
    std::optional<cluster::BackgroundProcess> process_;
    std::string attach_summary_;
    double started_in_ = 0;
    std::string log_path_;
};

// Ok when no XDP program at all, nor sluice's TC pipeline, is attached to
// `interfaces` on `node`: what a kernel-forwarding or nftables measurement
// must see.
Status verify_no_pipeline(Lab& lab, const std::string& node, const std::vector<std::string>& interfaces);

}  // namespace sluice::bench
