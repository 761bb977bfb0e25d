// DNS names as the egress policy writes and matches them (docs/egress.md):
// an exact name ("mirror.bench.test") or a wildcard over the names below a
// suffix ("*.bench.test", which does not match "bench.test" itself). Names
// compare lower-cased without the root's trailing dot, as DNS compares them.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::config {

struct DomainPattern {
    std::string name;       // normalized; for a wildcard, the suffix after "*."
    bool wildcard = false;

    // True when `normalized_name` (see normalize_domain_name) is this name, or
    // for a wildcard lies strictly below it.
    bool matches(std::string_view normalized_name) const;
    std::string to_string() const { return wildcard ? "*." + name : name; }
    auto operator<=>(const DomainPattern&) const = default;
};

// Lower-cased, the trailing dot removed, checked: 1-253 characters, labels of
// 1-63 letters, digits, '-' (not first or last) or '_'. The error says which
// label is wrong and why.
Result<std::string> normalize_domain_name(std::string_view text);

// A name or "*." + name; "*" alone and a '*' anywhere else are errors.
Result<DomainPattern> parse_domain_pattern(std::string_view text);

}  // namespace sluice::config
