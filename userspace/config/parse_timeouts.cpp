#include "config/sections.h"

namespace sluice::config {

void parse_timeouts(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "timeouts";
    if (!reader.expect_map(node, path)) return;
    Timeouts& t = config.timeouts;
    const std::vector<std::pair<std::string, std::chrono::seconds*>> fields = {
        {"tcp-syn", &t.tcp_syn},   {"tcp-established", &t.tcp_established},
        {"tcp-closing", &t.tcp_closing}, {"tcp-time-wait", &t.tcp_time_wait},
        {"udp", &t.udp},           {"icmp", &t.icmp},
        {"other", &t.other},       {"fragment", &t.fragment}};
    std::vector<std::string> keys;
    for (const auto& f : fields) keys.push_back(f.first);
    reader.check_keys(node, path, keys);
    for (const auto& [key, target] : fields) {
        const YAML::Node value = node[key];
        if (!value) continue;
        const std::string value_path = field_path(path, key);
        auto text = reader.scalar(value, value_path);
        if (!text) continue;
        auto duration = parse_duration(*text);
        if (duration) *target = duration.value();
        else reader.error(value, value_path, duration.error().message);
    }
}

}  // namespace sluice::config
