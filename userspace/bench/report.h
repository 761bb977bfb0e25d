// What every benchmark report shares: Markdown tables, the machine line, the
// time, and writing the report where the operator asked.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "perftest/text.h"

namespace sluice::bench {

class MarkdownTable {
public:
    explicit MarkdownTable(std::vector<std::string> header) : header_(std::move(header)) {}
    void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
    std::string str() const;

private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

std::string utc_now();      // "2026-12-02 07:15 UTC"
std::string machine_line();  // "6.18.0, 2 CPUs, <model>"
std::string load_average();  // "0.52 0.40 0.31"
using perftest::fixed;  // 5.934 with 2 decimals -> "5.93"

// Writes `text` to `path` (its folder created).
Status write_report(const std::string& path, const std::string& text);

}  // namespace sluice::bench
