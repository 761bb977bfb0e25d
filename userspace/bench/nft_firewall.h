// nftables as a benchmark's comparison system, in the lab's firewall
// namespace: a ruleset loaded with `nft -f -`, its counters read from
// `nft -j list table` (the proof it was in the path), removed again with the
// conntrack table flushed, so the next system starts from nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/lab.h"
#include "common/result.h"

namespace sluice::bench {

class NftFirewall {
public:
    // `table` as nft names it: "inet bench".
    NftFirewall(Lab& lab, std::string table = "inet bench", std::string node = "fw");
    ~NftFirewall();

    // Loads `ruleset` (which must create `table`) and sets `sysctls`
    // ("net.netfilter.nf_conntrack_tcp_loose=0") after it.
    Status load(const std::string& ruleset, const std::vector<std::string>& sysctls = {});
    // Deletes the table and flushes conntrack.
    Status unload();
    bool loaded() const { return loaded_; }
    // The packets every `counter` of the table has counted.
    Result<uint64_t> counted_packets();
    // nf_conntrack_count in the namespace.
    Result<uint64_t> conntrack_count();

private:
    Lab& lab_;
    std::string table_, node_;
    bool loaded_ = false;
};

// Sum of the "counter" packets in `nft -j list table` output.
Result<uint64_t> nft_counter_packets(const std::string& nft_json);

}  // namespace sluice::bench
