#include "perftest/history.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "perftest/text.h"

namespace sluice::perftest {

namespace {

constexpr const char* kColumns[] = {"date",     "environment", "revision",   "mode",       "quick",     "passes",
                                    "ipv4_gbps", "ipv6_gbps",  "gap_percent", "baseline", "ipv4_ratio", "ipv6_ratio"};
constexpr size_t kColumnCount = sizeof kColumns / sizeof kColumns[0];

std::string text_field(const std::string& s) {
    std::string out = s;
    std::replace(out.begin(), out.end(), ',', ';');
    std::replace(out.begin(), out.end(), '\n', ' ');
    return out;
}

std::string number_field(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : ""; }

std::vector<std::string> split(const std::string& line, char sep) {
    std::vector<std::string> out;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, sep)) out.push_back(cell);
    if (!line.empty() && line.back() == sep) out.emplace_back();
    return out;
}

Result<std::optional<double>> parse_number(const std::string& s, const std::string& what) {
    if (s.empty()) return std::optional<double>();
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0') return make_error(what + ": not a number: \"" + s + "\"");
    return std::optional<double>(v);
}

std::string xml_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default: out += c;
        }
    }
    return out;
}

// A "nice" axis maximum and step: 1, 2 or 5 times a power of ten.
void nice_axis(double max_value, double& axis_max, double& step) {
    if (max_value <= 0) max_value = 1;
    double raw = max_value / 5;
    double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double f = raw / magnitude;
    step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * magnitude;
    axis_max = std::ceil(max_value / step) * step;
    if (axis_max < max_value * 1.05) axis_max += step;
}

}  // namespace

std::string history_header() {
    std::string out;
    for (size_t i = 0; i < kColumnCount; ++i) out += (i ? "," : "") + std::string(kColumns[i]);
    return out;
}

std::string format_history_row(const HistoryRow& row) {
    std::vector<std::string> cells{text_field(row.date),
                                   text_field(row.environment),
                                   text_field(row.revision),
                                   text_field(row.mode),
                                   row.quick ? "yes" : "no",
                                   std::to_string(row.passes),
                                   number_field(row.ipv4_gbps, 3),
                                   number_field(row.ipv6_gbps, 3),
                                   number_field(row.gap_percent, 1),
                                   text_field(row.baseline),
                                   number_field(row.ipv4_ratio, 3),
                                   number_field(row.ipv6_ratio, 3)};
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
    return out;
}

Result<std::vector<HistoryRow>> parse_history(const std::string& text) {
    std::vector<HistoryRow> rows;
    std::istringstream in(text);
    std::string line;
    int number = 0;
    bool header_seen = false;
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        if (!header_seen) {
            if (line != history_header()) {
                return make_error("line " + std::to_string(number) + ": expected the header \"" + history_header() + "\"");
            }
            header_seen = true;
            continue;
        }
        auto cells = split(line, ',');
        std::string at = "line " + std::to_string(number);
        if (cells.size() != kColumnCount) {
            return make_error(at + ": expected " + std::to_string(kColumnCount) + " fields, found " +
                              std::to_string(cells.size()));
        }
        HistoryRow r;
        r.date = cells[0];
        r.environment = cells[1];
        r.revision = cells[2];
        r.mode = cells[3];
        r.quick = cells[4] == "yes";
        r.passes = std::atoi(cells[5].c_str());
        r.baseline = cells[9];
        struct {
            size_t column;
            std::optional<double>* into;
        } numbers[] = {{6, &r.ipv4_gbps}, {7, &r.ipv6_gbps}, {8, &r.gap_percent}, {10, &r.ipv4_ratio}, {11, &r.ipv6_ratio}};
        for (auto& n : numbers) {
            auto v = parse_number(cells[n.column], at + ": " + kColumns[n.column]);
            if (!v) return v.error();
            *n.into = *v;
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

Status append_history(const std::string& path, const HistoryRow& row) {
    bool fresh = true;
    {
        std::ifstream existing(path);
        fresh = !existing || existing.peek() == std::ifstream::traits_type::eof();
    }
    std::error_code ec;
    if (const auto dir = std::filesystem::path(path).parent_path(); !dir.empty())
        std::filesystem::create_directories(dir, ec);
    std::ofstream out(path, std::ios::app);
    if (!out) return make_error(path + ": cannot open the history file for appending");
    if (fresh) out << history_header() << "\n";
    out << format_history_row(row) << "\n";
    if (!out) return make_error(path + ": write failed");
    return {};
}

Result<std::vector<HistoryRow>> load_history(const std::string& path) {
    std::ifstream in(path);
    if (!in) return make_error(path + ": no history yet (it is written by every perf-test run)");
    std::stringstream buffer;
    buffer << in.rdbuf();
    auto rows = parse_history(buffer.str());
    if (!rows) return make_error(path + ": " + rows.error().message);
    return rows;
}

std::string render_history(const std::vector<HistoryRow>& rows) {
    std::vector<std::vector<std::string>> table{
        {"Date", "Environment", "IPv4", "IPv6", "Gap", "sluice / baseline", "Build", "Run"}};
    for (const auto& r : rows) {
        std::string ratio = "-";
        if (!r.baseline.empty()) {
            ratio = r.baseline + ": " + (r.ipv4_ratio ? fixed(*r.ipv4_ratio, 2) : "-") + " / " +
                    (r.ipv6_ratio ? fixed(*r.ipv6_ratio, 2) : "-");
        }
        std::string run = r.mode + (r.quick ? " quick" : "") + ", " + std::to_string(r.passes) +
                          (r.passes == 1 ? " pass" : " passes");
        table.push_back({r.date, r.environment, r.ipv4_gbps ? fixed(*r.ipv4_gbps, 2) + " Gbps" : "-",
                         r.ipv6_gbps ? fixed(*r.ipv6_gbps, 2) + " Gbps" : "-",
                         r.gap_percent ? fixed(*r.gap_percent, 1) + "%" : "-", ratio, r.revision, run});
    }
    return markdown_table(table);
}

std::string history_svg(const std::vector<HistoryRow>& rows, const std::string& title) {
    const double width = 760, height = 400;
    const double left = 120, right = 24, top = 48, bottom = 96;  // room for slanted labels
    const double plot_w = width - left - right, plot_h = height - top - bottom;
    double max_value = 0;
    for (const auto& r : rows) {
        if (r.ipv4_gbps) max_value = std::max(max_value, *r.ipv4_gbps);
        if (r.ipv6_gbps) max_value = std::max(max_value, *r.ipv6_gbps);
    }
    double axis_max = 1, step = 0.2;
    nice_axis(max_value, axis_max, step);
    size_t n = rows.size();
    auto x_of = [&](size_t i) { return left + (n <= 1 ? plot_w / 2 : plot_w * static_cast<double>(i) / static_cast<double>(n - 1)); };
    auto y_of = [&](double v) { return top + plot_h * (1 - v / axis_max); };

    std::ostringstream svg;
    svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
        << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    svg << "  <rect x=\"0\" y=\"0\" width=\"" << width << "\" height=\"" << height << "\" fill=\"white\"/>\n";
    svg << "  <text x=\"" << width / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" << xml_escape(title)
        << "</text>\n";
    // Grid and y axis labels.
    for (double v = 0; v <= axis_max + step / 2; v += step) {
        double y = y_of(v);
        svg << "  <line x1=\"" << left << "\" y1=\"" << fixed(y, 1) << "\" x2=\"" << left + plot_w << "\" y2=\""
            << fixed(y, 1) << "\" stroke=\"#dddddd\"/>\n";
        svg << "  <text x=\"" << left - 6 << "\" y=\"" << fixed(y + 4, 1) << "\" text-anchor=\"end\">"
            << fixed(v, step < 1 ? 1 : 0) << "</text>\n";
    }
    svg << "  <text x=\"" << left - 44 << "\" y=\"" << top + plot_h / 2 << "\" transform=\"rotate(-90 " << left - 44 << " " << top + plot_h / 2
        << ")\" text-anchor=\"middle\">Gbit/s (sluice, median)</text>\n";
    svg << "  <line x1=\"" << left << "\" y1=\"" << top + plot_h << "\" x2=\"" << left + plot_w << "\" y2=\""
        << top + plot_h << "\" stroke=\"black\"/>\n";
    svg << "  <line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << top + plot_h
        << "\" stroke=\"black\"/>\n";
    // X labels: date and revision, thinned to at most ~12.
    size_t every = std::max<size_t>(1, (n + 11) / 12);
    for (size_t i = 0; i < n; ++i) {
        if (i % every != 0 && i + 1 != n) continue;
        double x = x_of(i);
        double y = top + plot_h + 14;
        svg << "  <text x=\"" << fixed(x, 1) << "\" y=\"" << y << "\" text-anchor=\"end\" transform=\"rotate(-35 "
            << fixed(x, 1) << " " << y << ")\" font-size=\"10\">" << xml_escape(rows[i].date.substr(0, 10) + " " + rows[i].revision)
            << "</text>\n";
    }
    // One path per family, broken where a run has no value.
    struct Series {
        const char* name;
        const char* colour;
        std::optional<double> HistoryRow::*value;
    } series[] = {{"IPv4", "#1f77b4", &HistoryRow::ipv4_gbps}, {"IPv6", "#ff7f0e", &HistoryRow::ipv6_gbps}};
    for (const auto& s : series) {
        std::string d;
        bool pen_down = false;
        for (size_t i = 0; i < n; ++i) {
            const auto& v = rows[i].*(s.value);
            if (!v) {
                pen_down = false;
                continue;
            }
            d += (pen_down ? " L " : (d.empty() ? "M " : " M ")) + fixed(x_of(i), 1) + " " + fixed(y_of(*v), 1);
            pen_down = true;
        }
        if (!d.empty()) {
            svg << "  <path d=\"" << d << "\" fill=\"none\" stroke=\"" << s.colour << "\" stroke-width=\"2\"/>\n";
        }
        for (size_t i = 0; i < n; ++i) {
            const auto& v = rows[i].*(s.value);
            if (!v) continue;
            svg << "  <circle cx=\"" << fixed(x_of(i), 1) << "\" cy=\"" << fixed(y_of(*v), 1) << "\" r=\"3\" fill=\""
                << s.colour << "\"><title>" << s.name << " " << fixed(*v, 2) << " Gbps, "
                << xml_escape(rows[i].date + " " + rows[i].environment + " " + rows[i].revision) << "</title></circle>\n";
        }
    }
    // Legend.
    double lx = left + plot_w - 120, ly = top + 8;
    for (size_t k = 0; k < 2; ++k) {
        double y = ly + 16.0 * static_cast<double>(k);
        svg << "  <line x1=\"" << lx << "\" y1=\"" << y << "\" x2=\"" << lx + 24 << "\" y2=\"" << y << "\" stroke=\""
            << series[k].colour << "\" stroke-width=\"2\"/>\n";
        svg << "  <text x=\"" << lx + 30 << "\" y=\"" << y + 4 << "\">" << series[k].name << "</text>\n";
    }
    if (n == 0) {
        svg << "  <text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h / 2
            << "\" text-anchor=\"middle\">no runs yet</text>\n";
    }
    svg << "</svg>\n";
    return svg.str();
}

std::string history_now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
    return buf;
}

}  // namespace sluice::perftest
