#include "config/suggest.h"

#include <algorithm>
#include <numeric>

namespace sluice::config {

size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), size_t{0});
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t above = row[j];
            size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
    // Two edits catch the usual typos; for very short words allow fewer, or every
    // two-letter word would "match" every other one.
    const size_t limit = std::min<size_t>(2, word.size() > 1 ? word.size() - 1 : 0);
    std::optional<std::string> best;
    size_t best_distance = limit + 1;
    for (const auto& candidate : candidates) {
        size_t d = edit_distance(word, candidate);
        // A truncated or singular name ("policy" for "policies") is a near miss too.
        if (word.size() >= 4 && candidate.size() > word.size() &&
            edit_distance(word, candidate.substr(0, word.size())) <= 1)
            d = std::min<size_t>(d, 2);
        if (d < best_distance) {
            best_distance = d;
            best = candidate;
        }
    }
    return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
    auto match = closest_match(word, candidates);
    if (!match) return "";
    return " (did you mean \"" + *match + "\"?)";
}

}  // namespace sluice::config
