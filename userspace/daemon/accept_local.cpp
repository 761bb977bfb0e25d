#include "daemon/accept_local.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace sluice {

bool config_has_nat(const config::Nat& nat) {
    return !nat.source.empty() || !nat.destination.empty() || !nat.static_rules.empty() || !nat.nptv6.empty();
}

Status enable_accept_local(const std::string& ifname, const std::string& proc_sys) {
    const std::string path = proc_sys + "/net/ipv4/conf/" + ifname + "/accept_local";
    {
        std::ifstream in(path);
        std::string current;
        if (in && std::getline(in, current) && current == "1") return {};
    }
    std::ofstream out(path);
    if (out) out << "1\n";
    out.close();
    if (!out) return make_error("cannot set accept_local on " + ifname + " (" + path + "): " + std::strerror(errno));
    return {};
}

std::vector<std::string> enable_accept_local_all(const std::vector<std::string>& ifnames,
                                                 const std::string& proc_sys) {
    std::vector<std::string> failures;
    for (const auto& name : ifnames) {
        if (auto s = enable_accept_local(name, proc_sys); !s) failures.push_back(s.error().message);
    }
    return failures;
}

}  // namespace sluice
