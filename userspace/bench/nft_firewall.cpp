#include "bench/nft_firewall.h"

#include <nlohmann/json.hpp>

#include <sstream>

namespace sluice::bench {

NftFirewall::NftFirewall(Lab& lab, std::string table, std::string node)
    : lab_(lab), table_(std::move(table)), node_(std::move(node)) {}

NftFirewall::~NftFirewall() {
    if (loaded_) (void)unload();
}

Status NftFirewall::load(const std::string& ruleset, const std::vector<std::string>& sysctls) {
    auto path = lab_.write_file("nft-ruleset.nft", ruleset);
    if (!path) return path.error();
    if (auto s = lab_.must(node_, {"nft", "-f", *path}); !s) return with_context("loading the nftables ruleset", s.error());
    loaded_ = true;
    for (const auto& kv : sysctls)
        if (auto s = lab_.must(node_, {"sysctl", "-qw", kv}); !s) return s;
    return {};
}

Status NftFirewall::unload() {
    if (!loaded_) return {};
    std::istringstream words(table_);
    std::vector<std::string> argv{"nft", "delete", "table"};
    for (std::string w; words >> w;) argv.push_back(w);
    auto s = lab_.must(node_, argv);
    loaded_ = false;
    if (!s) return s;
    // The next system starts from an empty conntrack table.
    return lab_.must(node_, {"conntrack", "-F"});
}

Result<uint64_t> nft_counter_packets(const std::string& text) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.contains("nftables")) return make_error("`nft -j list table` printed no nftables JSON");
    uint64_t sum = 0;
    for (const auto& item : j["nftables"]) {
        if (!item.contains("rule")) continue;
        for (const auto& e : item["rule"].value("expr", nlohmann::json::array()))
            if (e.contains("counter")) sum += e["counter"].value("packets", uint64_t{0});
    }
    return sum;
}

Result<uint64_t> NftFirewall::counted_packets() {
    std::istringstream words(table_);
    std::vector<std::string> argv{"nft", "-j", "list", "table"};
    for (std::string w; words >> w;) argv.push_back(w);
    auto out = lab_.output(node_, argv);
    if (!out) return out.error();
    return nft_counter_packets(*out);
}

Result<uint64_t> NftFirewall::conntrack_count() {
    auto out = lab_.output(node_, {"cat", "/proc/sys/net/netfilter/nf_conntrack_count"});
    if (!out) return out.error();
    try {
        return static_cast<uint64_t>(std::stoull(*out));
    } catch (...) {
        return make_error("nf_conntrack_count is not a number: " + *out);
    }
}

}  // namespace sluice::bench
