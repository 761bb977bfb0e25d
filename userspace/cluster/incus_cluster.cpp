#include "cluster/incus_cluster.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "cluster/netns_cluster.h"
#include "cluster/process.h"
#include "cluster/xdp_links.h"

namespace sluice::cluster {

namespace fs = std::filesystem;

namespace {

using Argv = std::vector<std::string>;

constexpr auto kIncusTimeout = std::chrono::seconds(120);
constexpr const char* kFirewallConfig = "/etc/sluice/sluice.yaml";
constexpr const char* kPackageInInstance = "/root/sluice.deb";

// Addresses per role and interface (docs/cluster.md); the same as the netns
// cluster's.
struct Address {
    std::string ifname, v4, v6;
};

std::vector<Address> addresses_of(const std::string& role) {
    if (role == "lan-host") return {{"eth1", "198.18.1.10/24", "2001:2:0:1::10/64"}};
    if (role == "wan-host") return {{"eth1", "198.18.100.200/24", "2001:2:0:100::200/64"}};
    const std::string last = role == "fw1" ? "2" : "1";
    return {{"lan0", "198.18.1." + last + "/24", "2001:2:0:1::" + last + "/64"},
            {"wan0", "198.18.100." + last + "/24", "2001:2:0:100::" + last + "/64"},
            {"fab0", "198.18.2." + last + "/30", "2001:2:0:2::" + last + "/64"}};
}

std::string qualify(const std::string& remote, const std::string& name) {
    return remote.empty() || name.find(':') != std::string::npos ? name : remote + ":" + name;
}

std::string bare(const std::string& qualified) {
    auto colon = qualified.find(':');
    return colon == std::string::npos ? qualified : qualified.substr(colon + 1);
}

// Fixed, locally administered MACs (a VM's cloud-init names its NICs by them).
std::string mac_of(const std::string& role, size_t nic) {
    const std::map<std::string, std::string> node{{"lan-host", "20"}, {"fw0", "10"}, {"fw1", "11"}, {"wan-host", "30"}};
    return "02:5c:00:" + node.at(role) + ":0" + std::to_string(nic + 1) + ":00";
}

// cloud-init v2 network config for a VM: NICs named by MAC, no addresses
// (they are set from inside, as for containers), no DHCP.
std::string vm_network_config(const IncusNodePlan& node) {
    std::ostringstream o;
    o << "version: 2\nethernets:\n";
    for (size_t i = 0; i < node.nics.size(); ++i)
        o << "  " << node.nics[i].first << ": { match: { macaddress: \"" << mac_of(node.role, i)
          << "\" }, set-name: " << node.nics[i].first << ", dhcp4: false, dhcp6: false, accept-ra: false }\n";
    return o.str();
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
    return s;
}

std::string describe(const Result<CommandResult>& r) {
    if (!r) return r.error().message;
    if (r->timed_out) return "timed out";
    return "exit status " + std::to_string(r->exit_status) + (r->err.empty() ? "" : ": " + trim(r->err));
}

// The sluice package for the firewalls: the option, else the newest
// sluice_*.deb in the build directory this binary came from, made there
// with CPack when missing or older than the binary, and then checked
// (check_sluice_package; `up` checks a given one first of all).
Result<std::string> find_package(const std::string& given, std::ostream& out) {
    if (!given.empty()) return fs::absolute(given).string();
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    const fs::path build = exe.parent_path().parent_path();
    if (ec || !fs::exists(build / "CPackConfig.cmake")) {
        return make_error("no sluice package given and this sluice (" + exe.string() +
                          ") was not built in a CMake build directory: pass --package FILE (a sluice_*.deb)");
    }
    auto newest = [&]() {
        fs::path best;
        for (const auto& e : fs::directory_iterator(build, ec)) {
            const std::string name = e.path().filename().string();
            if (name.rfind("sluice_", 0) == 0 && e.path().extension() == ".deb" &&
                (best.empty() || fs::last_write_time(e.path()) > fs::last_write_time(best)))
                best = e.path();
        }
        return best;
    };
    fs::path deb = newest();
    if (deb.empty() || fs::last_write_time(deb) < fs::last_write_time(exe)) {
        out << "cluster: building the sluice package (cpack -G DEB in " << build.string() << ")\n";
        auto r = run_local({"cpack", "-G", "DEB", "--config", (build / "CPackConfig.cmake").string(), "-B",
                            build.string()},
                           std::chrono::minutes(5));
        if (!r || r->exit_status != 0) return make_error("cpack -G DEB failed: " + describe(r));
        deb = newest();
        if (deb.empty()) return make_error("cpack ran but left no sluice_*.deb in " + build.string());
    }
    if (auto s = check_sluice_package(deb.string()); !s) return s.error();
    return deb.string();
}

// Whether dpkg's output says the package's dependencies are missing
// ("dependency problems prevent configuration of sluice", "sluice depends
// on libxdp1; however: Package libxdp1 is not installed").
bool is_dependency_problem(const std::string& dpkg_output) {
    return dpkg_output.find("dependency problems") != std::string::npos ||
           dpkg_output.find(" depends on ") != std::string::npos;
}

// Instances and networks `up` creates carry this key (the environment's
// name): `up` only adopts, and `down` only deletes, what carries it, never a
// user's own instance that merely has the same name.
constexpr const char* kOwnerKey = "user.sluice.cluster";

// The incus objects present (`incus list` / `incus network list`, JSON):
// name -> the environment that made it ("" when sluice did not).
Result<std::map<std::string, std::string>> incus_names(IncusCli& incus, bool networks, const std::string& remote) {
    Argv args;
    if (networks) args.push_back("network");
    args.push_back("list");
    if (!remote.empty()) args.push_back(remote + ":");
    args.insert(args.end(), {"--format", "json"});
    const std::string what = networks ? "incus network list" : "incus list";
    auto r = incus.run(args, kIncusTimeout);
    if (!r || r->exit_status != 0) return make_error(what + ": " + describe(r));
    std::map<std::string, std::string> names;
    try {
        for (const auto& item : nlohmann::json::parse(r->out)) {
            std::string owner;
            if (item.contains("config") && item["config"].is_object()) owner = item["config"].value(kOwnerKey, "");
            names[item.value("name", "")] = owner;
        }
    } catch (const std::exception& e) {
        return make_error(what + " printed no JSON: " + e.what());
    }
    return names;
}

// The instances and networks that exist now.
struct Present {
    std::map<std::string, std::string> instances, networks;  // name -> owner environment
};

Result<Present> present_objects(IncusCli& incus, const std::string& remote) {
    auto networks = incus_names(incus, true, remote);
    if (!networks) return networks.error();
    auto instances = incus_names(incus, false, remote);
    if (!instances) return instances.error();
    return Present{*instances, *networks};
}

class Runner {
public:
    Runner(IncusCli& incus, bool dry_run, std::ostream& out) : incus_(incus), dry_(dry_run), out_(out) {}

    Status incus(const Argv& args, std::chrono::seconds timeout = kIncusTimeout) {
        if (dry_) {
            out_ << shell_join(with_incus(args)) << "\n";
            return {};
        }
        auto r = incus_.run(args, timeout);
        if (!r || r->exit_status != 0 || r->timed_out)
            return make_error("`" + shell_join(with_incus(args)) + "` failed: " + describe(r));
        return {};
    }
    // Runs argv in the instance; its output on success.
    Result<std::string> exec(const std::string& instance, const Argv& argv,
                             std::chrono::seconds timeout = kIncusTimeout) {
        Argv args{"exec", instance, "--"};
        args.insert(args.end(), argv.begin(), argv.end());
        if (dry_) {
            out_ << shell_join(with_incus(args)) << "\n";
            return std::string();
        }
        auto r = incus_.run(args, timeout);
        if (!r || r->exit_status != 0 || r->timed_out)
            return make_error(bare(instance) + ": `" + shell_join(argv) + "` failed: " + describe(r));
        return r->out;
    }
    // Runs argv in the instance and returns what it did, whatever its status.
    Result<CommandResult> probe(const std::string& instance, const Argv& argv, std::chrono::seconds timeout) {
        Argv args{"exec", instance, "--"};
        args.insert(args.end(), argv.begin(), argv.end());
        return incus_.run(args, timeout);
    }
    bool dry() const { return dry_; }

private:
    static Argv with_incus(const Argv& args) {
        Argv a{"incus"};
        a.insert(a.end(), args.begin(), args.end());
        return a;
    }
    IncusCli& incus_;
    bool dry_;
    std::ostream& out_;
};

// Waits until the instance runs commands (and its systemd, if any, is up).
Status wait_ready(Runner& run, const std::string& instance) {
    if (run.dry()) return {};
    std::string last;
    for (int i = 0; i < 120; ++i) {
        auto r = run.probe(instance, {"systemctl", "is-system-running"}, std::chrono::seconds(10));
        // "running"; "degraded" (some unit failed, e.g. binfmt in a
        // container) is up enough; "starting" is not yet.
        last = r ? trim(r->out) : r.error().message;
        if (last == "running" || last == "degraded") return {};
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return make_error(bare(instance) + " did not finish booting within 60 s (systemctl is-system-running: " + last + ")");
}

// Waits until sluice's pipeline is on the firewall's lan0 and wan0.
Status wait_attached(Runner& run, const std::string& instance) {
    if (run.dry()) return {};
    auto s = wait_for_sluice_attached(
        [&](const Argv& argv) { return run.exec(instance, argv, std::chrono::seconds(10)); }, {"lan0", "wan0"});
    if (s) return {};
    auto journal = run.exec(instance, {"journalctl", "-u", "sluice", "-n", "20", "--no-pager"});
    return make_error(bare(instance) + " (lan0, wan0): " + s.error().message +
                      (journal ? "; its journal:\n" + *journal : ""));
}

Status install_firewall(Runner& run, const IncusNodePlan& node, const std::string& package, const std::string& config) {
    if (auto s = run.incus({"file", "push", package, node.name + kPackageInInstance}); !s) return s;
    if (auto r = run.exec(node.name, {"dpkg", "-i", kPackageInInstance}); !r) {
        // The lab has no mirror: what dpkg cannot find, the image must carry.
        if (is_dependency_problem(r.error().message))
            return make_error(r.error().message +
                              "\n(the image must carry sluice's dependencies: build it with scripts/incus-image.sh, "
                              "or set image: to one that has them; docs/cluster.md)");
        return r.error();
    }
    if (auto r = run.exec(node.name, {"mkdir", "-p", "/etc/sluice"}); !r) return r.error();
    if (auto s = run.incus({"file", "push", config, node.name + kFirewallConfig}); !s) return s;
    if (auto r = run.exec(node.name, {"systemctl", "enable", "--now", "sluice"}); !r) return r.error();
    return wait_attached(run, node.name);
}

}  // namespace

Result<std::vector<std::string>> default_profile_nics(IncusCli& incus, const std::string& remote) {
    auto r = incus.run({"query", qualify(remote, "/1.0/profiles/default")}, kIncusTimeout);
    if (!r || r->exit_status != 0) return make_error("incus query /1.0/profiles/default: " + describe(r));
    std::vector<std::string> nics;
    try {
        const auto profile = nlohmann::json::parse(r->out);
        if (!profile.contains("devices") || !profile["devices"].is_object()) return nics;
        for (const auto& [name, device] : profile["devices"].items())
            if (device.is_object() && device.value("type", "") == "nic")
            {
                std::string where = "nictype " + device.value("nictype", std::string("?"));
                if (device.contains("parent")) where = "parent " + device.value("parent", std::string());
                if (device.contains("network")) where = "network " + device.value("network", std::string());
                nics.push_back(name + " (" + where + ")");
            }
    } catch (const std::exception& e) {
        return make_error("incus query /1.0/profiles/default printed no JSON: " + std::string(e.what()));
    }
    return nics;
}

Status check_sluice_package(const std::string& path, const CommandRunner& runner) {
    const std::string what = "--package " + path;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return make_error(what + ": no such file");
    auto r = runner({"dpkg-deb", "--field", path, "Package"}, std::chrono::seconds(30));
    if (!r) {
        if (is_not_found(r.error()))
            return make_error(what + ": dpkg-deb is not installed, so the package cannot be checked (Debian: apt-get "
                                     "install dpkg)");
        return make_error(what + ": dpkg-deb: " + r.error().message);
    }
    if (r->exit_status != 0) {
        return make_error(what + " is not a Debian package (dpkg-deb --field: " +
                          trim(r->err.empty() ? r->out : r->err) + "); build sluice's with `cpack -G DEB` in the build "
                          "directory (docs/packaging.md)");
    }
    const std::string name = trim(r->out);
    if (name != "sluice")
        return make_error(what + " is the Debian package of '" + name + "', not of sluice");
    return {};
}

IncusPlan plan_incus_cluster(const Environment& environment) {
    IncusPlan plan;
    plan.owner = environment.name;
    plan.remote = environment.remote;
    plan.image = environment.image;
    const bool two_firewalls = !environment.fw1.empty();
    const std::string& np = environment.network_prefix;
    const std::string lan = qualify(plan.remote, np + "-lan"), wan = qualify(plan.remote, np + "-wan"),
                      fabric = qualify(plan.remote, np + "-fab");
    plan.networks = {lan, wan};
    if (two_firewalls) plan.networks.push_back(fabric);

    auto add = [&](const std::string& role, const std::string& name) {
        if (name.empty()) return;
        IncusNodePlan n;
        n.role = role;
        n.name = qualify(plan.remote, name);
        n.firewall = role == "fw0" || role == "fw1";
        n.vm = (n.firewall ? environment.fw_instance_type : environment.host_instance_type) == "vm";
        if (role == "lan-host") n.nics = {{"eth1", lan}};
        if (role == "wan-host") n.nics = {{"eth1", wan}};
        if (n.firewall) {
            n.nics = {{"lan0", lan}, {"wan0", wan}};
            if (two_firewalls) n.nics.push_back({"fab0", fabric});
        }
        for (const auto& a : addresses_of(role)) {
            if (!std::count_if(n.nics.begin(), n.nics.end(), [&](const auto& nic) { return nic.first == a.ifname; }))
                continue;
            n.configure.push_back({"ip", "link", "set", a.ifname, "up"});
            n.configure.push_back({"ip", "addr", "replace", a.v4, "dev", a.ifname});
            n.configure.push_back({"ip", "-6", "addr", "replace", a.v6, "dev", a.ifname, "nodad"});
        }
        if (role == "lan-host") {
            n.configure.push_back({"ip", "route", "replace", "198.18.0.0/15", "via", "198.18.1.1"});
            n.configure.push_back({"ip", "-6", "route", "replace", "2001:2::/48", "via", "2001:2:0:1::1"});
        }
        if (role == "wan-host") {
            n.configure.push_back({"ip", "route", "replace", "198.18.1.0/24", "via", "198.18.100.1"});
            n.configure.push_back({"ip", "-6", "route", "replace", "2001:2:0:1::/64", "via", "2001:2:0:100::1"});
        }
        if (n.firewall) {
            n.configure.push_back({"sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1",
                                   "net.ipv6.conf.all.accept_ra=0"});
        }
        plan.nodes.push_back(std::move(n));
    };
    add("lan-host", environment.lan_host);
    add("fw0", environment.fw0);
    add("fw1", environment.fw1);
    add("wan-host", environment.wan_host);
    return plan;
}

std::vector<std::vector<std::string>> incus_create_network(const std::string& network, const std::string& owner) {
    // No address of its own: no DHCP, no DNS, no NAT; the nodes route.
    return {{"network", "create", network, "ipv4.address=none", "ipv6.address=none",
             std::string(kOwnerKey) + "=" + owner}};
}

std::vector<std::vector<std::string>> incus_create_instance(const IncusPlan& plan, const IncusNodePlan& node) {
    std::vector<Argv> cmds;
    Argv init{"init", plan.image, node.name, "-c", std::string(kOwnerKey) + "=" + plan.owner};
    if (node.vm) init.push_back("--vm");
    // A container firewall must be privileged to mount bpffs and attach XDP.
    if (node.firewall && !node.vm) init.insert(init.end(), {"-c", "security.privileged=true"});
    cmds.push_back(init);
    for (size_t i = 0; i < node.nics.size(); ++i) {
        const auto& [ifname, network] = node.nics[i];
        Argv nic{"config", "device", "add", node.name, ifname, "nic", "network=" + bare(network)};
        if (node.vm) nic.push_back("hwaddr=" + mac_of(node.role, i));
        else nic.push_back("name=" + ifname);
        cmds.push_back(nic);
    }
    if (node.vm) cmds.push_back({"config", "set", node.name, "cloud-init.network-config=" + vm_network_config(node)});
    return cmds;
}

Status incus_cluster_up(const Environment& environment, IncusCli& incus, const IncusUpOptions& options,
                        std::ostream& out) {
    const IncusPlan plan = plan_incus_cluster(environment);
    Runner run(incus, options.dry_run, out);
    Present present;
    std::string package;
    // A package given is checked first: nothing is created for a file that
    // is not sluice's package.
    if (!options.dry_run && !options.package.empty()) {
        if (auto s = check_sluice_package(options.package); !s) return s;
    }
    if (!options.dry_run) {
        auto p = present_objects(incus, plan.remote);
        if (!p) return p.error();
        present = *p;
        // On this machine's daemon the lab must be contained before it exists.
        if (plan.remote.empty()) {
            auto guard = run_local({"nft", "list", "table", "inet", "sluice_lab_guard"}, std::chrono::seconds(10));
            if (!guard || guard->exit_status != 0)
                return make_error("the host guard (nft table inet sluice_lab_guard) is missing: run scripts/incus-setup.sh "
                                  "(or `scripts/incus-setup.sh guard` for the guard alone)");
        }
        auto nics = default_profile_nics(incus, plan.remote);
        if (!nics) return nics.error();
        if (!nics->empty()) {
            std::string list;
            for (const auto& n : *nics) list += (list.empty() ? "" : ", ") + n;
            return make_error("the default profile has a NIC, which every lab instance would get as a way out of the lab: " +
                              list + "; remove it (incus profile device remove default NAME) or use a remote whose default "
                              "profile has none (docs/cluster.md, \"What the host needs\")");
        }
        auto image = incus.run({"image", "info", qualify(plan.remote, plan.image)}, kIncusTimeout);
        if (plan.image.find(':') == std::string::npos && (!image || image->exit_status != 0))
            return make_error("image " + plan.image + " is not in Incus: build it with scripts/incus-image.sh (" +
                              describe(image) + ")");
        auto deb = find_package(options.package, out);
        if (!deb) return deb.error();
        package = *deb;
    } else {
        package = options.package.empty() ? "build/sluice_VERSION_amd64.deb" : options.package;
    }

    // What this run creates, undone in reverse order if a later step fails.
    std::vector<Argv> undo;
    // The error itself is the caller's to print, once.
    auto fail = [&](const Error& e) -> Status {
        if (!undo.empty()) out << "cluster: a step failed; removing what this run created\n";
        for (auto it = undo.rbegin(); it != undo.rend(); ++it) (void)run.incus(*it);
        return e;
    };

    for (const auto& net : plan.networks) {
        if (auto it = present.networks.find(bare(net)); it != present.networks.end()) {
            if (it->second != plan.owner)
                return fail(make_error("network " + net + " exists and was not made by `sluice cluster up --env " +
                                       plan.owner + "`; sluice leaves it alone (set network-prefix in the environment)"));
            out << "cluster: network " << net << " exists; keeping it\n";
            continue;
        }
        for (const auto& c : incus_create_network(net, plan.owner))
            if (auto s = run.incus(c); !s) return fail(s.error());
        undo.push_back({"network", "delete", net});
    }
    for (const auto& node : plan.nodes) {
        if (auto it = present.instances.find(bare(node.name)); it != present.instances.end()) {
            if (it->second != plan.owner)
                return fail(make_error("instance " + node.name + " exists and was not made by `sluice cluster up --env " +
                                       plan.owner + "`; sluice will not install into or delete it (name the nodes "
                                       "differently in your environments file)"));
            out << "cluster: instance " << node.name << " exists; keeping it\n";
            if (auto s = run.incus({"start", node.name}); !s && s.error().message.find("already running") == std::string::npos)
                return fail(s.error());
        } else {
            undo.push_back({"delete", "--force", node.name});
            for (const auto& c : incus_create_instance(plan, node))
                if (auto s = run.incus(c); !s) return fail(s.error());
            if (auto s = run.incus({"start", node.name}); !s) return fail(s.error());
        }
        if (auto s = wait_ready(run, node.name); !s) return fail(s.error());
        for (const auto& c : node.configure)
            if (auto r = run.exec(node.name, c); !r) return fail(r.error());
        if (!options.dry_run) out << "cluster: " << node.role << " " << node.name << " up\n";
    }

    // The firewalls' config: the netns cluster's (lan0 trust, wan0 untrust,
    // fab0 fabric), without fab0 when there is one firewall.
    const fs::path config = fs::temp_directory_path() / ("sluice-incus-" + plan.owner + "-" + std::to_string(getpid()) + ".yaml");
    struct RemoveFile {
        fs::path p;
        ~RemoveFile() { std::error_code ec; fs::remove(p, ec); }
    } remove_config{options.dry_run ? fs::path() : config};
    if (!options.dry_run) {
        std::string text = default_cluster_config();
        if (environment.fw1.empty()) {
            for (const char* line : {"  fab0: { zone: fabric }\n", "  fabric: {}\n"})
                if (auto at = text.find(line); at != std::string::npos) text.erase(at, std::string(line).size());
        }
        std::ofstream f(config);
        f << text;
        if (!f) return fail(make_error("cannot write " + config.string()));
    }
    for (const auto& node : plan.nodes) {
        if (!node.firewall) continue;
        if (auto s = install_firewall(run, node, package, config.string()); !s) return fail(s.error());
        if (!options.dry_run) out << "cluster: sluice running on " << node.name << " (attached on lan0, wan0)\n";
    }
    for (const auto& node : plan.nodes) {
        if (node.role != "wan-host") continue;
        auto active = run.exec(node.name, {"systemctl", "is-active", "sluice-iperf3"});
        if (!active || trim(*active) != "active") {
            if (auto r = run.exec(node.name, {"systemd-run", "--unit=sluice-iperf3", "--property=Restart=always",
                                              "iperf3", "-s"});
                !r)
                return fail(r.error());
        }
        if (!options.dry_run) out << "cluster: iperf3 -s on " << node.name << " (unit sluice-iperf3)\n";
    }
    if (options.dry_run) return {};
    out << "cluster: up; LAN host 198.18.1.10 / 2001:2:0:1::10 -> " << environment.fw0
        << " -> WAN host 198.18.100.200 / 2001:2:0:100::200\n";
    return {};
}

Status incus_cluster_down(const Environment& environment, IncusCli& incus, bool dry_run, std::ostream& out) {
    const IncusPlan plan = plan_incus_cluster(environment);
    Runner run(incus, dry_run, out);
    Present present;
    if (!dry_run) {
        auto p = present_objects(incus, plan.remote);
        if (!p) return p.error();
        present = *p;
    }
    std::string failures, kept;
    auto ours = [&](const std::map<std::string, std::string>& objects, const std::string& name) {
        auto it = objects.find(bare(name));
        if (it == objects.end()) return false;
        if (it->second != plan.owner) kept += "\n  " + name + " (not made by sluice cluster up; left alone)";
        return it->second == plan.owner;
    };
    for (auto it = plan.nodes.rbegin(); it != plan.nodes.rend(); ++it) {
        if (!dry_run && !ours(present.instances, it->name)) continue;
        if (auto s = run.incus({"delete", "--force", it->name}); !s) failures += "\n" + s.error().message;
        else if (!dry_run) out << "cluster: deleted instance " << it->name << "\n";
    }
    for (const auto& net : plan.networks) {
        if (!dry_run && !ours(present.networks, net)) continue;
        if (auto s = run.incus({"network", "delete", net}); !s) failures += "\n" + s.error().message;
        else if (!dry_run) out << "cluster: deleted network " << net << "\n";
    }
    if (!kept.empty()) out << "cluster: kept what sluice did not make:" << kept << "\n";
    if (!failures.empty()) return make_error("cluster down left things behind:" + failures);
    if (!dry_run) out << "cluster: down; nothing of " << environment.name << " is left\n";
    return {};
}

Result<IncusClusterStatus> incus_cluster_status(const Environment& environment, IncusCli& incus) {
    const IncusPlan plan = plan_incus_cluster(environment);
    IncusClusterStatus status;
    status.healthy = true;
    auto networks = incus_names(incus, true, plan.remote);
    if (!networks) return networks.error();
    Argv list{"list"};
    if (!plan.remote.empty()) list.push_back(plan.remote + ":");
    list.insert(list.end(), {"--format", "json"});
    auto r = incus.run(list, kIncusTimeout);
    if (!r || r->exit_status != 0) return make_error("incus list: " + describe(r));
    std::map<std::string, std::string> state;
    try {
        for (const auto& i : nlohmann::json::parse(r->out)) {
            std::string s = i.value("status", "");
            std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
            state[i.value("name", "")] = s;
        }
    } catch (const std::exception& e) {
        return make_error(std::string("incus list printed no JSON: ") + e.what());
    }
    for (const auto& net : plan.networks) {
        bool present = networks->count(bare(net)) > 0;
        status.items.push_back({"network", bare(net), net, present ? "PRESENT" : "ABSENT", ""});
        status.healthy = status.healthy && present;
    }
    Runner run(incus, false, std::cerr);
    for (const auto& node : plan.nodes) {
        auto it = state.find(bare(node.name));
        IncusClusterStatus::Item item{"instance", node.role, node.name, it == state.end() ? "ABSENT" : it->second, ""};
        if (node.firewall && item.state == "RUNNING") {
            auto found = interfaces_with_sluice(
                [&](const Argv& argv) { return run.exec(node.name, argv, std::chrono::seconds(20)); });
            if (!found) {
                item.detail = found.error().message;
                status.healthy = false;
            } else if (found->empty()) {
                item.detail = "sluice is not attached";
                status.healthy = false;
            } else {
                std::string names;
                for (const auto& f : *found) names += (names.empty() ? "" : ", ") + f;
                item.detail = "sluice attached on " + names;
            }
        }
        status.healthy = status.healthy && item.state == "RUNNING";
        status.items.push_back(std::move(item));
    }
    return status;
}

}  // namespace sluice::cluster
