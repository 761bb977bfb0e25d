#include "cli/show_egress.h"

#include <chrono>
#include <iomanip>

#include "cli/control.h"

namespace sluice::cli {

void print_egress(const nlohmann::json& e, std::ostream& out) {
    if (!e.value("enabled", false)) {
        out << "egress: not configured (no egress: section with scopes)\n";
        return;
    }
    out << "DNS proxy: 127.0.0.1 and ::1 port " << e.value("proxy_port", 0) << "; upstreams:";
    for (const auto& u : e.value("upstreams", nlohmann::json::array())) out << ' ' << u.get<std::string>();
    out << "\n";
    const auto& d = e.at("dns");
    out << "queries " << d.value("queries", 0) << " (tcp " << d.value("tcp_queries", 0) << "), allowed "
        << d.value("allowed", 0) << ", denied " << d.value("denied", 0) << ", not governed " << d.value("not_governed", 0)
        << ", malformed " << d.value("malformed", 0) << "\n";
    out << "upstream errors " << d.value("upstream_errors", 0) << ", SERVFAIL sent " << d.value("servfail", 0)
        << ", addresses learned " << d.value("learned_addresses", 0) << ", learn failures "
        << d.value("learn_failures", 0) << "\n";
    const auto& l = e.at("learned");
    out << "learned entries " << l.value("entries", 0) << " (created " << l.value("created", 0) << ", refreshed "
        << l.value("refreshed", 0) << ", expired " << l.value("expired", 0) << ", write failures "
        << l.value("write_failures", 0) << ")\n";
    for (const auto& s : e.value("scopes", nlohmann::json::array())) {
        const auto& rules = s.at("rules");
        out << "\nscope " << s.value("name", "") << " (id " << s.value("id", 0) << ", zone " << s.value("zone", "")
            << ", default " << s.value("default", "") << ", " << rules.size() << " rules)\n";
        for (size_t i = 0; i < rules.size(); ++i) out << "  " << std::setw(4) << i + 1 << "  " << rules[i].get<std::string>() << "\n";
        const auto& learned = s.at("learned");
        if (learned.empty()) out << "  nothing learned\n";
        for (const auto& a : learned) {
            out << "  " << std::left << std::setw(40) << a.value("address", "") << std::right << " expires in "
                << std::fixed << std::setprecision(0) << a.value("expires_in_s", 0.0) << " s";
            const auto& ports = a.at("ports");
            if (!ports.empty()) {
                out << ", ports";
                for (const auto& p : ports) out << ' ' << p.get<std::string>();
            }
            out << "\n";
        }
    }
}

int egress_rule(const std::string& instance, const std::string& action, const std::string& scope,
                const std::string& rule, size_t position, std::ostream& out, std::ostream& err) {
    control::Request request;
    request.command = action == "add"      ? control::Command::egress_add
                      : action == "delete" ? control::Command::egress_delete
                                           : control::Command::egress_replace;
    nlohmann::json arg = {{"scope", scope}, {"rule", rule}};
    if (position) arg[action == "replace" ? "index" : "at"] = position;
    request.argument = arg.dump();
    auto reply = ask_daemon_request(instance, request, std::chrono::seconds(30), err);
    if (!reply) return 1;
    if (!reply->ok) {
        err << "sluice: egress " << action << ": " << reply->message << "\n";
        return 1;
    }
    out << "sluice: " << reply->message << "\n";
    return 0;
}

int show_egress(const std::string& instance, bool json_out, std::ostream& out, std::ostream& err) {
    auto state = daemon_status(instance, err);
    if (!state) return 1;
    const nlohmann::json egress = state->value("egress", nlohmann::json::object());
    if (json_out) out << egress.dump(2) << "\n";
    else print_egress(egress, out);
    return 0;
}

}  // namespace sluice::cli
