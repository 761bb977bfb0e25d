// trafgen (netsniff-ng) sending from one lab node: the SYN flood of `sluice
// bench synflood` (spoofed-source SYNs, as fast as one core goes), and the
// process handling `sluice bench smallpkt` drives its UDP flows with too
// (smallpkt_trafgen.h).
//
// trafgen's sending processes are children of the one started, and they only
// stop when their whole process group is signalled. So the flood runs in a
// session of its own (setsid: its PID is its process group's ID) and is
// stopped through that group — SIGINT, then SIGKILL to what is left — never
// by name. The PID is reaped only after the group was killed, so it cannot
// be reused while we still signal it.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/lab.h"
#include "common/result.h"

namespace sluice::bench {

// One spoofed SYN as trafgen builds it: Ethernet to `destination_mac` from
// `source_mac`; IPv4 from source_net.x.y (x.y random per packet), TTL 64, DF,
// random id; TCP from a random port to `port`, random sequence number, SYN,
// window 64240, no options.
struct SynPacketSpec {
    std::string destination_mac;                 // the firewall's interface ("aa:bb:cc:dd:ee:ff")
    std::string source_mac;                      // the flooding host's interface
    std::array<uint8_t, 2> source_net{198, 19};  // spoofed sources: 198.19.0.0/16
    std::string destination = "198.18.1.10";     // a permitted service behind the firewall
    uint16_t port = 5301;
};

// The trafgen configuration (trafgen(8) packet syntax) for the spec, or an
// Error when a MAC or the address does not parse.
Result<std::string> trafgen_syn_config(const SynPacketSpec& spec);

// The six bytes of "aa:bb:cc:dd:ee:ff" (as `ip` prints a MAC), or an Error.
Result<std::array<uint8_t, 6>> parse_mac(const std::string& mac);

// The argv that runs trafgen with `config_path` on `dev`: one sending CPU,
// leaving socket memory and IRQ affinity alone, no CPU statistics; with
// rate_pps > 0, at that many packets per second (`--rate Npps`), else as
// fast as it goes.
std::vector<std::string> trafgen_argv(const std::string& dev, const std::string& config_path, uint64_t rate_pps = 0);

class TrafgenFlood {
public:
    // Starts `ip netns exec NETNS trafgen ...` (trafgen_argv) in a new
    // session, output to log_path. Ok once trafgen itself is running (exec
    // succeeded).
    static Result<std::unique_ptr<TrafgenFlood>> start(const std::string& netns, const std::string& dev,
                                                       const std::string& config_path, const std::string& log_path,
                                                       uint64_t rate_pps = 0);
    // Any argv in a new session, held and stopped the same way (start() is
    // this with `ip netns exec NETNS trafgen ...`; the tests use it too).
    static Result<std::unique_ptr<TrafgenFlood>> start_argv(std::vector<std::string> argv, const std::string& log_path);
    ~TrafgenFlood();  // stop()
    TrafgenFlood(const TrafgenFlood&) = delete;
    TrafgenFlood& operator=(const TrafgenFlood&) = delete;

    // Whether trafgen (the group's leader) is still running.
    bool running();
    // SIGINT to the process group, up to 2 s for trafgen to exit, SIGKILL to
    // the group, then trafgen is reaped. Idempotent.
    Status stop();
    pid_t pgid() const { return pid_; }
    std::string log() const;

private:
    TrafgenFlood() = default;
    pid_t pid_ = 0;  // the session's and process group's leader
    bool reaped_ = false;
    std::string log_path_;
};

}  // namespace sluice::bench
