// An address with a port as written in the config: "198.18.53.1",
// "198.18.53.1:5353", "2001:2::53", "[2001:2::53]:5353". Egress upstreams,
// the metrics listener and a syslog server are written this way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/diagnostics.h"
#include "config/prefix.h"

namespace YAML {
class Node;
}

namespace sluice::config {

class YamlReader;

struct Endpoint {
    Prefix address;   // a host prefix
    uint16_t port = 0;
    std::string text;
    Location location;
};

// default_port 0: the port must be written. `what` names the endpoint in
// errors ("an upstream resolver's address").
std::optional<Endpoint> read_endpoint(YamlReader& reader, const YAML::Node& node, const std::string& path,
                                      uint16_t default_port, const std::string& what);

}  // namespace sluice::config
