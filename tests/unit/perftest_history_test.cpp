// profiles/history.csv rows: format, round trip, append, the printed table,
// and the SVG chart (well-formed XML, both lines drawn).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "perftest/history.h"

using namespace sluice::perftest;

namespace {

HistoryRow sample() {
    HistoryRow r;
    r.date = "2026-11-30 05:10";
    r.environment = "netns";
    r.revision = "bbd0ce7";
    r.mode = "compare";
    r.quick = false;
    r.passes = 3;
    r.ipv4_gbps = 5.9346;
    r.ipv6_gbps = 5.71;
    r.gap_percent = 3.78;
    r.baseline = "kernel";
    r.ipv4_ratio = 0.9612;
    r.ipv6_ratio = 0.95;
    return r;
}

// A small checker for what an SVG consumer needs: every tag closed in order,
// attributes quoted, one root <svg>.
bool well_formed_xml(const std::string& text, std::string& why) {
    std::vector<std::string> stack;
    size_t i = text.find("<svg");
    if (i == std::string::npos) {
        why = "no <svg>";
        return false;
    }
    int roots = 0;
    while ((i = text.find('<', i)) != std::string::npos) {
        size_t end = text.find('>', i);
        if (end == std::string::npos) {
            why = "unterminated tag";
            return false;
        }
        std::string tag = text.substr(i + 1, end - i - 1);
        i = end + 1;
        if (tag.empty()) { why = "empty tag"; return false; }
        if (tag[0] == '?' || tag[0] == '!') continue;
        if (tag[0] == '/') {
            std::string name = tag.substr(1);
            if (stack.empty() || stack.back() != name) {
                why = "</" + name + "> closes " + (stack.empty() ? "nothing" : "<" + stack.back() + ">");
                return false;
            }
            stack.pop_back();
            continue;
        }
        if (std::count(tag.begin(), tag.end(), '"') % 2) { why = "unbalanced quotes in <" + tag + ">"; return false; }
        std::string name = tag.substr(0, tag.find_first_of(" /\n"));
        if (stack.empty()) ++roots;
        if (tag.back() != '/') stack.push_back(name);
    }
    if (!stack.empty()) { why = "<" + stack.back() + "> never closed"; return false; }
    if (roots != 1) { why = "expected one root element"; return false; }
    return true;
}

}  // namespace

TEST(PerftestHistory, RowFormat) {
    EXPECT_EQ(history_header(),
              "date,environment,revision,mode,quick,passes,ipv4_gbps,ipv6_gbps,gap_percent,baseline,ipv4_ratio,ipv6_ratio");
    EXPECT_EQ(format_history_row(sample()), "2026-11-30 05:10,netns,bbd0ce7,compare,no,3,5.935,5.710,3.8,kernel,0.961,0.950");
    HistoryRow partial = sample();
    partial.ipv6_gbps.reset();
    partial.gap_percent.reset();
    partial.baseline.clear();
    partial.ipv4_ratio.reset();
    partial.ipv6_ratio.reset();
    partial.mode = "ipv4";
    partial.quick = true;
    partial.revision = "unknown";
    EXPECT_EQ(format_history_row(partial), "2026-11-30 05:10,netns,unknown,ipv4,yes,3,5.935,,,,,");
}

TEST(PerftestHistory, CommasInTextCannotBreakTheRow) {
    HistoryRow r = sample();
    r.environment = "my,env";
    EXPECT_EQ(format_history_row(r).substr(0, 27), "2026-11-30 05:10,my;env,bbd");
}

TEST(PerftestHistory, RoundTrip) {
    std::string text = history_header() + "\n" + format_history_row(sample()) + "\n";
    auto rows = parse_history(text);
    ASSERT_TRUE(rows) << rows.error().message;
    ASSERT_EQ(rows->size(), 1u);
    const auto& r = (*rows)[0];
    EXPECT_EQ(r.date, "2026-11-30 05:10");
    EXPECT_EQ(r.revision, "bbd0ce7");
    EXPECT_EQ(r.passes, 3);
    EXPECT_FALSE(r.quick);
    EXPECT_DOUBLE_EQ(*r.ipv4_gbps, 5.935);
    EXPECT_DOUBLE_EQ(*r.ipv6_ratio, 0.95);
}

TEST(PerftestHistory, ParseErrorsNameTheLine) {
    EXPECT_NE(parse_history("nope\n").error().message.find("line 1: expected the header"), std::string::npos);
    auto short_row = parse_history(history_header() + "\n2026,netns\n");
    ASSERT_FALSE(short_row);
    EXPECT_EQ(short_row.error().message, "line 2: expected 12 fields, found 2");
    auto bad_number = parse_history(history_header() + "\n2026-11-30 05:10,netns,x,compare,no,1,fast,,,,,\n");
    ASSERT_FALSE(bad_number);
    EXPECT_EQ(bad_number.error().message, "line 2: ipv4_gbps: not a number: \"fast\"");
}

TEST(PerftestHistory, AppendWritesHeaderOnce) {
    auto path = std::filesystem::temp_directory_path() / ("perftest-history-" + std::to_string(::getpid()) + ".csv");
    std::filesystem::remove(path);
    ASSERT_TRUE(append_history(path.string(), sample()));
    ASSERT_TRUE(append_history(path.string(), sample()));
    auto rows = load_history(path.string());
    ASSERT_TRUE(rows) << rows.error().message;
    EXPECT_EQ(rows->size(), 2u);
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first, history_header());
    std::filesystem::remove(path);
}

TEST(PerftestHistory, PrintedLikeHistoricalResults) {
    auto text = render_history({sample()});
    // Cells, trimmed, per line: header, rule, one row.
    std::vector<std::vector<std::string>> cells;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> row;
        std::istringstream cols(line);
        std::string cell;
        std::getline(cols, cell, '|');   // before the first '|'
        while (std::getline(cols, cell, '|')) {
            auto b = cell.find_first_not_of(' ');
            auto e = cell.find_last_not_of(' ');
            row.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
        }
        cells.push_back(row);
    }
    ASSERT_EQ(cells.size(), 3u) << text;
    EXPECT_EQ(cells[0], (std::vector<std::string>{"Date", "Environment", "IPv4", "IPv6", "Gap", "sluice / baseline",
                                                  "Build", "Run"}));
    EXPECT_EQ(cells[2], (std::vector<std::string>{"2026-11-30 05:10", "netns", "5.93 Gbps", "5.71 Gbps", "3.8%",
                                                  "kernel: 0.96 / 0.95", "bbd0ce7", "compare, 3 passes"}));
}

TEST(PerftestHistory, SvgIsWellFormedWithBothLines) {
    std::vector<HistoryRow> rows;
    for (int i = 0; i < 5; ++i) {
        HistoryRow r = sample();
        r.ipv4_gbps = 5.0 + i;
        r.ipv6_gbps = 4.0 + i;
        if (i == 2) r.ipv6_gbps.reset();   // a run without IPv6 breaks its line
        r.environment = "netns & <friends>";  // escaped
        rows.push_back(r);
    }
    std::string svg = history_svg(rows, "history \"netns\"");
    std::string why;
    EXPECT_TRUE(well_formed_xml(svg, why)) << why;
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
    // One path per family; IPv6's has a second "M" where the gap is.
    std::regex path_re("<path d=\"([^\"]*)\"");
    std::vector<std::string> paths;
    for (std::sregex_iterator it(svg.begin(), svg.end(), path_re), end; it != end; ++it) paths.push_back((*it)[1]);
    ASSERT_EQ(paths.size(), 2u);
    EXPECT_EQ(std::count(paths[0].begin(), paths[0].end(), 'M'), 1);
    EXPECT_EQ(std::count(paths[1].begin(), paths[1].end(), 'M'), 2);
    for (size_t at = svg.find('&'); at != std::string::npos; at = svg.find('&', at + 1)) {
        std::string rest = svg.substr(at, 6);
        EXPECT_TRUE(rest.rfind("&amp;", 0) == 0 || rest.rfind("&lt;", 0) == 0 || rest.rfind("&gt;", 0) == 0 ||
                    rest.rfind("&quot;", 0) == 0 || rest.rfind("&apos;", 0) == 0)
            << rest;
    }
    EXPECT_EQ(svg.find("<friends>"), std::string::npos);
}

TEST(PerftestHistory, EmptyHistoryStillDrawsAChart) {
    std::string svg = history_svg({}, "empty");
    std::string why;
    EXPECT_TRUE(well_formed_xml(svg, why)) << why;
    EXPECT_NE(svg.find("no runs yet"), std::string::npos);
}
