#include "cluster/xdp_links.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

namespace sluice::cluster {

Result<std::vector<std::string>> interfaces_with_xdp(const std::string& ip_json, const std::string& prog_name,
                                                     std::vector<std::string>* other) {
    nlohmann::json links;
    try {
        links = nlohmann::json::parse(ip_json);
    } catch (const std::exception& e) {
        return make_error(std::string("`ip -j link show` printed no JSON: ") + e.what());
    }
    if (!links.is_array()) return make_error("`ip -j link show` printed no list of links");
    const std::string wanted = prog_name.substr(0, 15);
    std::vector<std::string> found;
    for (const auto& link : links) {
        if (!link.is_object() || !link.contains("xdp")) continue;
        const std::string name = link.value("ifname", "?");
        // One program: xdp.prog; several (multi-attach): xdp.attached[].prog.
        std::vector<std::string> progs;
        const auto& xdp = link["xdp"];
        if (xdp.contains("prog")) progs.push_back(xdp["prog"].value("name", ""));
        for (const auto& a : xdp.value("attached", nlohmann::json::array()))
            if (a.contains("prog")) progs.push_back(a["prog"].value("name", ""));
        bool ours = false;
        for (const auto& p : progs) ours = ours || p == wanted;
        if (ours) found.push_back(name);
        else if (other && !progs.empty()) other->push_back(name + ": " + progs.front());
    }
    return found;
}

Result<bool> tc_filter_runs(const std::string& tc_json, const std::string& prog_name) {
    nlohmann::json filters;
    try {
        filters = nlohmann::json::parse(tc_json.empty() ? "[]" : tc_json);
    } catch (const std::exception& e) {
        return make_error(std::string("`tc -j filter show` printed no JSON: ") + e.what());
    }
    if (!filters.is_array()) return make_error("`tc -j filter show` printed no list of filters");
    const std::string wanted = prog_name.substr(0, 15);
    for (const auto& f : filters) {
        if (!f.is_object() || !f.contains("options") || !f["options"].is_object()) continue;
        const auto& o = f["options"];
        if (o.contains("prog") && o["prog"].is_object() && o["prog"].value("name", "") == wanted) return true;
    }
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
