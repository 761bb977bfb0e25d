#include "config/domain_name.h"

#include <cctype>

namespace sluice::config {
namespace {

constexpr size_t kMaxName = 253;   // RFC 1035: 255 octets on the wire, 253 as text
constexpr size_t kMaxLabel = 63;

bool label_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

}  // namespace

bool DomainPattern::matches(std::string_view normalized_name) const {
    if (!wildcard) return normalized_name == name;
    // Strictly below: "a.bench.test" for "bench.test", never the apex itself.
    return normalized_name.size() > name.size() + 1 && normalized_name.ends_with(name) &&
           normalized_name[normalized_name.size() - name.size() - 1] == '.';
}

Result<std::string> normalize_domain_name(std::string_view text) {
    std::string name(text);
    if (!name.empty() && name.back() == '.') name.pop_back();
    if (name.empty()) return make_error("\"" + std::string(text) + "\" is not a DNS name (it is empty)");
    if (name.size() > kMaxName)
        return make_error("\"" + std::string(text) + "\" is " + std::to_string(name.size()) +
                          " characters long; a DNS name has at most " + std::to_string(kMaxName));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t start = 0;
    while (start <= name.size()) {
        size_t end = name.find('.', start);
        if (end == std::string::npos) end = name.size();
        const std::string_view label(name.data() + start, end - start);
        const std::string quoted = "\"" + std::string(text) + "\"";
        if (label.empty()) return make_error(quoted + " has an empty label (two dots in a row, or a leading dot)");
        if (label.size() > kMaxLabel)
            return make_error(quoted + ": the label \"" + std::string(label) + "\" is longer than " +
                              std::to_string(kMaxLabel) + " characters");
        for (char c : label)
            if (!label_char(c))
                return make_error(quoted + ": '" + std::string(1, c) + "' is not allowed in a DNS name (letters, digits, '-', '_')");
        if (label.front() == '-' || label.back() == '-')
            return make_error(quoted + ": the label \"" + std::string(label) + "\" starts or ends with '-'");
        start = end + 1;
    }
    return name;
}

Result<DomainPattern> parse_domain_pattern(std::string_view text) {
    DomainPattern pattern;
    std::string_view rest = text;
    if (rest == "*")
        return make_error("\"*\" alone matches every name: set the scope's `default: allow` instead");
    if (rest.starts_with("*.")) {
        pattern.wildcard = true;
        rest.remove_prefix(2);
    }
    if (rest.find('*') != std::string_view::npos)
        return make_error("\"" + std::string(text) +
                          "\": '*' is allowed only as the whole first label (\"*.example.test\")");
    auto name = normalize_domain_name(rest);
    if (!name) return name.error();
    pattern.name = std::move(name.value());
    return pattern;
}

}  // namespace sluice::config
