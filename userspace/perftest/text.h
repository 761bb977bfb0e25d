// Text helpers shared by perf-test's tables: fixed-point numbers and
// markdown tables padded to their widest cell.
#pragma once

#include <string>
#include <vector>

namespace sluice::perftest {

// 5.934 with 2 decimals -> "5.93".
std::string fixed(double value, int decimals);

// rows[0] is the header; every column padded to its widest cell (counted in
// code points, so "–" is one column wide).
std::string markdown_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace sluice::perftest
