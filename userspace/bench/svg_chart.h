// A small SVG chart for benchmark reports, written by hand (no third-party
// code): a grid of line panels, each a set of series drawn as the median of
// their samples at each x, with min–max whiskers, optional horizontal
// reference levels (a median line over a min–max band), axis labels, and one
// legend for the whole chart. Generic: the benchmark says what the panels,
// series and references are; this draws them.
//
//   Chart c;
//   c.title = "Policy at scale";
//   c.subtitles = {"2026-01-02 10:00 UTC; 6.18, 2 CPUs"};
//   c.columns = 2;
//   Panel p;
//   p.title = "(a) UDP · source rules";
//   p.x_label = "rules";
//   p.y_label = "Gbit/s";
//   p.series.push_back({.name = "sluice", .colour = "#1f77b4", .points = {{0, {9.1, 9.3}}, {512, {9.0}}}});
//   c.panels.push_back(p);
//   std::string svg = render_svg(c);
//
// Each series is one <path> per panel it appears in (its median line, also
// for a single point), whiskers and markers are <line> and <circle>.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace sluice::bench {

struct ChartSeries {
    std::string name;    // the legend's label (also the <path>'s data-series attribute)
    std::string colour;  // "#1f77b4"; "" = the next colour of the palette, by legend order
    // x -> the samples at that x (one per pass): the median is drawn, the
    // whisker spans min..max. An x with no samples is left out.
    std::map<double, std::vector<double>> points;
    bool whisker_caps = false;    // short horizontal ticks at min and max
    bool value_labels = false;    // the median printed next to each point
    int label_decimals = 2;
    // When not "", a label at the panel's right edge: "END_LABEL: <median of the last x>".
    std::string end_label;
};

// A level across the whole panel: its median as a dashed line over a band
// from its min to its max (e.g. a baseline measured once per pass).
struct ChartReference {
    std::string name;
    std::string colour = "#7a7a7a";
    std::string dash = "8 5";
    std::vector<double> samples;
    int label_decimals = 2;  // of the right-edge label "NAME: median" (when the panel has right_labels)
};

enum class ChartXScale {
    Categorical,  // the distinct x values evenly spaced, in order ("not to scale")
    Linear,
    Log10,        // every x must be > 0
};

struct ChartPanel {
    std::string title;
    std::string flag;     // a warning under the title, in red ("" = none)
    std::string x_label;  // under the x axis
    std::string y_label;  // along the y axis
    ChartXScale x_scale = ChartXScale::Categorical;
    std::vector<ChartSeries> series;
    std::vector<ChartReference> references;
    bool right_labels = false;  // label references (and series' end_label) at the right edge
    // The y axis goes from 0 to a round number above max(data) * (1 + headroom).
    double y_headroom = 0.08;
    int y_ticks = 5;  // about this many grid steps
};

struct ChartLayout {
    int panel_width = 500, panel_height = 260;
    // The plot area inside each panel's cell.
    int left = 62, right = 12, top = 28, bottom = 40;
    int font_size = 12;
};

struct Chart {
    std::string title;
    std::vector<std::string> subtitles;  // grey lines under the title
    int columns = 1;                     // panels fill the grid row by row
    // A panel with no samples at all (no series points, no reference) leaves
    // its cell blank.
    std::vector<ChartPanel> panels;
    ChartLayout layout;
    bool legend = true;  // one row: every series name (first appearance order), then references
};

// The whole SVG document.
std::string render_svg(const Chart& chart);

// Helpers the renderer uses, exposed for tests and for callers' labels.
std::string svg_escape(const std::string& text);
// A round grid step for 0..span in about `target` steps (1, 2, 2.5, 5 × 10^k).
double nice_step(double span, int target);
// "%g"-like tick text; from 10000 on as "12k".
std::string tick_text(double value);

}  // namespace sluice::bench
