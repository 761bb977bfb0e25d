// `sluice check` compiles the inspect patterns too: a regex hyperscan refuses
// is reported like every other config problem, and nothing is applied.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/check.h"

using sluice::cli::run_check;

namespace {
const std::string kDir = SLUICE_TEST_DATA_DIR "/configs/";
const std::string kBad = kDir + "bad-inspect-regex.yaml";
}  // namespace

TEST(InspectCheck, InvalidRegexesArePrintedAtTheirPosition) {
    std::ostringstream out, err;
    EXPECT_EQ(run_check(kBad, out, err, false), 1);
    EXPECT_EQ(out.str(), "");
    EXPECT_EQ(err.str(), kBad + ":28:36: inspect.rulesets.ctf.patterns[0].regex: invalid regex: "
                                "Missing close parenthesis for group started at index 1.\n" +
                             kBad + ":31:18: inspect.rulesets.ctf.patterns[2].regex: invalid regex: "
                                    "Back-references are unsupported.\n");
}

TEST(InspectCheck, InvalidRegexesInJson) {
    std::ostringstream out, err;
    EXPECT_EQ(run_check(kBad, out, err, true), 1);
    auto j = nlohmann::json::parse(out.str());
    EXPECT_EQ(j["valid"], false);
    ASSERT_EQ(j["errors"].size(), 2u);
    EXPECT_EQ(j["errors"][0]["line"], 28);
    EXPECT_EQ(j["errors"][0]["column"], 36);
    EXPECT_EQ(j["errors"][0]["path"], "inspect.rulesets.ctf.patterns[0].regex");
    EXPECT_EQ(j["errors"][0]["message"], "invalid regex: Missing close parenthesis for group started at index 1.");
    EXPECT_EQ(j["errors"][1]["line"], 31);
    EXPECT_EQ(j["errors"][1]["message"], "invalid regex: Back-references are unsupported.");
}

TEST(InspectCheck, OkLineCountsPatterns) {
    std::ostringstream out, err;
    EXPECT_EQ(run_check(kDir + "good-basic.yaml", out, err, false), 0);
    EXPECT_NE(out.str().find(", 2 inspect rulesets (2 patterns)\n"), std::string::npos) << out.str();

    std::ostringstream json_out;
    EXPECT_EQ(run_check(kDir + "good-basic.yaml", json_out, err, true), 0);
    auto j = nlohmann::json::parse(json_out.str());
    EXPECT_EQ(j["inspect_rulesets"], 2);
    EXPECT_EQ(j["inspect_patterns"], 2);
}
