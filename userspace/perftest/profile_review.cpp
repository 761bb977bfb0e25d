#include "perftest/profile_review.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

namespace sluice::perftest {

namespace {

std::string where(const std::string& origin, const YAML::Node& node) {
    auto mark = node.Mark();
    if (mark.line < 0) return origin;
    return origin + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

Result<double> number(const std::string& origin, const YAML::Node& node, const std::string& path) {
    try {
        return node.as<double>();
    } catch (const YAML::Exception&) {
        return make_error(where(origin, node) + ": " + path + ": expected a number (percent)");
    }
}

}  // namespace

Result<ProfileExpectations> parse_profile_expectations(const std::string& yaml_text, const std::string& origin) {
    YAML::Node root;
    try {
        root = YAML::Load(yaml_text);
    } catch (const YAML::ParserException& e) {
        return make_error(origin + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                          ": " + e.msg);
    }
    if (!root.IsMap()) return make_error(origin + ": expected a mapping with `symbols:`");
    ProfileExpectations out;
    if (root["environment"]) out.environment = root["environment"].as<std::string>("");
    if (root["source"]) out.source = root["source"].as<std::string>("");
    const YAML::Node symbols = root["symbols"];
    if (!symbols || !symbols.IsSequence()) return make_error(where(origin, root) + ": symbols: expected a list");
    for (size_t i = 0; i < symbols.size(); ++i) {
        const YAML::Node s = symbols[i];
        std::string path = "symbols[" + std::to_string(i) + "]";
        if (!s.IsMap()) return make_error(where(origin, s) + ": " + path + ": expected a mapping");
        SymbolExpectation e;
        if (!s["symbol"] || !s["symbol"].IsScalar()) return make_error(where(origin, s) + ": " + path + ": missing symbol");
        e.symbol = s["symbol"].as<std::string>();
        const YAML::Node healthy = s["healthy"];
        if (!healthy || !healthy.IsSequence() || healthy.size() != 2) {
            return make_error(where(origin, s) + ": " + path + ".healthy: expected [min, max] in percent");
        }
        auto lo = number(origin, healthy[0], path + ".healthy[0]");
        if (!lo) return lo.error();
        auto hi = number(origin, healthy[1], path + ".healthy[1]");
        if (!hi) return hi.error();
        if (*lo > *hi) return make_error(where(origin, healthy) + ": " + path + ".healthy: min is above max");
        e.healthy_min = *lo;
        e.healthy_max = *hi;
        if (!s["red-flag"]) return make_error(where(origin, s) + ": " + path + ": missing red-flag");
        auto red = number(origin, s["red-flag"], path + ".red-flag");
        if (!red) return red.error();
        if (*red < e.healthy_max) {
            return make_error(where(origin, s["red-flag"]) + ": " + path + ".red-flag: below the healthy range");
        }
        e.red_flag = *red;
        if (s["meaning"]) e.meaning = s["meaning"].as<std::string>("");
        out.symbols.push_back(std::move(e));
    }
    return out;
}

Result<ProfileExpectations> load_profile_expectations(const std::string& path) {
    std::ifstream in(path);
    if (!in) return make_error(path + ": cannot open the profile expectations");
    std::stringstream buffer;
    buffer << in.rdbuf();
    return parse_profile_expectations(buffer.str(), path);
}

const char* to_string(SymbolStatus status) {
    switch (status) {
        case SymbolStatus::ok: return "ok";
        case SymbolStatus::low: return "low";
        case SymbolStatus::high: return "high";
        case SymbolStatus::red_flag: return "red-flag";
        case SymbolStatus::absent: return "absent";
    }
    return "?";
}

SymbolStatus classify(const SymbolExpectation& expected, std::optional<double> percent) {
    double value = percent.value_or(0.0);
    if (value > expected.red_flag) return SymbolStatus::red_flag;
    if (!percent) return expected.healthy_min <= 0 ? SymbolStatus::ok : SymbolStatus::absent;
    if (value < expected.healthy_min) return SymbolStatus::low;
    if (value > expected.healthy_max) return SymbolStatus::high;
    return SymbolStatus::ok;
}

std::vector<SymbolReview> review_profile(const Profile& profile, const ProfileExpectations& expectations) {
    std::vector<SymbolReview> out;
    for (const auto& e : expectations.symbols) {
        SymbolReview r;
        r.expected = e;
        const ProfileEntry* entry = profile.find(e.symbol);
        r.present = entry != nullptr;
        r.percent = entry ? entry->percent : 0.0;
        r.status = classify(e, entry ? std::optional<double>(entry->percent) : std::nullopt);
        out.push_back(std::move(r));
    }
    return out;
}

bool any_red_flag(const std::vector<SymbolReview>& reviews) {
    for (const auto& r : reviews) {
        if (r.status == SymbolStatus::red_flag) return true;
    }
    return false;
}

}  // namespace sluice::perftest
