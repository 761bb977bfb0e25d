#include "common/option_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace sluice {
namespace {

// The whole text as a finite number, or nothing.
bool parse_number(const std::string& text, double& out) {
    if (text.empty()) return false;
    char* end = nullptr;
    errno = 0;
    out = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && errno == 0 && std::isfinite(out);
}

}  // namespace

CLI::Validator positive_number() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            double v = 0;
            if (parse_number(text, v) && v > 0) return {};
            return "\"" + text + "\" is not a number above 0";
        },
        "NUMBER > 0");
}

CLI::Validator non_negative_number() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            double v = 0;
            if (parse_number(text, v) && v >= 0) return {};
            return "\"" + text + "\" is not a number of 0 or more";
        },
        "NUMBER >= 0");
}

CLI::Validator whole_number(const std::string& meaning) {
    return CLI::Validator(
        [meaning](std::string& text) -> std::string {
            // At most 18 digits: any of them fits the unsigned 64-bit options.
            if (!text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string::npos)
                return {};
            return "\"" + text + "\" is not a whole number of 0 or more (" + meaning + ")";
        },
        "N");
}

}  // namespace sluice
