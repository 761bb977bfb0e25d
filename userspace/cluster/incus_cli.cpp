#include "cluster/incus_cli.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace sluice::cluster {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

}  // namespace

bool is_permission_error(const std::string& stderr_text) {
    // Real incus (6.0) says "You don't have the needed permissions to talk to
    // the incus daemon (socket path: ...)" to a user outside incus-admin; a
    // socket it cannot open, "permission denied".
    std::string t = lower(stderr_text);
    return t.find("permission denied") != std::string::npos || t.find("not authorized") != std::string::npos ||
           t.find("don't have the needed permissions") != std::string::npos;
}

std::string parse_incus_status(const std::string& info_output) {
    std::istringstream in(info_output);
    std::string line;
    while (std::getline(in, line)) {
        std::string t = trim(line);
        if (t.rfind("Status:", 0) == 0) {
            std::string v = trim(t.substr(7));
            std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::toupper(c); });
            return v;
        }
    }
    return "";
}

IncusCli::IncusCli(CommandRunner runner) : runner_(std::move(runner)) {}

Result<CommandResult> IncusCli::run(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
    std::vector<std::string> direct{"incus"};
    direct.insert(direct.end(), args.begin(), args.end());
    std::vector<std::string> via_sg{"sg", "incus-admin", "-c", shell_join(direct)};
    if (use_sg_) return runner_(via_sg, timeout);
    auto r = runner_(direct, timeout);
    if (!r || r->exit_status == 0 || !is_permission_error(r->err)) return r;
    // The seed's rule: incus commands need `sg incus-admin -c "..."` when
    // permission errors occur. Retry once; if that worked, keep using it.
    auto retry = runner_(via_sg, timeout);
    if (!retry) return retry;
    if (retry->exit_status != 0 && (is_permission_error(retry->err) || lower(retry->err).find("password") != std::string::npos)) {
        // sg could not switch either: this user is not in incus-admin. Say
        // so, with incus's own words, rather than sg's "Invalid password".
        retry->err = trim(r->err) + " (retried as `sg incus-admin -c`: " + trim(retry->err) +
                     "). Add this user to the incus-admin group (usermod -aG incus-admin USER) or run as root.";
        return retry;
    }
    if (!is_permission_error(retry->err)) use_sg_ = true;
    return retry;
}

Result<std::string> IncusCli::instance_status(const std::string& qualified_name) {
    auto r = run({"info", qualified_name}, std::chrono::seconds(30));
    if (!r) return r.error();
    if (r->timed_out) return make_error("incus info " + qualified_name + " timed out");
    if (r->exit_status != 0) {
        std::string why = trim(r->err);
        return make_error("incus info " + qualified_name + " failed" + (why.empty() ? "" : ": " + why));
    }
    std::string status = parse_incus_status(r->out);
    if (status.empty()) return make_error("incus info " + qualified_name + " printed no 'Status:' line");
    return status;
}

}  // namespace sluice::cluster
