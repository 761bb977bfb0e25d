#include "daemon/egress_host.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <sstream>

#include "compiler/compile_egress.h"
#include "daemon/daemon_log.h"
#include "inspect/session_link.h"
#include "loader/egress_tables.h"

extern "C" {
#include "map_names.h"
}

namespace sluice {

namespace {

inspect::Endpoint endpoint(int family, const std::array<uint8_t, 16>& addr, uint16_t port_host) {
    inspect::Endpoint e;
    e.family = family;
    std::memcpy(e.addr, addr.data(), family == AF_INET ? 4 : 16);
    e.port = htons(port_host);
    return e;
}

// What a scope's learned addresses were allowed by: its zone, sources and rules.
std::string fingerprint(const config::EgressScope& s) {
    std::ostringstream out;
    out << s.name << '|' << s.from.name << '|' << (s.default_action == config::EgressAction::allow) << '|';
    for (const auto& i : s.source.items) out << i.text << ',';
    for (const auto& r : s.rules) out << '|' << config::rule_text(r);
    return out.str();
}

std::string address_text(int family, const std::array<uint8_t, 16>& a) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(family, a.data(), buf, sizeof(buf));
    return buf;
}

}  // namespace

EgressHost::EgressHost(const Datapath& dp)
    : dp_(dp), learned_(dp.map_fd(SLUICE_MAP_EGRESS_LEARNED_V4), dp.map_fd(SLUICE_MAP_EGRESS_LEARNED_V6)) {}

Status EgressHost::write_proxy_config(bool up, uint16_t port) const {
    const int fd = dp_.map_fd(SLUICE_MAP_EGRESS_CFG);
    auto cfg = read_egress_config(fd);
    if (!cfg) return cfg.error();
    cfg->proxy_up = up ? 1 : 0;
    cfg->dns_port = htons(port);
    cfg->mark = PuntRouting{}.mark;
    return write_egress_config(fd, cfg.value());
}

Status EgressHost::adopt(const config::Config& applied) {
    config_ = std::make_shared<const config::Config>(applied);
    const bool wanted = applied.egress.enabled && !applied.egress.scopes.empty();
    // Scopes whose id now means something else, or whose rules changed,
    // forget what they learned; so does every scope when egress goes.
    std::map<uint8_t, std::string> now;
    if (wanted)
        for (const auto& s : applied.egress.scopes) now[s.id] = fingerprint(s);
    for (const auto& [id, print] : scope_fingerprints_) {
        auto it = now.find(id);
        if (it == now.end() || it->second != print) learned_.forget(id);
    }
    scope_fingerprints_ = now;
    if (!wanted) {
        stop();
        return {};
    }
    auto policy = std::make_shared<const config::Egress>(applied.egress);
    policy_ = policy;
    if (proxy_) {
        proxy_->set_policy(policy);
        return {};
    }
    auto routing = PuntRoutingLease::acquire(PuntRouting{});
    if (!routing) return routing.error();
    egress::DnsProxyHooks hooks;
    const int fd4 = dp_.map_fd("sessions_v4"), fd6 = dp_.map_fd("sessions_v6");
    hooks.scope_of = [fd4, fd6](const egress::ClientFlow& f) -> uint8_t {
        inspect::SessionLink sessions(fd4, fd6);
        auto e = sessions.find(f.protocol, endpoint(f.family, f.client, f.client_port),
                               endpoint(f.family, f.resolver, f.resolver_port));
        if (!e) return 0;
        const uint16_t id = e->value.ruleset_id;
        if ((id & SLUICE_EGRESS_DNS_RULESET_MASK) != SLUICE_EGRESS_DNS_RULESET_BASE) return 0;
        return static_cast<uint8_t>(id & 0xff);
    };
    const auto grace = applied.egress.learned_ttl.grace;
    hooks.learn = [this, grace](uint8_t scope, const std::vector<egress::LearnedAddress>& addrs) {
        return learned_.learn(scope, addrs, grace);
    };
    auto proxy = egress::DnsProxy::start(policy, egress::DnsProxyOptions{}, std::move(hooks));
    if (!proxy) return make_error("egress DNS proxy: " + proxy.error().message);
    proxy_ = std::move(proxy.value());
    routing_ = std::move(routing.value());
    if (auto s = write_proxy_config(true, proxy_->port()); !s) {
        stop();
        return s;
    }
    daemon_log("egress: DNS proxy listening on 127.0.0.1 and ::1 port " + std::to_string(proxy_->port()) + " for " +
               std::to_string(applied.egress.scopes.size()) + " scope(s)");
    return {};
}

Result<std::string> EgressHost::change_rule(RuleChange change, const std::string& scope_name,
                                            const std::string& rule_yaml, size_t position) {
    if (!config_ || !config_->egress.enabled || config_->egress.scopes.empty())
        return make_error(ErrorCode::NotFound, "the running config has no egress scopes");
    config::Config next = *config_;
    auto& scopes = next.egress.scopes;
    auto scope = std::find_if(scopes.begin(), scopes.end(), [&](const auto& s) { return s.name == scope_name; });
    if (scope == scopes.end()) {
        std::string names;
        for (const auto& s : scopes) names += (names.empty() ? "" : ", ") + s.name;
        return make_error(ErrorCode::NotFound, "no egress scope \"" + scope_name + "\" (scopes: " + names + ")");
    }
    auto& rules = scope->rules;
    const std::string path = "egress.scopes." + scope_name + ".rules";
    auto rule = config::parse_egress_rule(rule_yaml, path + "[" + std::to_string(position ? position - 1 : rules.size()) + "]");
    if (!rule) return rule.error();
    std::string message;
    switch (change) {
    case RuleChange::add:
        if (position > rules.size() + 1)
            return make_error(ErrorCode::InvalidConfig, "position " + std::to_string(position) + " is past the end: scope " +
                                                            scope_name + " has " + std::to_string(rules.size()) + " rules");
        if (rules.size() >= config::kMaxEgressRulesPerScope)
            return make_error(ErrorCode::InvalidConfig, "scope " + scope_name + " has the most rules it may have (" +
                                                            std::to_string(config::kMaxEgressRulesPerScope) + ")");
        rules.insert(position ? rules.begin() + long(position - 1) : rules.end(), rule.value());
        message = "added to scope " + scope_name + " as rule " + std::to_string(position ? position : rules.size()) + ": " +
                  config::rule_text(rule.value());
        break;
    case RuleChange::remove: {
        const size_t before = rules.size();
        std::erase_if(rules, [&](const config::EgressRule& r) { return config::same_rule(r, rule.value()); });
        if (rules.size() == before) return "scope " + scope_name + " has no rule " + config::rule_text(rule.value()) + ": nothing to delete";
        message = "deleted " + std::to_string(before - rules.size()) + " rule(s) from scope " + scope_name + ": " +
                  config::rule_text(rule.value());
        break;
    }
    case RuleChange::replace:
        if (position == 0 || position > rules.size())
            return make_error(ErrorCode::NotFound, "scope " + scope_name + " has no rule " + std::to_string(position) +
                                                       " (it has " + std::to_string(rules.size()) + ")");
        message = "replaced rule " + std::to_string(position) + " of scope " + scope_name + " (" +
                  config::rule_text(rules[position - 1]) + ") with " + config::rule_text(rule.value());
        rules[position - 1] = rule.value();
        break;
    }
    for (size_t i = 0; i < rules.size(); ++i) rules[i].path = path + "[" + std::to_string(i) + "]";
    auto compiled = compiler::compile_egress(next);
    if (!compiled) return compiled.error();
    if (auto s = write_egress_tables(dp_, compiled.value()); !s) return s.error();
    if (auto s = prune_egress_tables(dp_, compiled.value()); !s) return s.error();
    if (auto s = adopt(next); !s) return s.error();
    if (policy_listener_) policy_listener_(policy_);
    return message;
}

void EgressHost::tick() { (void)learned_.expire(); }

void EgressHost::stop() {
    if (proxy_) {
        // The fast path first: steered DNS is dropped (counted) while the proxy is gone.
        if (auto s = write_proxy_config(false, 0); !s) daemon_log("egress: " + s.error().message);
        proxy_->stop();
        proxy_.reset();
    }
    routing_.reset();
}

nlohmann::json EgressHost::published() const {
    using nlohmann::json;
    json j = json::object();
    j["enabled"] = policy_ != nullptr && proxy_ != nullptr;
    if (!proxy_ || !policy_) return j;
    j["proxy_port"] = proxy_->port();
    const auto c = proxy_->counters();
    j["dns"] = {{"queries", c.queries},         {"tcp_queries", c.tcp_queries},
                {"allowed", c.allowed},         {"denied", c.denied},
                {"not_governed", c.not_governed}, {"malformed", c.malformed},
                {"upstream_errors", c.upstream_errors}, {"servfail", c.servfail},
                {"learned_addresses", c.learned}, {"learn_failures", c.learn_failures}};
    const auto l = learned_.counters();
    const auto entries = learned_.list();
    j["learned"] = {{"entries", entries.size()},
                    {"created", l.learned},
                    {"refreshed", l.refreshed},
                    {"expired", l.expired},
                    {"write_failures", l.write_failures}};
    json scopes = json::array();
    for (const auto& s : policy_->scopes) {
        json list = json::array();
        for (const auto& e : entries) {
            if (e.scope != s.id) continue;
            json ports = json::array();
            for (const auto& p : e.ports)
                ports.push_back(p.first == p.last ? std::to_string(p.first)
                                                  : std::to_string(p.first) + "-" + std::to_string(p.last));
            list.push_back({{"address", address_text(e.family, e.address)},
                            {"expires_in_s", std::chrono::duration<double>(e.remaining).count()},
                            {"ports", ports}});
        }
        json rules = json::array();
        for (const auto& r : s.rules) rules.push_back(config::rule_text(r));
        scopes.push_back({{"name", s.name},
                          {"id", s.id},
                          {"zone", s.from.name},
                          {"default", config::to_string(s.default_action)},
                          {"rules", rules},
                          {"learned", list}});
    }
    j["scopes"] = scopes;
    json upstreams = json::array();
    for (const auto& u : policy_->upstreams) upstreams.push_back(u.text);
    j["upstreams"] = upstreams;
    return j;
}

}  // namespace sluice
