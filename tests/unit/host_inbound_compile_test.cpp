// compile_host_inbound: the host_services entries and service ids a config's
// `host-inbound` lists turn into (maps/host_inbound.h).
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "compiler/host_inbound.h"
#include "compiler_test_util.h"

namespace sluice::test {
namespace {

constexpr const char* kConfig = R"yaml(
interfaces:
  lan0: { zone: trust }
  wan0: { zone: untrust }
  dmz0: { zone: dmz }
zones:
  trust:
    host-inbound: [ssh, { protocol: udp, port: "5000-5002" }, { protocol: icmp, type: 13 }, { protocol: 89 }]
  untrust: {}
  dmz: { host-inbound: [all, { protocol: udp, port: "5000-5002" }] }
)yaml";

using Key = std::tuple<uint16_t, uint8_t, uint16_t>;  // zone, protocol, port

std::map<Key, uint32_t> entries_of(const CompiledHostInbound& h, uint8_t generation) {
    std::map<Key, uint32_t> out;
    for (const auto& [k, v] : h.entries) {
        EXPECT_EQ(k.generation, generation);
        EXPECT_TRUE(out.emplace(Key{k.zone_id, k.protocol, k.port}, v.service).second) << "duplicate key";
    }
    return out;
}

uint32_t id_of(const CompiledHostInbound& h, const std::string& name) {
    for (const auto& s : h.services)
        if (s.name == name) return s.id;
    ADD_FAILURE() << "no service " << name;
    return UINT32_MAX;
}

TEST(HostInboundCompile, ZonesGetTheirServicesAndTheCatalogNamesAll) {
    const CompiledConfig c = compile_text(kConfig, 1);
    const CompiledHostInbound& h = c.host_inbound;
    const auto e = entries_of(h, 1);
    const uint32_t ssh = id_of(h, "ssh"), udp5000 = id_of(h, "udp/5000-5002"), icmp13 = id_of(h, "icmp/type-13"),
                   ospf = id_of(h, "protocol-89");
    EXPECT_EQ(ssh, HOST_SVC_FIRST_NAMED + 1u);
    EXPECT_GE(udp5000, HOST_SVC_FIRST_NAMED + 9u);
    // trust (zone 1): exactly its four items.
    EXPECT_EQ(e.at({1, 6, 22}), ssh);
    for (uint16_t p = 5000; p <= 5002; ++p) EXPECT_EQ(e.at({1, 17, p}), udp5000);
    EXPECT_FALSE(e.count({1, 17, 5003}));
    EXPECT_EQ(e.at({1, 1, 13}), icmp13);
    EXPECT_EQ(e.at({1, 89, 0}), ospf);
    EXPECT_FALSE(e.count({1, 6, 80}));
    // untrust (zone 2): nothing at all.
    for (const auto& [k, v] : e) EXPECT_NE(std::get<0>(k), 2) << "untrust has an entry";
    // dmz (zone 3): `all`, and the same entry under the same id.
    EXPECT_TRUE(e.count({3, 0, 0}));
    EXPECT_EQ(e.at({3, 17, 5001}), udp5000);
    // The catalog (zone 0) names every service, named or entry.
    EXPECT_EQ(e.at({0, 6, 80}), id_of(h, "http"));
    EXPECT_EQ(e.at({0, 17, 53}), id_of(h, "dns"));
    EXPECT_EQ(e.at({0, 6, 53}), id_of(h, "dns"));
    EXPECT_EQ(e.at({0, 58, 128}), id_of(h, "ping"));
    EXPECT_EQ(e.at({0, 17, 33500}), id_of(h, "traceroute"));
    EXPECT_EQ(e.at({0, 17, 5002}), udp5000);
    // Zones as show host-inbound lists them.
    ASSERT_EQ(h.zones.size(), 3u);
    EXPECT_EQ(h.zones[0].services, (std::vector<uint32_t>{ssh, udp5000, icmp13, ospf}));
    EXPECT_TRUE(h.zones[2].all);
    EXPECT_TRUE(h.zones[1].services.empty());
}

TEST(HostInboundCompile, TooManyCombinationsNamesTheItem) {
    auto loaded = config::parse_config(R"yaml(
interfaces: { lan0: { zone: trust } }
zones:
  trust: { host-inbound: [{ protocol: tcp, port: "1-65535" }] }
)yaml",
                                       "big.yaml");
    ASSERT_TRUE(loaded.ok());
    auto compiled = compiler::compile(*loaded.config, 0);
    ASSERT_FALSE(compiled.ok());
    // The position is the Error's (check prints it as FILE:LINE:COLUMN: PATH).
    ASSERT_TRUE(compiled.error().where.has_value()) << compiled.error().message;
    EXPECT_EQ(compiled.error().where->file, "big.yaml");
    EXPECT_EQ(compiled.error().where->line, 4);
    EXPECT_EQ(compiled.error().where->path, "zones.trust.host-inbound[0]");
    EXPECT_NE(compiled.error().message.find("host-inbound needs more than"), std::string::npos)
        << compiled.error().message;
}

}  // namespace
}  // namespace sluice::test
