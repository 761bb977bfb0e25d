#include "bench/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

namespace sluice::bench {
namespace {

const std::vector<std::string> kPalette{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                        "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

std::string fixed_text(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Characters, not bytes, for the legend's spacing.
size_t text_length(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++n;
    return n;
}

bool panel_empty(const ChartPanel& p) {
    for (const auto& s : p.series)
        for (const auto& [x, v] : s.points)
            if (!v.empty()) return false;
    for (const auto& r : p.references)
        if (!r.samples.empty()) return false;
    return true;
}

struct Frame {
    double ox, oy, pw, ph, ymax;
    std::vector<double> xs;  // the distinct x values of the panel, ascending
    ChartXScale scale;
    double lo = 0, hi = 1, pad = 0;

    double x(double v) const {
        if (scale == ChartXScale::Categorical) {
            auto it = std::lower_bound(xs.begin(), xs.end(), v);
            double i = static_cast<double>(it - xs.begin());
            return ox + (i + 0.5) / static_cast<double>(xs.size()) * pw;
        }
        double t = scale == ChartXScale::Log10 ? std::log10(v) : v;
        return ox + (t - lo + pad) / (hi - lo + 2 * pad) * pw;
    }
    double y(double v) const { return oy + ph - v / ymax * ph; }
};

void draw_panel(std::vector<std::string>& s, const ChartPanel& p, double x0, double y0, const ChartLayout& L,
                const std::map<std::string, std::string>& colours) {
    const double top = p.flag.empty() ? L.top : L.top + 12;
    Frame f;
    f.scale = p.x_scale;
    f.ox = x0 + L.left;
    f.oy = y0 + top;
    f.pw = L.panel_width - L.left - L.right;
    f.ph = L.panel_height - top - L.bottom;

    std::set<double> xs;
    double ymax_data = 0;
    bool any = false;
    for (const auto& ser : p.series)
        for (const auto& [x, v] : ser.points) {
            if (v.empty()) continue;
            if (p.x_scale == ChartXScale::Log10 && x <= 0) continue;
            xs.insert(x);
            for (double y : v) {
                ymax_data = any ? std::max(ymax_data, y) : y;
                any = true;
            }
        }
    for (const auto& r : p.references)
        for (double y : r.samples) {
            ymax_data = any ? std::max(ymax_data, y) : y;
            any = true;
        }
    f.xs.assign(xs.begin(), xs.end());
    if (!any || ymax_data <= 0) ymax_data = 1;
    const double span = ymax_data * (1 + p.y_headroom);
    const double step = nice_step(span, p.y_ticks);
    f.ymax = step * std::ceil(span / step);
    if (p.x_scale != ChartXScale::Categorical && !f.xs.empty()) {
        auto t = [&](double v) { return p.x_scale == ChartXScale::Log10 ? std::log10(v) : v; };
        f.lo = t(f.xs.front());
        f.hi = t(f.xs.back());
        if (f.hi == f.lo) {
            f.lo -= 1;
            f.hi += 1;
        }
        f.pad = 0.06 * (f.hi - f.lo);
    }

    const std::string left_x = num(x0 + L.left);
    s.push_back("<text x=\"" + left_x + "\" y=\"" + num(y0 + 16) + "\" font-weight=\"bold\">" +
                svg_escape(p.title) + "</text>");
    if (!p.flag.empty())
        s.push_back("<text x=\"" + left_x + "\" y=\"" + num(y0 + 31) + "\" fill=\"#b00\" font-size=\"11\">" +
                    svg_escape(p.flag) + "</text>");
    // Grid and y axis.
    for (int i = 0;; ++i) {
        double v = step * i;
        if (v > f.ymax + 1e-9 * f.ymax) break;
        s.push_back("<line x1=\"" + num(f.ox) + "\" y1=\"" + num(f.y(v)) + "\" x2=\"" + num(f.ox + f.pw) +
                    "\" y2=\"" + num(f.y(v)) + "\" stroke=\"#e3e3e3\"/>");
        s.push_back("<text x=\"" + num(f.ox - 6) + "\" y=\"" + num(f.y(v) + 4) +
                    "\" text-anchor=\"end\" font-size=\"11\">" + tick_text(v) + "</text>");
    }
    s.push_back("<line x1=\"" + num(f.ox) + "\" y1=\"" + num(f.oy) + "\" x2=\"" + num(f.ox) + "\" y2=\"" +
                num(f.oy + f.ph) + "\" stroke=\"#333\"/>");
    s.push_back("<line x1=\"" + num(f.ox) + "\" y1=\"" + num(f.oy + f.ph) + "\" x2=\"" + num(f.ox + f.pw) +
                "\" y2=\"" + num(f.oy + f.ph) + "\" stroke=\"#333\"/>");
    for (double x : f.xs) {
        if (p.x_scale != ChartXScale::Categorical)
            s.push_back("<line x1=\"" + num(f.x(x)) + "\" y1=\"" + num(f.oy + f.ph) + "\" x2=\"" + num(f.x(x)) +
                        "\" y2=\"" + num(f.oy + f.ph + 5) + "\" stroke=\"#333\"/>");
        s.push_back("<text x=\"" + num(f.x(x)) + "\" y=\"" + num(f.oy + f.ph + 15) +
                    "\" text-anchor=\"middle\" font-size=\"11\">" + tick_text(x) + "</text>");
    }
    if (!p.x_label.empty())
        s.push_back("<text x=\"" + num(f.ox + f.pw / 2) + "\" y=\"" + num(f.oy + f.ph + 32) +
                    "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">" + svg_escape(p.x_label) + "</text>");
    if (!p.y_label.empty())
        s.push_back("<text transform=\"translate(" + num(x0 + 14) + " " + num(f.oy + f.ph / 2) +
                    ") rotate(-90)\" text-anchor=\"middle\" font-size=\"11\">" + svg_escape(p.y_label) + "</text>");

    std::vector<std::tuple<double, std::string, std::string>> labels;  // y, text, colour
    for (const auto& r : p.references) {
        if (r.samples.empty()) continue;
        auto [lo, hi] = std::minmax_element(r.samples.begin(), r.samples.end());
        double med = median_of(r.samples);
        s.push_back("<rect x=\"" + num(f.ox) + "\" y=\"" + num(f.y(*hi)) + "\" width=\"" + num(f.pw) +
                    "\" height=\"" + num(std::max(f.y(*lo) - f.y(*hi), 0.5)) + "\" fill=\"" + r.colour +
                    "\" fill-opacity=\"0.10\"/>");
        s.push_back("<line x1=\"" + num(f.ox) + "\" y1=\"" + num(f.y(med)) + "\" x2=\"" + num(f.ox + f.pw) +
                    "\" y2=\"" + num(f.y(med)) + "\" stroke=\"" + r.colour + "\" stroke-width=\"2\"" +
                    (r.dash.empty() ? "" : " stroke-dasharray=\"" + r.dash + "\"") + "/>");
        if (p.right_labels) labels.emplace_back(f.y(med), r.name + ": " + fixed_text(med, r.label_decimals), r.colour);
    }
    for (const auto& ser : p.series) {
        std::string colour = colours.at(ser.name);
        std::vector<std::tuple<double, double, double>> pts;  // x, y, median
        for (const auto& [x, v] : ser.points) {
            if (v.empty() || (p.x_scale == ChartXScale::Log10 && x <= 0)) continue;
            auto [lo, hi] = std::minmax_element(v.begin(), v.end());
            double med = median_of(v), xx = f.x(x);
            pts.emplace_back(xx, f.y(med), med);
            if (*hi > *lo) {
                s.push_back("<line x1=\"" + num(xx) + "\" y1=\"" + num(f.y(*lo)) + "\" x2=\"" + num(xx) + "\" y2=\"" +
                            num(f.y(*hi)) + "\" stroke=\"" + colour + "\" stroke-width=\"1.2\"/>");
                if (ser.whisker_caps)
                    for (double e : {*lo, *hi})
                        s.push_back("<line x1=\"" + num(xx - 5) + "\" y1=\"" + num(f.y(e)) + "\" x2=\"" +
                                    num(xx + 5) + "\" y2=\"" + num(f.y(e)) + "\" stroke=\"" + colour +
                                    "\" stroke-width=\"1.2\"/>");
            }
        }
        if (pts.empty()) continue;
        std::string d;
        for (const auto& [px, py, med] : pts) d += (d.empty() ? "M" : " L") + num(px) + "," + num(py);
        s.push_back("<path d=\"" + d + "\" fill=\"none\" stroke=\"" + colour +
                    "\" stroke-width=\"2.2\" data-series=\"" + svg_escape(ser.name) + "\"/>");
        for (const auto& [px, py, med] : pts) {
            s.push_back("<circle cx=\"" + num(px) + "\" cy=\"" + num(py) + "\" r=\"3.2\" fill=\"" + colour + "\"/>");
            if (ser.value_labels)
                s.push_back("<text x=\"" + num(px + 8) + "\" y=\"" + num(py - 8) + "\" fill=\"" + colour +
                            "\" font-size=\"11\">" + fixed_text(med, ser.label_decimals) + "</text>");
        }
        if (p.right_labels && !ser.end_label.empty())
            labels.emplace_back(std::get<1>(pts.back()),
                                ser.end_label + ": " + fixed_text(std::get<2>(pts.back()), ser.label_decimals),
                                colour);
    }
    // Right-edge labels, pushed apart so that they never overlap.
    std::sort(labels.begin(), labels.end());
    double last = -1e9;
    for (auto& [yy, text, colour] : labels) {
        if (yy - last < 16) yy = last + 16;
        last = yy;
        s.push_back("<text x=\"" + num(f.ox + f.pw + 8) + "\" y=\"" + num(yy + 4) + "\" fill=\"" + colour +
                    "\" font-size=\"11\">" + svg_escape(text) + "</text>");
    }
}

}  // namespace

std::string svg_escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

double nice_step(double span, int target) {
    double raw = span > 0 && target > 0 ? span / target : 1;
    double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (raw <= m * mag) return m * mag;
    return 10 * mag;
}

std::string tick_text(double value) {
    char buf[64];
    if (std::fabs(value) < 10000)
        std::snprintf(buf, sizeof buf, "%g", value);
    else
        std::snprintf(buf, sizeof buf, "%gk", value / 1000);
    return buf;
}

std::string render_svg(const Chart& chart) {
    const ChartLayout& L = chart.layout;
    const int columns = std::max(1, chart.columns);
    const int rows = static_cast<int>((chart.panels.size() + columns - 1) / columns);

    // One colour per series name, the same in every panel.
    std::map<std::string, std::string> colours;
    std::vector<std::string> names;
    std::vector<const ChartReference*> refs;
    std::set<std::string> ref_names;
    // Explicit colours first; the others get the palette's colours no series uses.
    std::set<std::string> used;
    for (const auto& p : chart.panels)
        for (const auto& s : p.series) {
            if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
            if (!s.colour.empty() && !colours.count(s.name)) {
                colours[s.name] = s.colour;
                used.insert(s.colour);
            }
        }
    size_t next = 0;
    for (const auto& name : names) {
        if (colours.count(name)) continue;
        size_t tries = 0;
        while (used.count(kPalette[next % kPalette.size()]) && tries++ < kPalette.size()) ++next;
        colours[name] = kPalette[next++ % kPalette.size()];
    }
    for (const auto& p : chart.panels)
        for (const auto& r : p.references)
            if (ref_names.insert(r.name).second) refs.push_back(&r);

    const int subtitles = static_cast<int>(chart.subtitles.size());
    const int legend_y = 46 + 16 * subtitles + 2;
    const int panels_top = chart.legend ? legend_y + 16 : 46 + 16 * subtitles - 4;
    const int width = 20 + L.panel_width * columns;
    const int height = panels_top + 14 + L.panel_height * std::max(rows, 0);

    std::vector<std::string> s;
    s.push_back("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
                std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
                "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"" +
                std::to_string(L.font_size) + "\">");
    s.push_back("<rect width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
                "\" fill=\"white\"/>");
    if (!chart.title.empty())
        s.push_back("<text x=\"20\" y=\"26\" font-size=\"16\" font-weight=\"bold\">" + svg_escape(chart.title) +
                    "</text>");
    for (int i = 0; i < subtitles; ++i)
        s.push_back("<text x=\"20\" y=\"" + std::to_string(46 + 16 * i) + "\" fill=\"#555\" font-size=\"11\">" +
                    svg_escape(chart.subtitles[i]) + "</text>");
    if (chart.legend) {
        double lx = 20;
        const std::string ly = std::to_string(legend_y), ty = std::to_string(legend_y + 4);
        for (const auto& name : names) {
            const std::string& c = colours[name];
            s.push_back("<line x1=\"" + num(lx) + "\" y1=\"" + ly + "\" x2=\"" + num(lx + 24) + "\" y2=\"" + ly +
                        "\" stroke=\"" + c + "\" stroke-width=\"2.5\"/>");
            s.push_back("<circle cx=\"" + num(lx + 12) + "\" cy=\"" + ly + "\" r=\"3.2\" fill=\"" + c + "\"/>");
            s.push_back("<text x=\"" + num(lx + 30) + "\" y=\"" + ty + "\">" + svg_escape(name) + "</text>");
            lx += 30 + 7.2 * static_cast<double>(text_length(name)) + 24;
        }
        for (const auto* r : refs) {
            s.push_back("<line x1=\"" + num(lx) + "\" y1=\"" + ly + "\" x2=\"" + num(lx + 24) + "\" y2=\"" + ly +
                        "\" stroke=\"" + r->colour + "\" stroke-width=\"2\"" +
                        (r->dash.empty() ? "" : " stroke-dasharray=\"" + r->dash + "\"") + "/>");
            s.push_back("<text x=\"" + num(lx + 30) + "\" y=\"" + ty + "\">" + svg_escape(r->name) + "</text>");
            lx += 30 + 7.2 * static_cast<double>(text_length(r->name)) + 24;
        }
    }
    for (size_t i = 0; i < chart.panels.size(); ++i) {
        if (panel_empty(chart.panels[i])) continue;
        const int row = static_cast<int>(i) / columns, col = static_cast<int>(i) % columns;
        draw_panel(s, chart.panels[i], 10.0 + col * L.panel_width, panels_top + row * L.panel_height, L, colours);
    }
    s.push_back("</svg>");
    std::string out;
    for (const auto& line : s) out += line + "\n";
    return out;
}

}  // namespace sluice::bench
