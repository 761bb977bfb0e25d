// "did you mean" hints for misspelt keys and names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::config {

// Levenshtein distance (insert, delete, substitute each cost 1).
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if it is close enough to be a plausible typo.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

// ` (did you mean "x"?)` or an empty string, ready to append to a message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace sluice::config
