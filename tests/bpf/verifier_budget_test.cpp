// The verifier's work per program against the budget recorded in
// bpf/verifier-budget.json. A change that makes a program much harder to
// verify (the 360k-instruction blow-up of xdp_zone_prog showed only as a slow
// load) fails here, naming the program, its count and its budget. Raising a
// budget is a deliberate edit of that file, committed with the change:
// SLUICE_UPDATE_VERIFIER_BUDGET=1 rewrites it from this kernel's counts plus
// 10% headroom.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "datapath_env.h"
#include "loader/datapath.h"

namespace sluice::test {
namespace {

const std::string kBudgetFile = SLUICE_SOURCE_DIR "/bpf/verifier-budget.json";

uint32_t verified_insns(int prog_fd) {
    bpf_prog_info info{};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0) return 0;
    return info.verified_insns;
}

TEST(VerifierBudget, EveryProgramStaysWithinItsBudget) {
    SLUICE_SKIP_WITHOUT_BPF();
    auto dp = Datapath::open(DatapathOptions{});
    ASSERT_TRUE(dp.ok()) << dp.error().message;

    std::map<std::string, uint32_t> counts;
    for (const std::string& name : dp.value()->program_names()) {
        const uint32_t n = verified_insns(dp.value()->prog_fd(name));
        ASSERT_GT(n, 0u) << name << ": the kernel reports no verified instruction count (needs Linux 5.16+)";
        counts[name] = n;
    }
    ASSERT_FALSE(counts.empty());

    if (const char* update = std::getenv("SLUICE_UPDATE_VERIFIER_BUDGET"); update && std::string(update) == "1") {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [name, n] : counts)
            out[name] = static_cast<uint32_t>(std::ceil(n * 1.10 / 100.0) * 100);  // 10% headroom, in hundreds
        std::ofstream(kBudgetFile) << out.dump(2) << "\n";
        std::cout << "wrote " << kBudgetFile << " from this kernel's counts\n";
    }

    std::ifstream in(kBudgetFile);
    ASSERT_TRUE(in) << kBudgetFile << " is missing (SLUICE_UPDATE_VERIFIER_BUDGET=1 writes it)";
    const nlohmann::json budget = nlohmann::json::parse(in);
    std::cout << "program                     verified  budget\n";
    for (const auto& [name, n] : counts) {
        const uint32_t limit = budget.contains(name) ? budget[name].get<uint32_t>() : 0;
        std::printf("%-26s %9u %7u\n", name.c_str(), n, limit);
        EXPECT_TRUE(budget.contains(name)) << name << " has no budget in " << kBudgetFile
                                           << ": add one (SLUICE_UPDATE_VERIFIER_BUDGET=1)";
        if (budget.contains(name)) {
            EXPECT_LE(n, limit) << name << ": the verifier walked " << n << " instructions, past its budget of "
                                << limit << " (" << kBudgetFile
                                << "). Find what made it harder (bpftool prog show; a new branch doubling the "
                                   "states?), or raise the budget on purpose.";
        }
    }
    for (const auto& [name, value] : budget.items())
        EXPECT_TRUE(counts.count(name)) << kBudgetFile << " names " << name << ", which the object no longer has";
}

}  // namespace
}  // namespace sluice::test
