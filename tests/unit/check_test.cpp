// `sluice check -c FILE`: output and exit status, plain and --json.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli/check.h"

using sluice::cli::run_check;

namespace {
const std::string kDir = SLUICE_TEST_DATA_DIR "/configs/";
}

TEST(Check, GoodFilePrintsSummaryAndExitsZero) {
    std::ostringstream out, err;
    EXPECT_EQ(run_check(kDir + "good-basic.yaml", out, err, false), 0);
    EXPECT_EQ(err.str(), "");
    const std::string text = out.str();
    const auto newline = text.find('\n');
    ASSERT_NE(newline, std::string::npos);
    EXPECT_EQ(text.substr(0, newline + 1),
              kDir + "good-basic.yaml: ok: 3 interfaces, 3 zones, 3 address-book entries, "
                     "5 applications, 4 policies (default deny), 1 filter (2 rules), 5 NAT rules, "
                     "2 inspect rulesets (2 patterns)\n");
    // The second line: compile time and classifier memory (4 policies + 2 filter rules).
    const auto second_end = text.find('\n', newline + 1);
    ASSERT_NE(second_end, std::string::npos);
    EXPECT_TRUE(std::regex_match(text.substr(newline + 1, second_end - newline),
                                 std::regex(".*good-basic.yaml: compiled in [0-9.]+ ms; classifier tables "
                                            "[0-9.]+ (KiB|MiB) per generation \\(6 rules, [0-9]+ of [0-9]+ "
                                            "cross-product entries, [0-9]+ distinct outcomes\\)\n")))
        << text;
    // The third: the session table limits.sessions asks for and its memory
    // (65536 x 944 bytes, both families); then where each interface's
    // pipeline would run (lan0 and wan0 are not on the test's host).
    EXPECT_EQ(text.substr(second_end + 1),
              kDir + "good-basic.yaml: session table 65536 sessions per family, 131072 entries each in IPv4 and "
                     "IPv6; about 59.0 MiB of kernel memory (estimate)\n" +
                  kDir + "good-basic.yaml: attach lan0: not on this host: decided when it is attached (xdp-mode: auto)\n" +
                  kDir + "good-basic.yaml: attach wan0: not on this host: decided when it is attached (xdp-mode: generic)\n");
}

TEST(Check, DefaultSessionTableIsSaidToBeTheDefault) {
    const std::string path = testing::TempDir() + "check-default-limits.yaml";
    {
        std::ofstream f(path);
        f << "interfaces: { lan0: { zone: trust } }\nzones: { trust: {} }\n";
    }
    std::ostringstream out, err, json_out;
    EXPECT_EQ(run_check(path, out, err, false), 0) << err.str();
    EXPECT_NE(out.str().find(path + ": session table 131072 sessions per family (default), 262144 entries each in "
                                    "IPv4 and IPv6; about 118.0 MiB of kernel memory (estimate)\n"),
              std::string::npos)
        << out.str();
    EXPECT_EQ(run_check(path, json_out, err, true), 0);
    auto j = nlohmann::json::parse(json_out.str());
    EXPECT_EQ(j["session_table"]["default"], true);
    EXPECT_EQ(j["session_table"]["sessions_per_family"], 131072);
    std::remove(path.c_str());
}

TEST(Check, GoodFileJson) {
    std::ostringstream out, err;
    EXPECT_EQ(run_check(kDir + "good-basic.yaml", out, err, true), 0);
    auto j = nlohmann::json::parse(out.str());
    EXPECT_EQ(j["valid"], true);
    EXPECT_EQ(j["zones"], 3);
    EXPECT_EQ(j["policies"], 4);
    EXPECT_EQ(j["default_action"], "deny");
    EXPECT_EQ(j["filter_rules"], 2);
    EXPECT_GE(j["compile_ms"].get<double>(), 0.0);
    // At least the two port-class arrays of a generation: 2 x 5 x 65536 x 4 bytes.
    EXPECT_GE(j["classifier_bytes"].get<uint64_t>(), 2u * 5 * 65536 * 4);
    EXPECT_EQ(j["classifier"]["rules"], 6);
    EXPECT_EQ(j["session_table"]["sessions_per_family"], 65536);
    EXPECT_EQ(j["session_table"]["entries_per_family"], 131072);
    EXPECT_EQ(j["session_table"]["bytes_estimate"], 65536u * 944);
    EXPECT_EQ(j["session_table"]["default"], false);
}

TEST(Check, BadFilePrintsEveryErrorAndExitsOne) {
    std::ostringstream out, err;
    EXPECT_EQ(run_check(kDir + "bad-multiple-errors.yaml", out, err, false), 1);
    EXPECT_EQ(out.str(), "");
    std::string text = err.str();
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5);
    EXPECT_NE(text.find(kDir + "bad-multiple-errors.yaml:17:18: policies[0].application: unknown application \"htp\" "
                               "(did you mean \"http\"?)\n"),
              std::string::npos);
}

TEST(Check, BadFileJsonListsErrors) {
    std::ostringstream out, err;
    EXPECT_EQ(run_check(kDir + "bad-unknown-application.yaml", out, err, true), 1);
    auto j = nlohmann::json::parse(out.str());
    EXPECT_EQ(j["valid"], false);
    ASSERT_EQ(j["errors"].size(), 1u);
    EXPECT_EQ(j["errors"][0]["line"], 14);
    EXPECT_EQ(j["errors"][0]["column"], 25);
    EXPECT_EQ(j["errors"][0]["path"], "policies[0].application[1]");
    EXPECT_EQ(j["errors"][0]["message"], "unknown application \"htp\" (did you mean \"http\"?)");
}

TEST(Check, MissingFileExitsOne) {
    std::ostringstream out, err;
    EXPECT_EQ(run_check("/nonexistent/fw.yaml", out, err, false), 1);
    EXPECT_EQ(err.str(), "/nonexistent/fw.yaml: cannot read config file: No such file or directory\n");
}

// An error only the compiler finds (here: a packet could be counted by more
// filter rules than the datapath counts) keeps its file position.
TEST(Check, CompileStageErrorKeepsItsLine) {
    const std::string path = testing::TempDir() + "check-compile-stage.yaml";
    {
        std::ofstream f(path);
        f << "interfaces: { lan0: { zone: trust, filter: f } }\nzones: { trust: {} }\nfilters:\n  f:\n";
        for (int i = 0; i < 7; ++i) f << "    - { name: c" << i << ", protocol: udp, action: count }\n";
    }
    std::ostringstream out, err;
    EXPECT_EQ(run_check(path, out, err, true), 1);
    auto j = nlohmann::json::parse(out.str());
    ASSERT_EQ(j["errors"].size(), 1u) << out.str();
    EXPECT_EQ(j["errors"][0]["file"], path);
    EXPECT_EQ(j["errors"][0]["line"], 11);
    EXPECT_GT(j["errors"][0]["column"].get<int>(), 0);
    EXPECT_NE(j["errors"][0]["message"].get<std::string>().find("filters.f[6] \"c6\": a packet can match this rule"),
              std::string::npos)
        << out.str();
    std::ostringstream text_out, text_err;
    EXPECT_EQ(run_check(path, text_out, text_err, false), 1);
    EXPECT_EQ(text_err.str().rfind(path + ":11:", 0), 0u) << text_err.str();
    std::remove(path.c_str());
}
