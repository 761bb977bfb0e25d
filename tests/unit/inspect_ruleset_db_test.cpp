// Config rulesets compiled into per-direction hyperscan databases, and the
// diagnostics an operator gets for regexes hyperscan refuses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/load_config.h"
#include "inspect/ruleset_db.h"

using namespace sluice;
using namespace sluice::inspect;

namespace {

// A minimal valid config with an inspect policy and the given inspect: section.
std::string config_with(const std::string& inspect) {
    return "interfaces:\n"
           "  lan0: { zone: trust }\n"
           "  wan0: { zone: untrust }\n"
           "zones:\n"
           "  trust: {}\n"
           "  untrust: {}\n"
           "policies:\n"
           "  - { name: out, from: trust, to: untrust, action: { inspect: first } }\n" +
           inspect;
}

config::Config load(const std::string& text) {
    config::LoadResult loaded = config::parse_config(text, "fw.yaml");
    for (const auto& d : loaded.diagnostics) ADD_FAILURE() << config::format_diagnostic(d);
    return loaded.config.value_or(config::Config{});
}

std::vector<std::string> formatted(const std::vector<config::Diagnostic>& problems) {
    std::vector<std::string> out;
    for (const auto& d : problems) out.push_back(config::format_diagnostic(d));
    return out;
}

}  // namespace

TEST(InspectRulesetDb, RulesetsKeepFileOrderIdsAndPatternOrder) {
    config::Config config = load(config_with(
        "inspect:\n"
        "  rulesets:\n"
        "    first:\n"
        "      fail-mode: open\n"
        "      inspect-bytes: 64KiB\n"
        "      patterns:\n"
        "        - { name: probe, regex: 'GET /admin', direction: client-to-server, action: alert }\n"
        "        - { name: leak, regex: 'flag\\{', direction: server-to-client, action: reject, caseless: true }\n"
        "    second:\n"
        "      patterns:\n"
        "        - { name: evil, regex: 'evil', action: drop }\n"));
    std::vector<config::Diagnostic> problems;
    auto compiled = compile_rulesets(config, problems);
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    EXPECT_TRUE(problems.empty());
    ASSERT_EQ(compiled->rulesets.size(), 2u);
    EXPECT_EQ(compiled->pattern_count(), 3u);

    auto first = compiled->find(config.ruleset_id("first"));
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->name, "first");
    EXPECT_EQ(first->id, 1);
    EXPECT_FALSE(first->fail_closed);
    EXPECT_EQ(first->inspect_bytes, 64u * 1024);
    ASSERT_EQ(first->patterns.size(), 2u);
    EXPECT_EQ(first->patterns[0].name, "probe");
    EXPECT_EQ(first->patterns[0].action, Action::alert);
    EXPECT_EQ(first->patterns[1].name, "leak");
    EXPECT_EQ(first->patterns[1].action, Action::reject);
    EXPECT_EQ(first->client_to_server->pattern_ids(), std::vector<uint32_t>{0});
    EXPECT_EQ(first->server_to_client->pattern_ids(), std::vector<uint32_t>{1});
    EXPECT_GT(first->client_to_server->stream_size(), 0u);

    auto second = compiled->find(2);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(second->name, "second");
    EXPECT_TRUE(second->fail_closed);
    EXPECT_EQ(second->inspect_bytes, std::nullopt);
    EXPECT_EQ(second->patterns[0].action, Action::drop);
    // direction omitted = both.
    EXPECT_EQ(second->client_to_server->pattern_ids(), std::vector<uint32_t>{0});
    EXPECT_EQ(second->server_to_client->pattern_ids(), std::vector<uint32_t>{0});

    EXPECT_EQ(compiled->find(0), nullptr);
    EXPECT_EQ(compiled->find(3), nullptr);
}

TEST(InspectRulesetDb, EveryInvalidRegexIsReportedAtItsRegex) {
    // config_with() ends on line 8: the first pattern is on line 13.
    config::Config config = load(config_with(
        "inspect:\n"
        "  rulesets:\n"
        "    first:\n"
        "      patterns:\n"
        "        - { name: unclosed, regex: 'a(bc', action: reject }\n"
        "        - { name: fine, regex: 'fine', action: alert }\n"
        "        - name: lookbehind\n"
        "          regex: '(?<=a)b'\n"
        "          action: drop\n"
        "    second:\n"
        "      patterns:\n"
        "        - { name: empty-match, regex: 'x*', action: alert }\n"
        "        - { name: backref, regex: '(a)\\1', direction: server-to-client, action: alert }\n"));
    std::vector<config::Diagnostic> problems;
    auto compiled = compile_rulesets(config, problems);
    ASSERT_FALSE(compiled.ok());
    const std::vector<std::string> expected = {
        "fw.yaml:13:36: inspect.rulesets.first.patterns[0].regex: invalid regex: "
        "Missing close parenthesis for group started at index 1.",
        "fw.yaml:16:18: inspect.rulesets.first.patterns[2].regex: invalid regex: "
        "Zero-width assertions are not supported.",
        "fw.yaml:20:39: inspect.rulesets.second.patterns[0].regex: invalid regex: "
        "the pattern matches the empty string, so it would match every flow at once; make it need at least one "
        "byte (e.g. 'x+' instead of 'x*')",
        "fw.yaml:21:35: inspect.rulesets.second.patterns[1].regex: invalid regex: "
        "Back-references are unsupported.",
    };
    EXPECT_EQ(formatted(problems), expected);
    // The error carries the same lines, for callers that only look at the Result.
    EXPECT_EQ(compiled.error().message, expected[0] + "\n" + expected[1] + "\n" + expected[2] + "\n" + expected[3]);
}

TEST(InspectRulesetDb, ProblemsAreAppendedToThoseAlreadyFound) {
    config::Config config = load(config_with(
        "inspect:\n"
        "  rulesets:\n"
        "    first:\n"
        "      patterns:\n"
        "        - { name: bad, regex: '[z-a]', action: reject }\n"));
    std::vector<config::Diagnostic> problems = {{"fw.yaml", {1, 1}, "interfaces", "an earlier problem"}};
    auto compiled = compile_rulesets(config, problems);
    ASSERT_FALSE(compiled.ok());
    ASSERT_EQ(problems.size(), 2u);
    EXPECT_EQ(problems[0].message, "an earlier problem");
    EXPECT_EQ(problems[1].path, "inspect.rulesets.first.patterns[0].regex");
    EXPECT_EQ(problems[1].location.line, 13);
    EXPECT_EQ(compiled.error().message.find("an earlier problem"), std::string::npos);
}

TEST(InspectRulesetDb, NoRulesetsCompileToNothing) {
    config::Config config;
    std::vector<config::Diagnostic> problems;
    auto compiled = compile_rulesets(config, problems);
    ASSERT_TRUE(compiled.ok());
    EXPECT_TRUE(compiled->rulesets.empty());
    EXPECT_EQ(compiled->find(1), nullptr);
}

TEST(InspectRulesetDb, TheExampleConfigCompiles) {
    auto loaded = config::read_config_file(SLUICE_TEST_DATA_DIR "/configs/good-basic.yaml");
    ASSERT_TRUE(loaded.ok());
    std::vector<config::Diagnostic> problems;
    auto compiled = compile_rulesets(*loaded.config, problems);
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    EXPECT_EQ(compiled->rulesets.size(), 2u);
    EXPECT_EQ(compiled->find(loaded.config->ruleset_id("ctf"))->client_to_server, nullptr);
    EXPECT_NE(compiled->find(loaded.config->ruleset_id("ctf"))->server_to_client, nullptr);
}
