// `sluice show inspect` built from given inputs: per ruleset the fast path's
// counters by id, the stage's counters and each pattern's matches by name; a
// ruleset or pattern the stage never counted shows zeros, not another's numbers.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/show_inspect.h"

using namespace sluice;
using namespace sluice::cli;
using nlohmann::json;

namespace {

json state() {
    json flag = {{"name", "flag"}, {"regex", "flag\\{"}, {"direction", "both"}, {"action", "reject"}, {"caseless", false}};
    json other = {{"name", "other"}, {"regex", "x"}, {"direction", "both"}, {"action", "alert"}, {"caseless", true}};
    return {{"inspect",
             {{"running", true},
              {"held_by_operator", false},
              {"changes", 0},
              {"counters", "/run/sluice/default/inspect-counters"},
              {"workers", 2},
              {"tcp_port", 40001},
              {"udp_port", 40002},
              {"rulesets",
               {{{"name", "ctf"}, {"id", 1}, {"fail_mode", "closed"}, {"inspect_bytes", "unlimited"}, {"patterns", {flag}}},
                {{"name", "soft"}, {"id", 2}, {"fail_mode", "open"}, {"inspect_bytes", 1024}, {"patterns", {other}}}}}}}};
}

inspect::SlotSnapshot slot(const std::string& ruleset, const std::string& pattern) {
    inspect::SlotSnapshot s;
    s.ruleset = ruleset;
    s.pattern = pattern;
    return s;
}

InspectReportInput input() {
    InspectReportInput in;
    in.inspect = state()["inspect"].get<sluice::state::Inspect>();
    in.stage_up_in_datapath = true;
    inspect::CounterSnapshot c;
    c.owner_pid = 42;
    auto ctf = slot("ctf", "");
    ctf.counters[static_cast<size_t>(inspect::Counter::connections)] = 3;
    ctf.counters[static_cast<size_t>(inspect::Counter::bytes_client_to_server)] = 1000;
    ctf.counters[static_cast<size_t>(inspect::Counter::resets)] = 2;
    auto flag = slot("ctf", "flag");
    flag.counters[static_cast<size_t>(inspect::Counter::matches)] = 2;
    auto overflow = slot("", "");
    overflow.overflow = true;
    overflow.counters[static_cast<size_t>(inspect::Counter::matches)] = 99;
    c.slots = {overflow, ctf, flag};
    in.counters = c;
    punt_ruleset_stats fp{};
    fp.punted_packets = 17;
    fp.fail_closed_packets = 4;
    in.fast_path[1] = fp;
    return in;
}

TEST(ShowInspect, ReportJoinsFastPathAndStageCountersPerRuleset) {
    json r = inspect_report(input());
    ASSERT_EQ(r["rulesets"].size(), 2u);
    const json& ctf = r["rulesets"][0];
    EXPECT_EQ(ctf["name"], "ctf");
    EXPECT_EQ(ctf["fast_path"]["punted_packets"], 17);
    EXPECT_EQ(ctf["fast_path"]["fail_closed_packets"], 4);
    EXPECT_EQ(ctf["stage"]["connections"], 3);
    EXPECT_EQ(ctf["stage"]["bytes_client_to_server"], 1000);
    EXPECT_EQ(ctf["stage"]["resets"], 2);
    EXPECT_EQ(ctf["patterns"][0]["matches"], 2);
    EXPECT_EQ(r["stage"]["running"], true);
    EXPECT_EQ(r["stage"]["counters_owner_pid"], 42);
}

TEST(ShowInspect, UncountedRulesetShowsZerosNotTheOverflowSlot) {
    json r = inspect_report(input());
    const json& soft = r["rulesets"][1];
    EXPECT_EQ(soft["fast_path"]["punted_packets"], 0);
    EXPECT_EQ(soft["stage"]["connections"], 0);
    EXPECT_EQ(soft["patterns"][0]["matches"], 0);
    EXPECT_EQ(soft["inspect_bytes"], 1024);
    EXPECT_EQ(soft["fail_mode"], "open");
}

TEST(ShowInspect, WithoutCountersFileTheStageColumnsAreZero) {
    InspectReportInput in = input();
    in.counters.reset();
    json r = inspect_report(in);
    EXPECT_EQ(r["rulesets"][0]["stage"]["connections"], 0);
    EXPECT_FALSE(r["stage"].contains("counters_owner_pid"));
}

TEST(ShowInspect, StateOfADeadDaemonIsNotRunning) {
    InspectReportInput in = input();
    in.daemon_alive = false;  // e.g. killed with SIGKILL: its state file still says running
    EXPECT_EQ(inspect_report(in)["stage"]["running"], false);
}

TEST(ShowInspect, TextNamesEachRulesetAndPattern) {
    std::ostringstream out;
    print_inspect_report(inspect_report(input()), out);
    std::string text = out.str();
    EXPECT_NE(text.find("inspection stage: running, 2 workers"), std::string::npos) << text;
    EXPECT_NE(text.find("ruleset ctf (id 1, fail-mode closed, inspect-bytes unlimited)"), std::string::npos) << text;
    EXPECT_NE(text.find("17 packets punted"), std::string::npos) << text;
    EXPECT_NE(text.find("ruleset soft (id 2, fail-mode open, inspect-bytes 1024)"), std::string::npos) << text;
    EXPECT_NE(text.find("other"), std::string::npos) << text;
    EXPECT_NE(text.find("(caseless)"), std::string::npos) << text;
}

}  // namespace
