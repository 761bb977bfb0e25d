// `metrics:`, `flow-log:`, `default-log:` and the policies' `log:`
// (docs/operations.md).

#include "config/endpoint.h"
#include "config/sections.h"

#include "observe.h"

namespace sluice::config {
namespace {

const std::vector<std::pair<std::string, int>>& facilities() {
    static const std::vector<std::pair<std::string, int>> list = {
        {"user", 1},    {"daemon", 3},  {"auth", 4},    {"local0", 16}, {"local1", 17}, {"local2", 18},
        {"local3", 19}, {"local4", 20}, {"local5", 21}, {"local6", 22}, {"local7", 23}};
    return list;
}

void read_syslog(YamlReader& reader, const YAML::Node& node, const std::string& path, FlowLogConfig& log) {
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"socket", "server", "facility"});
    if (const YAML::Node socket = node["socket"]) {
        if (auto text = reader.scalar(socket, field_path(path, "socket"))) {
            if (!text->starts_with("/")) reader.error(socket, field_path(path, "socket"), "write an absolute path");
            else log.syslog_socket = *text;
        }
    }
    if (const YAML::Node server = node["server"])
        log.syslog_server = read_endpoint(reader, server, field_path(path, "server"), 514, "a syslog server's address");
    if (const YAML::Node facility = node["facility"]) {
        std::vector<std::string> names;
        for (const auto& [name, code] : facilities()) names.push_back(name);
        if (auto text = reader.choice(facility, field_path(path, "facility"), names))
            for (const auto& [name, code] : facilities())
                if (name == *text) log.facility = code;
    }
}

}  // namespace

uint32_t read_log_flags(YamlReader& reader, const YAML::Node& node, const std::string& path) {
    static const std::vector<std::pair<std::string, uint32_t>> events = {
        {"open", FLOW_LOG_OPEN}, {"close", FLOW_LOG_CLOSE}, {"deny", FLOW_LOG_DENY}};
    uint32_t flags = 0;
    if (node.IsMap()) {
        reader.check_keys(node, path, {"open", "close", "deny"});
        for (const auto& [name, flag] : events)
            if (const YAML::Node v = node[name])
                if (auto on = reader.boolean(v, field_path(path, name)); on && *on) flags |= flag;
        return flags;
    }
    // The short form: `log: [open, close]`, `log: deny`.
    for (const auto& [item, item_path] : reader.scalar_list(node, path, "name open, close and/or deny")) {
        bool known = false;
        for (const auto& [name, flag] : events)
            if (item.Scalar() == name) {
                flags |= flag;
                known = true;
            }
        if (!known)
            reader.error(item, item_path,
                         "\"" + item.Scalar() + "\" is not a flow event; log open, close and/or deny");
    }
    return flags;
}

void parse_metrics(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "metrics";
    config.metrics.written = true;
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"listen"});
    if (auto listen = reader.required(node, path, "listen"))
        config.metrics.listen =
            read_endpoint(reader, *listen, field_path(path, "listen"), 0, "an address to serve /metrics on");
}

void parse_flow_log(YamlReader& reader, const YAML::Node& node, Config& config) {
    const std::string path = "flow-log";
    FlowLogConfig& log = config.flow_log;
    log.location = location_of(node);
    if (!reader.expect_map(node, path)) return;
    reader.check_keys(node, path, {"output", "path", "max-size", "keep", "syslog", "rate-limit", "burst"});
    if (const YAML::Node output = node["output"]) {
        if (auto text = reader.choice(output, field_path(path, "output"), {"file", "syslog", "stdout"}))
            log.output = *text == "file"     ? FlowLogOutputKind::file
                         : *text == "syslog" ? FlowLogOutputKind::syslog
                                             : FlowLogOutputKind::stdout_stream;
    }
    if (const YAML::Node file = node["path"]) {
        if (auto text = reader.scalar(file, field_path(path, "path"))) {
            if (!text->starts_with("/")) reader.error(file, field_path(path, "path"), "write an absolute path");
            else log.path = *text;
        }
    }
    if (const YAML::Node size = node["max-size"]) {
        if (auto text = reader.scalar(size, field_path(path, "max-size"))) {
            auto bytes = parse_size(*text);
            if (!bytes) reader.error(size, field_path(path, "max-size"), bytes.error().message);
            else if (bytes.value() < 4096)
                reader.error(size, field_path(path, "max-size"), "rotate at 4KiB or more (\"100MiB\")");
            else log.max_bytes = bytes.value();
        }
    }
    if (const YAML::Node keep = node["keep"])
        if (auto n = reader.whole_number(keep, field_path(path, "keep"), 0, 1000, "a number of rotated files"))
            log.keep = static_cast<unsigned>(*n);
    if (const YAML::Node syslog = node["syslog"]) read_syslog(reader, syslog, field_path(path, "syslog"), log);
    if (const YAML::Node rate = node["rate-limit"])
        if (auto n = reader.whole_number(rate, field_path(path, "rate-limit"), 0, 10'000'000, "a number of events per second per CPU"))
            log.rate_limit = static_cast<uint32_t>(*n);
    if (const YAML::Node burst = node["burst"])
        if (auto n = reader.whole_number(burst, field_path(path, "burst"), 1, 10'000'000, "a number of events"))
            log.burst = static_cast<uint32_t>(*n);
}

void parse_default_log(YamlReader& reader, const YAML::Node& node, Config& config) {
    config.default_log = read_log_flags(reader, node, "default-log");
    if (config.default_log & (FLOW_LOG_OPEN | FLOW_LOG_CLOSE))
        reader.error(node, "default-log",
                     "the default action opens no session: only deny events can be logged (`default-log: { deny: true }`)");
}

}  // namespace sluice::config
