#include "ha/node_identity.h"

#include <fstream>

namespace sluice::ha {
namespace {

std::string node_names(const config::Ha& ha) {
    std::string out;
    for (const auto& n : ha.nodes) out += (out.empty() ? "" : "|") + n.name;
    return out.empty() ? "NAME" : out;
}

std::string trimmed(std::string s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    const auto last = s.find_last_not_of(" \t\r\n");
    return s.substr(first, last - first + 1);
}

}  // namespace

Result<std::string> resolve_node(const config::Ha& ha, const std::string& cli_node, const std::string& node_file) {
    if (!ha.enabled) {
        if (!cli_node.empty())
            return make_error("--node " + cli_node + " was given, but the config has no ha: section (docs/ha.md)");
        return std::string();
    }
    std::string name = cli_node, from = "--node";
    if (name.empty()) {
        std::ifstream in(node_file);
        if (!in)
            return make_error("the config's ha: section needs this node's name: pass --node " + node_names(ha) +
                              " or write it to " + node_file);
        std::getline(in, name);
        name = trimmed(name);
        from = node_file;
        if (name.empty()) return make_error(node_file + " is empty: write this node's name (" + node_names(ha) + ")");
    }
    if (!ha.find_node(name))
        return make_error(from + ": \"" + name + "\" is not a node of ha.nodes (" + node_names(ha) + ")");
    return name;
}

}  // namespace sluice::ha
