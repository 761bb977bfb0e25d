#include "cluster/environment.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cluster/incus_executor.h"
#include "cluster/netns_executor.h"

namespace sluice::cluster {
namespace {

// An error that names file:line and the field's path.
struct ParseError {
    std::string message;
};

class Reader {
public:
    explicit Reader(std::string source) : source_(std::move(source)) {}

    [[noreturn]] void fail(const YAML::Node& node, const std::string& path, const std::string& what) const {
        std::string where = source_;
        if (node.IsDefined() && node.Mark().line >= 0) where += ":" + std::to_string(node.Mark().line + 1);
        throw ParseError{where + ": " + path + ": " + what};
    }

    void only_keys(const YAML::Node& map, const std::string& path, const std::set<std::string>& allowed) const {
        if (!map.IsMap()) fail(map, path, "must be a mapping");
        for (const auto& kv : map) {
            std::string key = kv.first.as<std::string>();
            if (!allowed.count(key)) {
                std::string list;
                for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
                fail(kv.first, path + "." + key, "unknown key (expected one of: " + list + ")");
            }
        }
    }

    std::string string(const YAML::Node& map, const std::string& key, const std::string& path, bool required) const {
        YAML::Node v = map[key];
        if (!v.IsDefined() || v.IsNull()) {
            if (required) fail(map, path + "." + key, "is required");
            return "";
        }
        if (!v.IsScalar()) fail(v, path + "." + key, "must be a string");
        return v.as<std::string>();
    }

    int integer(const YAML::Node& map, const std::string& key, const std::string& path, int fallback, int min,
                int max) const {
        YAML::Node v = map[key];
        if (!v.IsDefined() || v.IsNull()) return fallback;
        int out = 0;
        try {
            out = v.as<int>();
        } catch (const YAML::Exception&) {
            fail(v, path + "." + key, "must be a whole number");
        }
        if (out < min || out > max)
            fail(v, path + "." + key, "must be between " + std::to_string(min) + " and " + std::to_string(max));
        return out;
    }

private:
    std::string source_;
};

// "22+", "8-9", "N/A" (Gbit/s).
GbpsRange parse_range(const Reader& r, const YAML::Node& v, const std::string& path) {
    GbpsRange range;
    if (!v.IsDefined() || v.IsNull()) {
        range.applicable = false;
        return range;
    }
    if (!v.IsScalar()) r.fail(v, path, "must be a range like \"22+\", \"8-9\" or \"N/A\"");
    std::string s = v.as<std::string>();
    if (s == "N/A" || s == "n/a") {
        range.applicable = false;
        return range;
    }
    auto number = [&](const std::string& text) {
        try {
            size_t used = 0;
            double d = std::stod(text, &used);
            if (used == text.size() && d >= 0) return d;
        } catch (...) {
        }
        r.fail(v, path, "'" + s + "' is not a range like \"22+\", \"8-9\" or \"N/A\" (Gbit/s)");
    };
    if (!s.empty() && s.back() == '+') {
        range.min_gbps = number(s.substr(0, s.size() - 1));
    } else if (auto dash = s.find('-'); dash != std::string::npos && dash > 0) {
        range.min_gbps = number(s.substr(0, dash));
        range.max_gbps = number(s.substr(dash + 1));
        if (*range.max_gbps < *range.min_gbps) r.fail(v, path, "'" + s + "': the upper bound is below the lower");
    } else {
        range.min_gbps = range.max_gbps = number(s);
    }
    return range;
}

IperfParams parse_iperf(const Reader& r, const YAML::Node& v, const std::string& path, IperfParams fallback) {
    if (!v.IsDefined() || v.IsNull()) return fallback;
    r.only_keys(v, path, {"streams", "seconds", "timeout"});
    IperfParams p;
    p.streams = r.integer(v, "streams", path, fallback.streams, 1, 128);
    p.seconds = r.integer(v, "seconds", path, fallback.seconds, 1, 3600);
    p.timeout_seconds = r.integer(v, "timeout", path, fallback.timeout_seconds, 0, 7200);
    if (p.timeout_seconds != 0 && p.timeout_seconds <= p.seconds)
        r.fail(v[v["timeout"].IsDefined() ? "timeout" : "seconds"], path + ".timeout",
               "must be longer than seconds (" + std::to_string(p.seconds) + ") or 0 for none");
    return p;
}

Environment parse_environment(const Reader& r, const std::string& name, const YAML::Node& v) {
    std::string path = "environments." + name;
    r.only_keys(v, path,
                {"kind", "description", "remote", "nodes", "instance-types", "image", "network-prefix", "targets",
                 "iperf3", "baseline"});
    Environment env;
    env.name = name;
    std::string kind = r.string(v, "kind", path, true);
    if (kind == "incus")
        env.kind = EnvironmentKind::incus;
    else if (kind == "netns")
        env.kind = EnvironmentKind::netns;
    else
        r.fail(v["kind"], path + ".kind", "'" + kind + "' is not a kind (expected incus or netns)");
    env.description = r.string(v, "description", path, false);
    env.remote = r.string(v, "remote", path, false);
    if (!env.remote.empty() && env.remote.back() == ':') env.remote.pop_back();
    if (!env.remote.empty() && env.kind == EnvironmentKind::netns)
        r.fail(v["remote"], path + ".remote", "only incus environments have a remote");

    YAML::Node nodes = v["nodes"];
    if (!nodes.IsDefined()) r.fail(v, path + ".nodes", "is required");
    r.only_keys(nodes, path + ".nodes", {"lan-host", "fw0", "fw1", "wan-host"});
    env.lan_host = r.string(nodes, "lan-host", path + ".nodes", false);
    env.fw0 = r.string(nodes, "fw0", path + ".nodes", true);
    env.fw1 = r.string(nodes, "fw1", path + ".nodes", false);
    env.wan_host = r.string(nodes, "wan-host", path + ".nodes", false);

    YAML::Node types = v["instance-types"];
    if (types.IsDefined() && !types.IsNull()) {
        if (env.kind != EnvironmentKind::incus)
            r.fail(types, path + ".instance-types", "only incus environments have instance types");
        r.only_keys(types, path + ".instance-types", {"firewalls", "hosts"});
        for (auto [key, target] : {std::pair<const char*, std::string*>{"firewalls", &env.fw_instance_type},
                                   {"hosts", &env.host_instance_type}}) {
            std::string t = r.string(types, key, path + ".instance-types", false);
            if (t.empty()) continue;
            if (t != "vm" && t != "container")
                r.fail(types[key], path + ".instance-types." + key, "'" + t + "' is not an instance type (vm or container)");
            *target = t;
        }
    }
    if (v["network-prefix"].IsDefined()) {
        if (env.kind != EnvironmentKind::incus)
            r.fail(v["network-prefix"], path + ".network-prefix", "only incus environments have networks");
        env.network_prefix = r.string(v, "network-prefix", path, true);
        // "<prefix>-lan" must fit a Linux interface name (15 characters).
        if ((env.network_prefix != "sluice" && env.network_prefix.rfind("sluice-", 0) != 0) ||
            env.network_prefix.size() > 11 ||
            env.network_prefix.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
            r.fail(v["network-prefix"], path + ".network-prefix",
                   "'" + env.network_prefix + "' must be sluice or start with sluice- (the host guard matches sluice-*), at most 11 of a-z, 0-9, -");
    }
    if (v["image"].IsDefined()) {
        if (env.kind != EnvironmentKind::incus) r.fail(v["image"], path + ".image", "only incus environments have an image");
        env.image = r.string(v, "image", path, true);
    }

    YAML::Node targets = v["targets"];
    if (!targets.IsDefined()) r.fail(v, path + ".targets", "is required");
    r.only_keys(targets, path + ".targets", {"ipv4", "ipv6"});
    env.ipv4_target = r.string(targets, "ipv4", path + ".targets", true);
    env.ipv6_target = r.string(targets, "ipv6", path + ".targets", false);
    if (env.ipv4_target.find(':') != std::string::npos || env.ipv4_target.find('.') == std::string::npos)
        r.fail(targets["ipv4"], path + ".targets.ipv4", "'" + env.ipv4_target + "' is not an IPv4 address");
    if (!env.ipv6_target.empty() && env.ipv6_target.find(':') == std::string::npos)
        r.fail(targets["ipv6"], path + ".targets.ipv6", "'" + env.ipv6_target + "' is not an IPv6 address");

    YAML::Node iperf = v["iperf3"];
    YAML::Node normal, quick;  // undefined unless given
    if (iperf.IsDefined() && !iperf.IsNull()) {
        r.only_keys(iperf, path + ".iperf3", {"normal", "quick"});
        normal = iperf["normal"];
        quick = iperf["quick"];
    }
    env.normal = parse_iperf(r, normal, path + ".iperf3.normal", IperfParams{4, 10, 0});
    env.quick = parse_iperf(r, quick, path + ".iperf3.quick", IperfParams{1, 3, 8});

    YAML::Node base = v["baseline"];
    if (!base.IsDefined()) r.fail(v, path + ".baseline", "is required");
    r.only_keys(base, path + ".baseline", {"ipv4", "ipv6", "nic", "xdp-mode", "notes"});
    env.baseline.ipv4 = parse_range(r, base["ipv4"], path + ".baseline.ipv4");
    env.baseline.ipv6 = parse_range(r, base["ipv6"], path + ".baseline.ipv6");
    env.baseline.nic = r.string(base, "nic", path + ".baseline", false);
    env.baseline.xdp_mode = r.string(base, "xdp-mode", path + ".baseline", false);
    env.baseline.notes = r.string(base, "notes", path + ".baseline", false);
    if (env.ipv6_target.empty() && env.baseline.ipv6.applicable)
        r.fail(base["ipv6"], path + ".baseline.ipv6", "must be N/A when there is no IPv6 target");
    return env;
}

std::string format_gbps(double d) {
    std::ostringstream o;
    o << d;
    return o.str();
}

}  // namespace

std::string to_string(EnvironmentKind kind) {
    return kind == EnvironmentKind::incus ? "incus" : "netns";
}

std::string GbpsRange::describe() const {
    if (!applicable || !min_gbps) return "N/A";
    if (!max_gbps) return format_gbps(*min_gbps) + "+ Gbps";
    if (*max_gbps == *min_gbps) return format_gbps(*min_gbps) + " Gbps";
    return format_gbps(*min_gbps) + "-" + format_gbps(*max_gbps) + " Gbps";
}

std::string Environment::qualified(const std::string& node) const {
    if (kind != EnvironmentKind::incus || remote.empty() || node.find(':') != std::string::npos) return node;
    return remote + ":" + node;
}

const Environment* Environments::find(const std::string& name) const {
    for (const auto& e : environments)
        if (e.name == name) return &e;
    return nullptr;
}

std::vector<std::string> Environments::names() const {
    std::vector<std::string> out;
    for (const auto& e : environments) out.push_back(e.name);
    return out;
}

Result<Environments> parse_environments(const std::string& yaml_text, const std::string& source_name) {
    Reader r(source_name);
    Environments out;
    out.source = source_name;
    try {
        YAML::Node root = YAML::Load(yaml_text);
        if (!root.IsMap()) return make_error(source_name + ": expected a mapping with 'environments'");
        r.only_keys(root, "(top level)", {"environments", "detection-order"});
        YAML::Node envs = root["environments"];
        if (!envs.IsDefined() || !envs.IsMap() || envs.size() == 0)
            r.fail(envs.IsDefined() ? envs : root, "environments",
                   "must be a non-empty mapping of name -> environment");
        for (const auto& kv : envs) {
            std::string name = kv.first.as<std::string>();
            out.environments.push_back(parse_environment(r, name, kv.second));
        }
        YAML::Node order = root["detection-order"];
        if (order.IsDefined() && !order.IsNull()) {
            if (!order.IsSequence()) r.fail(order, "detection-order", "must be a list of environment names");
            for (const auto& item : order) {
                std::string name = item.as<std::string>();
                if (!out.find(name))
                    r.fail(item, "detection-order", "'" + name + "' is not an environment in this file");
                out.detection_order.push_back(name);
            }
        } else {
            out.detection_order = out.names();
        }
    } catch (const ParseError& e) {
        return make_error(e.message);
    } catch (const YAML::Exception& e) {
        return make_error(source_name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    return out;
}

Result<Environments> load_environments(const std::string& path) {
    std::ifstream in(path);
    if (!in) return make_error("cannot read environments file " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_environments(ss.str(), path);
}

Result<std::string> find_environments_file() {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (const char* env = std::getenv("SLUICE_ENVIRONMENTS"); env && *env) {
        if (fs::exists(env, ec)) return std::string(env);
        return make_error(std::string("SLUICE_ENVIRONMENTS names ") + env + ", which does not exist");
    }
    std::vector<fs::path> tried;
    for (fs::path dir = fs::current_path(ec); !dir.empty(); dir = dir.parent_path()) {
        fs::path candidate = dir / "cluster" / "environments.yaml";
        tried.push_back(candidate);
        if (fs::exists(candidate, ec)) return candidate.string();
        if (dir == dir.parent_path()) break;
    }
    // The source tree this binary was built from (CMake passes absolute paths).
    fs::path here(__FILE__);
    if (here.is_absolute()) {
        fs::path candidate = here.parent_path().parent_path().parent_path() / "cluster" / "environments.yaml";
        tried.push_back(candidate);
        if (fs::exists(candidate, ec)) return candidate.string();
    }
    fs::path etc = "/etc/sluice/environments.yaml";
    tried.push_back(etc);
    if (fs::exists(etc, ec)) return etc.string();
    return make_error("no environments file found (tried " + tried.back().string() +
                      " and cluster/environments.yaml upwards from the working directory); "
                      "set SLUICE_ENVIRONMENTS or pass --environments FILE");
}

Result<Environments> load_default_environments(const std::string& path) {
    if (!path.empty()) return load_environments(path);
    auto found = find_environments_file();
    if (!found) return found.error();
    return load_environments(*found);
}

Result<Environment> detect_environment(const Environments& environments, IncusCli& incus,
                                       std::vector<std::string>* notes) {
    auto note = [&](const std::string& n) {
        if (notes) notes->push_back(n);
    };
    bool incus_missing = false;
    for (const auto& name : environments.detection_order) {
        const Environment* env = environments.find(name);
        if (!env) continue;
        if (env->kind == EnvironmentKind::netns) {
            note(name + ": local namespaces, always available");
            return *env;
        }
        std::string instance = env->qualified(env->fw0);
        if (incus_missing) {
            note(name + ": skipped (incus is not installed)");
            continue;
        }
        auto status = incus.instance_status(instance);
        if (!status) {
            if (is_not_found(status.error())) {
                incus_missing = true;
                note(name + ": skipped (incus is not installed)");
            } else {
                note(name + ": " + status.error().message);
            }
            continue;
        }
        if (*status == "RUNNING") {
            note(name + ": " + instance + " is RUNNING" + (incus.using_sg() ? " (via sg incus-admin)" : ""));
            return *env;
        }
        note(name + ": " + instance + " is " + *status);
    }
    if (const Environment* fallback = environments.find("netns")) {
        note("netns: fallback (no Incus environment is running)");
        return *fallback;
    }
    return make_error("no environment is running and " + environments.source +
                      " has no 'netns' environment to fall back to");
}

Result<Environment> select_environment(const Environments& environments, const std::string& name, IncusCli& incus,
                                       std::vector<std::string>* notes) {
    if (name == "auto") return detect_environment(environments, incus, notes);
    if (const Environment* env = environments.find(name)) return *env;
    std::string known;
    for (const auto& n : environments.names()) known += (known.empty() ? "" : ", ") + n;
    return make_error("unknown environment '" + name + "' (" + environments.source + " has: " + known + ", or auto)");
}

std::unique_ptr<Executor> make_executor(const Environment& environment, const std::string& prefix,
                                        std::shared_ptr<IncusCli> incus) {
    if (environment.kind == EnvironmentKind::netns) return std::make_unique<NetnsExecutor>(prefix);
    return std::make_unique<IncusExecutor>(environment.remote, std::move(incus));
}

}  // namespace sluice::cluster
