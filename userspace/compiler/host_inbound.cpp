#include "compiler/host_inbound.h"

#include <map>
#include <set>
#include <tuple>

#include "config/host_services.h"

namespace sluice::compiler {
namespace {

using config::HostServiceMatch;

// Entries one generation may hold (both generations share host_services).
constexpr size_t kEntriesPerGeneration = HOST_SERVICE_ENTRIES / 2;

const CompiledHostService kBuiltins[] = {
    {HOST_SVC_OTHER, "other", "packets no known service names"},
    {HOST_SVC_REPLY, "reply", "replies to flows the firewall opened"},
    {HOST_SVC_ICMP_ERROR, "icmp-error", "ICMP errors about the firewall's own or allowed flows"},
    {HOST_SVC_FRAGMENT, "fragment", "later fragments of accepted datagrams"},
};

class Builder {
public:
    explicit Builder(uint8_t generation) : generation_(generation) {}

    // Adds (zone, match) → service; the first service to claim a key keeps it.
    void add(uint16_t zone, const HostServiceMatch& match, uint32_t service) {
        auto put = [&](uint16_t port) {
            host_service_key k{};
            k.zone_id = zone;
            k.port = port;
            k.protocol = match.protocol;
            k.generation = generation_;
            auto id = std::make_tuple(zone, match.protocol, port);
            if (!seen_.insert(id).second) return;
            entries_.push_back({k, host_service_value{service}});
        };
        if (match.ports.empty()) put(0);
        for (const auto& r : match.ports)
            for (uint32_t p = r.lo; p <= r.hi; ++p) put(static_cast<uint16_t>(p));
    }
    void add_all(uint16_t zone) {
        host_service_key k{};
        k.zone_id = zone;
        k.generation = generation_;
        if (seen_.insert(std::make_tuple(zone, uint8_t{0}, uint16_t{0})).second)
            entries_.push_back({k, host_service_value{HOST_SVC_OTHER}});
    }
    size_t size() const { return entries_.size(); }
    std::vector<std::pair<host_service_key, host_service_value>> take() { return std::move(entries_); }

private:
    uint8_t generation_;
    std::set<std::tuple<uint16_t, uint8_t, uint16_t>> seen_;
    std::vector<std::pair<host_service_key, host_service_value>> entries_;
};

// A capacity error at the item that did not fit.
Error item_error(const config::Config& config, const config::HostInboundItem& item, std::string message) {
    Error e = make_error(ErrorCode::InvalidConfig, std::move(message));
    e.where = ErrorLocation{config.file, item.location.line, item.location.column, item.path};
    return e;
}

}  // namespace

std::string host_entry_name(const HostServiceMatch& match) {
    const std::string proto = config::protocol_name(match.protocol);
    if (match.protocol == config::kProtoIcmp || match.protocol == config::kProtoIcmpv6)
        return proto + "/type-" + std::to_string(match.ports.empty() ? 0 : match.ports[0].lo);
    if (match.ports.empty()) return "protocol-" + proto;
    std::string ports;
    for (const auto& r : match.ports) {
        ports += (ports.empty() ? "" : ",") + std::to_string(r.lo);
        if (r.hi != r.lo) ports += "-" + std::to_string(r.hi);
    }
    return proto + "/" + ports;
}

Result<CompiledHostInbound> compile_host_inbound(const config::Config& config, uint8_t generation) {
    CompiledHostInbound out;
    out.generation = generation;
    for (const auto& b : kBuiltins) out.services.push_back(b);

    // Service ids: the named services in catalog order, then each distinct
    // entry of the config in file order.
    std::map<std::string, uint32_t> ids;
    for (const auto& named : config::named_host_services()) {
        uint32_t id = static_cast<uint32_t>(out.services.size());
        ids[named.name] = id;
        out.services.push_back({id, named.name, named.description});
    }
    Builder builder(generation);
    for (const auto& named : config::named_host_services())
        for (const auto& m : named.matches) builder.add(0, m, ids[named.name]);

    for (size_t z = 0; z < config.zones.size(); ++z) {
        const auto& zone = config.zones[z];
        CompiledHostZone cz{zone.name, static_cast<uint16_t>(z + 1), false, {}};
        for (const auto& item : zone.host_inbound) {
            if (item.name == config::kHostInboundAll) {
                cz.all = true;
                builder.add_all(cz.zone_id);
                continue;
            }
            std::vector<HostServiceMatch> matches;
            uint32_t id;
            if (!item.name.empty()) {
                id = ids.at(item.name);
                matches = config::find_named_host_service(item.name)->matches;
                if (item.name == config::kHostServiceMetrics && config.metrics.listen)
                    matches = {HostServiceMatch{config::kProtoTcp, {{config.metrics.listen->port, config.metrics.listen->port}}}};
            } else {
                const std::string name = host_entry_name(item.match);
                if (auto it = ids.find(name); it != ids.end()) {
                    id = it->second;
                } else {
                    id = static_cast<uint32_t>(out.services.size());
                    if (id >= HOST_MAX_SERVICES)
                        return item_error(config, item,
                                          "too many distinct host-inbound entries (at most " +
                                              std::to_string(HOST_MAX_SERVICES - HOST_SVC_FIRST_NAMED -
                                                             config::named_host_services().size()) +
                                              " besides the named services)");
                    ids[name] = id;
                    out.services.push_back({id, name, "an entry of the config"});
                    builder.add(0, item.match, id);
                }
                matches = {item.match};
            }
            for (const auto& m : matches) builder.add(cz.zone_id, m, id);
            cz.services.push_back(id);
            if (builder.size() > kEntriesPerGeneration)
                return item_error(config, item,
                                  "host-inbound needs more than " + std::to_string(kEntriesPerGeneration) +
                                      " (zone, protocol, port) entries; allow narrower port ranges");
        }
        out.zones.push_back(std::move(cz));
    }
    // The HA pair's heartbeats and session sync (docs/ha.md): UDP ha.port in
    // the fabric interface's zone, whatever its host-inbound list says. The
    // agent's socket is connected to the peer's fabric address, so only the
    // peer's datagrams reach it.
    if (config.ha.enabled) {
        const uint32_t id = static_cast<uint32_t>(out.services.size());
        out.services.push_back({id, "ha-sync", "the HA peer's heartbeats and session sync (ha.port, fabric zone)"});
        HostServiceMatch m{config::kProtoUdp, {{config.ha.port, config.ha.port}}};
        builder.add(0, m, id);
        for (const auto& itf : config.interfaces) {
            if (itf.name != config.ha.fabric) continue;
            for (auto& cz : out.zones)
                if (cz.zone == itf.zone.name) {
                    builder.add(cz.zone_id, m, id);
                    cz.services.push_back(id);
                }
        }
    }
    out.entries = builder.take();
    return out;
}

}  // namespace sluice::compiler
