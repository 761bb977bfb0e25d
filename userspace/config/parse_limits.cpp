#include <charconv>
#include <string>

#include "config/sections.h"

namespace sluice::config {
namespace {

// Kernel memory one session (both entries, both families) costs at the
// default size, for the range error: what a bigger number will cost.
std::string bytes_per_session() {
    return std::to_string(session_table_bytes_estimate(kDefaultSessions) / kDefaultSessions);
}

std::string range_text() {
    return std::to_string(kMinSessions) + "-" + std::to_string(kMaxSessions);
}

void read_sessions(YamlReader& reader, const YAML::Node& node, const std::string& path, Limits& limits) {
    auto text = reader.scalar(node, path);
    if (!text) return;
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (text->empty() || ec != std::errc{} || end != text->data() + text->size()) {
        reader.error(node, path,
                     "\"" + *text + "\" is not a whole number of sessions (flows per address family, " +
                         range_text() + ")");
        return;
    }
    if (n < kMinSessions || n > kMaxSessions) {
        reader.error(node, path,
                     std::to_string(n) + (n == 1 ? " session" : " sessions") + " is out of range " + range_text() +
                         " (flows per address family; each costs about " + bytes_per_session() +
                         " bytes of kernel memory)");
        return;
    }
    limits.sessions = static_cast<uint32_t>(n);
    limits.sessions_location = location_of(node);
}

}  // namespace

// Table sizes; the session maps are created with them, so the daemon
// refuses a reload that changes one (docs/host-protection.md).
void parse_limits(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "limits";
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"sessions"});
    if (const YAML::Node sessions = node["sessions"])
        read_sessions(reader, sessions, field_path(path, "sessions"), config.limits);
}

}  // namespace sluice::config
