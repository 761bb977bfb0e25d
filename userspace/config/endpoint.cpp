#include "config/endpoint.h"

#include <algorithm>
#include <charconv>

#include "config/yaml_reader.h"

namespace sluice::config {

std::optional<Endpoint> read_endpoint(YamlReader& reader, const YAML::Node& node, const std::string& path,
                                      uint16_t default_port, const std::string& what) {
    auto text = reader.scalar(node, path);
    if (!text) return std::nullopt;
    std::string host = *text, port;
    bool port_written = false;
    if (host.starts_with("[")) {
        const auto close = host.find(']');
        if (close == std::string::npos || (close + 1 < host.size() && host[close + 1] != ':')) {
            reader.error(node, path, "\"" + *text + "\": write an IPv6 address with a port as [2001:2::53]:5353");
            return std::nullopt;
        }
        port_written = close + 1 < host.size();
        port = port_written ? host.substr(close + 2) : "";
        host = host.substr(1, close - 1);
    } else if (std::count(host.begin(), host.end(), ':') == 1) {
        port_written = true;
        port = host.substr(host.find(':') + 1);
        host = host.substr(0, host.find(':'));
    }
    auto address = parse_address(host);
    if (!address) {
        reader.error(node, path, "\"" + *text + "\" is not " + what + ": " + address.error().message);
        return std::nullopt;
    }
    Endpoint endpoint{address.value(), default_port, *text, location_of(node)};
    if (!port_written && default_port == 0) {
        reader.error(node, path,
                     "\"" + *text + "\" has no port: write ADDRESS:PORT (IPv6 as [2001:2::1]:PORT)");
        return std::nullopt;
    }
    if (port_written) {
        unsigned n = 0;
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
        if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || n == 0 || n > 65535) {
            reader.error(node, path, "\"" + *text + "\": the port must be 1-65535");
            return std::nullopt;
        }
        endpoint.port = static_cast<uint16_t>(n);
    }
    return endpoint;
}

}  // namespace sluice::config
