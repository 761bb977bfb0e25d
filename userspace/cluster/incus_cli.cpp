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

bool is_daemon_not_started(const std::string& stderr_text) {
    return lower(stderr_text).find("daemon doesn't appear to be started") != std::string::npos;
}

bool is_incus_not_found(const std::string& stderr_text) {
    // incus 6.0: "Error: Instance not found", "Error: Network not found",
    // "Error: Not Found" (an image alias).
    const std::string t = lower(stderr_text);
    return t.find(" not found") != std::string::npos || t.find("error: not found") != std::string::npos;
}

std::string without_first_run_notice(const std::string& stderr_text) {
    // incus (cmd/incus/main.go) prints, once per user without ~/.config/incus:
    //   If this is your first time running Incus on this machine, you should also run: incus admin init
    //   To start your first container, try: incus launch images:ubuntu/22.04
    //   Or for a virtual machine: incus launch images:ubuntu/22.04 --vm
    //   <blank line>
    // Dropped from its first line up to and including the blank line.
    std::istringstream in(stderr_text);
    std::string out, line;
    bool in_notice = false;
    while (std::getline(in, line)) {
        if (!in_notice && line.rfind("If this is your first time running Incus", 0) == 0) {
            in_notice = true;
            continue;
        }
        if (in_notice) {
            if (trim(line).empty()) in_notice = false;
            continue;
        }
        out += line;
        if (!in.eof()) out += "\n";
    }
    return out;
}

std::string explain_incus_stderr(const std::string& stderr_text) {
    std::string text = without_first_run_notice(stderr_text);
    if (is_daemon_not_started(text) && text.find(kStartIncusAdvice) == std::string::npos) {
        text = trim(text) + ": " + kStartIncusAdvice + "\n";
    }
    return text;
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
    auto r = run_with_retry(args, timeout);
    if (r && r->exit_status != 0) r->err = explain_incus_stderr(r->err);
    return r;
}

Result<CommandResult> IncusCli::run_with_retry(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
    std::vector<std::string> direct{"incus"};
    direct.insert(direct.end(), args.begin(), args.end());
    std::vector<std::string> via_sg{"sg", "incus-admin", "-c", shell_join(direct)};
    // incus's first-run notice off each stderr before it is looked at or combined.
    auto call = [&](const std::vector<std::string>& argv) {
        auto result = runner_(argv, timeout);
        if (result) result->err = without_first_run_notice(result->err);
        return result;
    };
    if (use_sg_) return call(via_sg);
    auto r = call(direct);
    if (!r || r->exit_status == 0 || !is_permission_error(r->err)) return r;
    // The seed's rule: incus commands need `sg incus-admin -c "..."` when
    // permission errors occur. Retry once; if that worked, keep using it.
    auto retry = call(via_sg);
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
