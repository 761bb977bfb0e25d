#include "perftest/perf_report.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <sstream>

namespace sluice::perftest {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool is_hex(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// Column extents from perf's dotted header line ("# ........  ......  ...."):
// with IPC columns or other sort keys the symbol is not the rest of the line.
std::vector<size_t> column_starts(std::string_view dotted) {
    std::vector<size_t> starts;
    for (size_t i = 1; i < dotted.size(); ++i) {
        if (dotted[i] == '.' && (dotted[i - 1] == ' ' || dotted[i - 1] == '#')) starts.push_back(i);
    }
    return starts;
}

bool is_dotted_header(std::string_view s) {
    if (s.size() < 3 || s[0] != '#') return false;
    bool dots = false;
    for (char c : s.substr(1)) {
        if (c == '.') dots = true;
        else if (c != ' ') return false;
    }
    return dots;
}

// Drops perf's "not available" IPC cells ("-      -") at the end of a line
// parsed without column extents.
std::string_view strip_ipc_tail(std::string_view s) {
    for (int i = 0; i < 2; ++i) {
        s = trim(s);
        if (s.size() > 2 && s.back() == '-' && s[s.size() - 2] == ' ') s.remove_suffix(1);
    }
    return trim(s);
}

// "   12.34%  [k] symbol name" -> entry. Everything else (headers, call-graph
// branches "|--12.34%--foo", blank lines) -> nullopt. `columns` are the
// extents from the dotted header (empty when there was none).
std::optional<ProfileEntry> parse_symbol_line(std::string_view line, const std::vector<size_t>& columns) {
    std::string_view overhead = line;
    std::string_view symbol_cell;
    if (columns.size() >= 2 && line.size() > columns[1]) {
        overhead = line.substr(0, columns[1]);
        size_t end = columns.size() >= 3 ? columns[2] : std::string_view::npos;
        symbol_cell = line.substr(columns[1], end == std::string_view::npos ? end : end - columns[1]);
    } else {
        std::string_view s = trim(line);
        auto pct = s.find('%');
        if (pct == std::string_view::npos) return std::nullopt;
        overhead = s.substr(0, pct + 1);
        symbol_cell = strip_ipc_tail(s.substr(pct + 1));
    }
    overhead = trim(overhead);
    if (overhead.size() < 2 || overhead.back() != '%') return std::nullopt;
    std::string number(overhead.substr(0, overhead.size() - 1));
    char* end = nullptr;
    double value = std::strtod(number.c_str(), &end);
    if (end == number.c_str() || *end != '\0') return std::nullopt;
    std::string_view rest = trim(symbol_cell);
    if (rest.size() < 4 || rest[0] != '[' || rest[2] != ']') return std::nullopt;
    ProfileEntry e;
    e.space = rest[1];
    e.raw = std::string(trim(rest.substr(3)));
    if (e.raw.empty()) return std::nullopt;
    e.percent = value;
    if (auto name = bpf_program_name(e.raw)) {
        e.symbol = *name;
        e.bpf = true;
    } else {
        e.symbol = e.raw;
    }
    return e;
}

}  // namespace

std::optional<std::string> bpf_program_name(std::string_view symbol) {
    constexpr std::string_view prefix = "bpf_prog_";
    if (symbol.substr(0, prefix.size()) != prefix) return std::nullopt;
    std::string_view rest = symbol.substr(prefix.size());
    auto underscore = rest.find('_');
    if (underscore == std::string_view::npos) return std::nullopt;
    std::string_view tag = rest.substr(0, underscore);
    std::string_view name = rest.substr(underscore + 1);
    // The tag is the program's 8-byte digest in hex.
    if (tag.size() != 16 || !is_hex(tag) || name.empty()) return std::nullopt;
    return std::string(name);
}

const ProfileEntry* Profile::find(std::string_view symbol) const {
    for (const auto& e : entries) {
        if (e.symbol == symbol) return &e;
    }
    return nullptr;
}

double Profile::percent(std::string_view symbol) const {
    const ProfileEntry* e = find(symbol);
    return e ? e->percent : 0.0;
}

Result<Profile> parse_perf_report(const std::string& text) {
    Profile profile;
    std::map<std::string, size_t> index;   // shown name -> position in entries
    std::istringstream in(text);
    std::string line;
    bool any = false;
    std::vector<size_t> columns;
    while (std::getline(in, line)) {
        std::string_view s = trim(line);
        if (s.empty()) continue;
        if (s[0] == '#') {
            if (is_dotted_header(line)) columns = column_starts(line);
            // "# Samples: 19K of event 'cpu-clock:ppp'"
            constexpr std::string_view samples = "# Samples: ";
            if (s.substr(0, samples.size()) == samples) {
                std::string_view v = s.substr(samples.size());
                std::string count(v.substr(0, v.find(' ')));
                double n = std::strtod(count.c_str(), nullptr);
                if (!count.empty() && (count.back() == 'K' || count.back() == 'k')) n *= 1000;
                if (!count.empty() && count.back() == 'M') n *= 1000000;
                profile.samples = static_cast<long long>(n);
                auto q1 = v.find('\'');
                auto q2 = q1 == std::string_view::npos ? q1 : v.find('\'', q1 + 1);
                if (q2 != std::string_view::npos) {
                    std::string_view ev = v.substr(q1 + 1, q2 - q1 - 1);
                    profile.event = std::string(ev.substr(0, ev.find(':')));
                }
            }
            continue;
        }
        auto entry = parse_symbol_line(line, columns);
        if (!entry) continue;
        any = true;
        if (auto it = index.find(entry->symbol); it != index.end()) {
            profile.entries[it->second].percent += entry->percent;
        } else {
            index.emplace(entry->symbol, profile.entries.size());
            profile.entries.push_back(std::move(*entry));
        }
    }
    if (!any) {
        std::string first = text.substr(0, text.find('\n'));
        return make_error("perf report: no symbol lines in its output" +
                          (first.empty() ? std::string() : " (first line: \"" + first + "\")"));
    }
    std::stable_sort(profile.entries.begin(), profile.entries.end(),
                     [](const ProfileEntry& a, const ProfileEntry& b) { return a.percent > b.percent; });
    return profile;
}

}  // namespace sluice::perftest
