// The benchmark reports' SVG chart (userspace/bench/svg_chart.h): a document
// with one path per series per panel, the series named, balanced tags, and
// the axis arithmetic.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "bench/svg_chart.h"

using namespace sluice::bench;

namespace {

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

// Every element is either self-closed or closed by its own end tag, in order.
bool balanced(const std::string& svg) {
    std::vector<std::string> open;
    std::regex tag("<(/?)([a-zA-Z]+)[^>]*?(/?)>");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tag); it != std::sregex_iterator(); ++it) {
        const auto& m = *it;
        if (m[3] == "/") continue;
        if (m[1] == "/") {
            if (open.empty() || open.back() != m[2]) return false;
            open.pop_back();
        } else {
            open.push_back(m[2]);
        }
    }
    return open.empty();
}

ChartSeries series(const std::string& name, const std::string& colour,
                   std::map<double, std::vector<double>> points) {
    ChartSeries s;
    s.name = name;
    s.colour = colour;
    s.points = std::move(points);
    return s;
}

Chart two_series() {
    Chart c;
    c.title = "A & B <test>";
    c.subtitles = {"median and min–max of 3 passes"};
    ChartPanel p;
    p.title = "(a) one panel";
    p.x_label = "rules";
    p.y_label = "Gbit/s";
    p.series.push_back(series("sluice", "#1f77b4", {{0, {9, 10, 11}}, {512, {8}}, {1024, {7, 8}}}));
    p.series.push_back(series("nft linear", "", {{0, {5}}, {512, {3, 4}}}));
    c.panels.push_back(p);
    return c;
}

}  // namespace

TEST(BenchSvgChart, OnePathPerSeriesAndTheirNames) {
    std::string svg = render_svg(two_series());
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_TRUE(balanced(svg)) << svg;
    EXPECT_EQ(count(svg, "<path "), 2u);
    EXPECT_EQ(count(svg, "data-series=\"sluice\""), 1u);
    EXPECT_EQ(count(svg, "data-series=\"nft linear\""), 1u);
    // The legend names both series.
    EXPECT_NE(svg.find(">sluice</text>"), std::string::npos);
    EXPECT_NE(svg.find(">nft linear</text>"), std::string::npos);
    // Escaped text; no raw '&' outside an entity.
    EXPECT_NE(svg.find("A &amp; B &lt;test&gt;"), std::string::npos);
    EXPECT_FALSE(std::regex_search(svg, std::regex("&(?!amp;|lt;|gt;|quot;)")));
    // The sluice path has three points, the other two; one marker per point.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(svg, m, std::regex("<path d=\"([^\"]*)\"[^>]*data-series=\"sluice\"")));
    EXPECT_EQ(count(m[1].str(), "L"), 2u);
    EXPECT_EQ(count(svg, "<circle "), 5u + 2u);  // 5 points + 2 legend markers
    // Whiskers only where min < max: sluice at 0 and 1024, nft at 512.
    EXPECT_EQ(count(svg, "stroke-width=\"1.2\""), 3u);
    // The palette gave the unnamed colour one that is not sluice's.
    EXPECT_NE(svg.find("stroke=\"#d62728\""), std::string::npos);
}

TEST(BenchSvgChart, PanelsOnAGridEmptyOnesBlankSeriesInEach) {
    Chart c = two_series();
    c.columns = 2;
    c.panels.push_back(c.panels.front());
    c.panels.back().title = "(b) second";
    c.panels.back().flag = "sluice: not enforced";
    ChartPanel empty;
    empty.title = "(c) nothing measured";
    c.panels.push_back(empty);
    std::string svg = render_svg(c);
    EXPECT_TRUE(balanced(svg));
    EXPECT_EQ(count(svg, "<path "), 4u);                       // two series in each of two panels
    EXPECT_EQ(svg.find("(c) nothing measured"), std::string::npos);  // blank cell
    EXPECT_NE(svg.find("fill=\"#b00\""), std::string::npos);
    // Two columns of 500 plus the margin; two rows.
    EXPECT_NE(svg.find("width=\"1020\""), std::string::npos);
}

TEST(BenchSvgChart, ReferencesLogAxisAndLabels) {
    Chart c;
    ChartPanel p;
    p.x_scale = ChartXScale::Log10;
    p.right_labels = true;
    ChartSeries s = series("inspected", "", {{10, {4}}, {100, {3}}, {1000, {2, 2.5}}});
    s.whisker_caps = true;
    s.value_labels = true;
    s.end_label = "inspected, 1000 patterns";
    p.series.push_back(s);
    ChartReference ref;
    ref.name = "kernel forwarding";
    ref.samples = {6, 7, 8};
    p.references.push_back(ref);
    c.panels.push_back(p);
    c.layout.right = 230;
    std::string svg = render_svg(c);
    EXPECT_TRUE(balanced(svg));
    EXPECT_EQ(count(svg, "<path "), 1u);
    EXPECT_NE(svg.find("kernel forwarding: 7.00"), std::string::npos);
    EXPECT_NE(svg.find("inspected, 1000 patterns: 2.25"), std::string::npos);
    EXPECT_NE(svg.find("stroke-dasharray=\"8 5\""), std::string::npos);
    EXPECT_NE(svg.find(">2.25</text>"), std::string::npos);
    EXPECT_NE(svg.find("fill-opacity=\"0.10\""), std::string::npos);
    // Log axis: 10, 100 and 1000 are equally far apart.
    std::regex tick("<text x=\"([0-9.]+)\" y=\"[0-9.]+\" text-anchor=\"middle\" font-size=\"11\">(10|100|1000)</text>");
    std::vector<double> xs;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it)
        xs.push_back(std::stod((*it)[1]));
    ASSERT_EQ(xs.size(), 3u);
    EXPECT_NEAR(xs[1] - xs[0], xs[2] - xs[1], 0.2);
}

TEST(BenchSvgChart, AxisArithmetic) {
    EXPECT_DOUBLE_EQ(nice_step(10.8, 5), 2.5);
    EXPECT_DOUBLE_EQ(nice_step(100, 5), 20);
    EXPECT_DOUBLE_EQ(nice_step(0, 5), 1);
    EXPECT_EQ(tick_text(2.5), "2.5");
    EXPECT_EQ(tick_text(20000), "20k");
    EXPECT_EQ(svg_escape("a\"b<"), "a&quot;b&lt;");
}
