#include "cluster/xdp_links.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

namespace sluice::cluster {

namespace {

struct AttachedProg {
    std::string name;
    std::optional<uint32_t> id;
};

Result<nlohmann::json> parse_list(const std::string& text, const char* what, const char* items) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
        return make_error(std::string(what) + " printed no JSON: " + e.what());
    }
    if (!doc.is_array()) return make_error(std::string(what) + " printed no list of " + items);
    return doc;
}

AttachedProg prog_of(const nlohmann::json& prog) {
    AttachedProg p{prog.value("name", ""), std::nullopt};
    if (prog.contains("id") && prog["id"].is_number_unsigned()) p.id = prog["id"].get<uint32_t>();
    return p;
}

// A link's XDP programs: one (xdp.prog), or several (multi-attach: xdp.attached[].prog).
std::vector<AttachedProg> xdp_progs(const nlohmann::json& link) {
    std::vector<AttachedProg> progs;
    if (!link.is_object() || !link.contains("xdp") || !link["xdp"].is_object()) return progs;
    const auto& xdp = link["xdp"];
    if (xdp.contains("prog") && xdp["prog"].is_object()) progs.push_back(prog_of(xdp["prog"]));
    for (const auto& a : xdp.value("attached", nlohmann::json::array()))
        if (a.is_object() && a.contains("prog") && a["prog"].is_object()) progs.push_back(prog_of(a["prog"]));
    return progs;
}

// The program of each filter that runs one.
std::vector<AttachedProg> tc_progs(const nlohmann::json& filters) {
    std::vector<AttachedProg> progs;
    for (const auto& f : filters) {
        if (!f.is_object() || !f.contains("options") || !f["options"].is_object()) continue;
        const auto& o = f["options"];
        if (o.contains("prog") && o["prog"].is_object()) progs.push_back(prog_of(o["prog"]));
    }
    return progs;
}

}  // namespace

Result<std::vector<std::string>> interfaces_with_xdp(const std::string& ip_json, const std::string& prog_name,
                                                     std::vector<std::string>* other) {
    auto links = parse_list(ip_json, "`ip -j link show`", "links");
    if (!links) return links.error();
    const std::string wanted = prog_name.substr(0, 15);
    std::vector<std::string> found;
    for (const auto& link : *links) {
        const auto progs = xdp_progs(link);
        if (progs.empty()) continue;
        const std::string name = link.value("ifname", "?");
        bool ours = false;
        for (const auto& p : progs) ours = ours || p.name == wanted;
        if (ours) found.push_back(name);
        else if (other) other->push_back(name + ": " + progs.front().name);
    }
    return found;
}

Result<std::optional<uint32_t>> xdp_prog_id(const std::string& ip_json, const std::string& dev,
                                            const std::string& prog_name) {
    auto links = parse_list(ip_json, "`ip -j link show`", "links");
    if (!links) return links.error();
    const std::string wanted = prog_name.substr(0, 15);
    for (const auto& link : *links) {
        if (!link.is_object() || link.value("ifname", "") != dev) continue;
        for (const auto& p : xdp_progs(link))
            if (p.name == wanted && p.id) return p.id;
    }
    return std::optional<uint32_t>{};
}

Result<std::optional<uint32_t>> tc_filter_prog_id(const std::string& tc_json, const std::string& prog_name) {
    auto filters = parse_list(tc_json.empty() ? "[]" : tc_json, "`tc -j filter show`", "filters");
    if (!filters) return filters.error();
    const std::string wanted = prog_name.substr(0, 15);
    for (const auto& p : tc_progs(*filters))
        if (p.name == wanted && p.id) return p.id;
    return std::optional<uint32_t>{};
}

Result<bool> tc_filter_runs(const std::string& tc_json, const std::string& prog_name) {
    auto filters = parse_list(tc_json.empty() ? "[]" : tc_json, "`tc -j filter show`", "filters");
    if (!filters) return filters.error();
    const std::string wanted = prog_name.substr(0, 15);
    for (const auto& p : tc_progs(*filters))
        if (p.name == wanted) return true;
    return false;
}

Result<std::vector<std::string>> interfaces_with_sluice(const NodeCommand& run, std::vector<std::string>* other_xdp) {
    auto links = run({"ip", "-j", "link", "show"});
    if (!links) return links.error();
    auto found = interfaces_with_xdp(*links, kSluiceXdpProgram, other_xdp);
    if (!found) return found;
    nlohmann::json doc = nlohmann::json::parse(*links, nullptr, false);
    for (const auto& link : doc) {
        const std::string name = link.value("ifname", "");
        if (name.empty() || name == "lo" || std::find(found->begin(), found->end(), name) != found->end()) continue;
        auto filters = run({"tc", "-j", "filter", "show", "dev", name, "ingress"});
        if (!filters) continue;  // a link that went away meanwhile, or no qdisc to list
        auto runs = tc_filter_runs(*filters, kSluiceTcProgram);
        if (!runs) return make_error(name + ": " + runs.error().message);
        if (*runs) found->push_back(name);
    }
    return found;
}

Status wait_for_sluice_attached(const NodeCommand& run, const std::vector<std::string>& required) {
    std::string last = "not read yet";
    for (int i = 0; i < 120; ++i) {
        if (auto found = interfaces_with_sluice(run); !found) {
            last = found.error().message;
        } else {
            bool all = std::all_of(required.begin(), required.end(), [&](const std::string& itf) {
                return std::find(found->begin(), found->end(), itf) != found->end();
            });
            if (all && !found->empty()) return {};
            last = "attached on " + std::to_string(found->size()) + " interface(s)";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return make_error("sluice did not attach within 60 s (" + last + ")");
}

}  // namespace sluice::cluster
