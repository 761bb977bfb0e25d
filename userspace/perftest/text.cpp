#include "perftest/text.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace sluice::perftest {

std::string fixed(double value, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string markdown_table(const std::vector<std::vector<std::string>>& rows) {
    if (rows.empty()) return "";
    size_t columns = rows.front().size();
    std::vector<size_t> width(columns, 3);
    auto cell_width = [](const std::string& s) {
        size_t n = 0;
        for (unsigned char c : s) n += (c & 0xC0) != 0x80;
        return n;
    };
    for (const auto& row : rows) {
        for (size_t i = 0; i < columns && i < row.size(); ++i) width[i] = std::max(width[i], cell_width(row[i]));
    }
    std::ostringstream out;
    auto emit = [&](const std::vector<std::string>& row) {
        out << "|";
        for (size_t i = 0; i < columns; ++i) {
            const std::string cell = i < row.size() ? row[i] : "";
            out << " " << cell << std::string(width[i] - cell_width(cell), ' ') << " |";
        }
        out << "\n";
    };
    emit(rows.front());
    out << "|";
    for (size_t i = 0; i < columns; ++i) out << std::string(width[i] + 2, '-') << "|";
    out << "\n";
    for (size_t r = 1; r < rows.size(); ++r) emit(rows[r]);
    return out.str();
}

}  // namespace sluice::perftest
