// `sluice show nat` built from given entries: the JSON shape (rules, pools,
// interfaces, translations) and the text form; the NAT field of `show sessions`.
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <sstream>

#include "cli/show_nat.h"
#include "nat_test_entries.h"

using namespace sluice;
using namespace sluice::cli;
using namespace sluice::test_nat;
using nlohmann::json;

namespace {

constexpr uint64_t kSec = 1000000000ull;

const Tuple kOriginal = tuple4("198.18.1.10", 40000, "198.18.100.200", 80);
const Tuple kToPool = tuple4("198.18.100.12", 2000, "198.18.100.200", 80);

json state() {
    json pool = {{"name", "public"},
                 {"index", 0},
                 {"addresses", {"198.18.100.10-198.18.100.20"}},
                 {"ranges", {{{"family", "ipv4"}, {"first", "198.18.100.10"}, {"last", "198.18.100.20"}}}},
                 {"port_first", 1024},
                 {"port_last", 65535},
                 {"persistent", false}};
    json rules = {{{"kind", "source"}, {"index", 0}, {"name", "lan-out"}, {"match", "trust -> untrust"},
                   {"translation", "interface"}},
                  {{"kind", "source"}, {"index", 1}, {"name", "lan-pool"}, {"match", "trust -> dmz"},
                   {"translation", "pool public"}}};
    return {{"nat", {{"rules", rules}, {"pools", {pool}}}}};
}

NatReportInput input() {
    NatReportInput in;
    in.nat = state()["nat"].get<sluice::state::Nat>();
    in.now_ns = 100 * kSec;
    in.ifname = [](uint32_t ifindex) { return ifindex == 3 ? std::string("wan0") : std::string(); };

    Flow pooled = nat_flow(kOriginal, kToPool, IPPROTO_TCP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    pooled.initiator.value.created_ns = pooled.reply.value.created_ns = 40 * kSec;
    Tuple dnat_original = tuple4("198.18.100.200", 5555, "198.18.100.1", 8080);
    Tuple dnat_translated = tuple4("198.18.100.200", 5555, "198.18.1.100", 80);
    Flow dnat = nat_flow(dnat_original, dnat_translated, IPPROTO_TCP, SESSION_NAT_DST);
    SessionEntry plain = entry(tuple4("198.18.1.10", 1, "198.18.1.20", 2), IPPROTO_UDP);
    in.sessions = {pooled.initiator, pooled.reply, dnat.initiator, dnat.reply, plain};
    in.reservations = {reservation(kToPool, kOriginal, IPPROTO_TCP, 1),
                       reservation(tuple4("198.18.100.1", 1500, "198.18.100.200", 53), kOriginal, IPPROTO_UDP, 0)};
    nat_ifaddr wan{};
    wan.v4 = v4("198.18.100.1");
    wan.has_v4 = 1;
    wan.port_first = 1024;
    wan.port_last = 65535;
    in.ifaddrs = {{3, wan}};
    return in;
}

}  // namespace

TEST(ShowNat, JsonHasTheFourSections) {
    json r = nat_report(input());
    ASSERT_TRUE(r.is_object());
    EXPECT_EQ(r.size(), 4u);
    for (const char* key : {"rules", "pools", "interfaces", "translations"}) {
        ASSERT_TRUE(r.contains(key)) << key;
        EXPECT_TRUE(r[key].is_array()) << key;
    }
    EXPECT_EQ(r["rules"].size(), 2u);
    EXPECT_EQ(r["rules"][1]["name"], "lan-pool");
}

TEST(ShowNat, PoolUsageCountsReservationsInItsRange) {
    json pool = nat_report(input())["pools"][0];
    EXPECT_EQ(pool["name"], "public");
    EXPECT_EQ(pool["address_count"], 11);
    EXPECT_EQ(pool["capacity_per_protocol"], 11 * 64512);
    EXPECT_EQ(pool["in_use"]["tcp"], 1);
    EXPECT_EQ(pool["in_use"]["udp"], 0);  // that one is on the interface address
    EXPECT_EQ(pool["in_use"]["total"], 1);
}

TEST(ShowNat, InterfaceAddressesWithTheirReservations) {
    json itf = nat_report(input())["interfaces"][0];
    EXPECT_EQ(itf["name"], "wan0");
    EXPECT_EQ(itf["ifindex"], 3);
    EXPECT_EQ(itf["ipv4"], "198.18.100.1");
    EXPECT_TRUE(itf["ipv6"].is_null());
    EXPECT_EQ(itf["in_use"]["udp"], 1);
    EXPECT_EQ(itf["in_use"]["total"], 1);
}

TEST(ShowNat, OneTranslationPerFlowFromItsInitiator) {
    json t = nat_report(input())["translations"];
    ASSERT_EQ(t.size(), 2u);  // the untranslated flow and the reply entries are not listed
    json snat = t[0]["type"] == "source" ? t[0] : t[1];
    json dnat = t[0]["type"] == "source" ? t[1] : t[0];
    EXPECT_EQ(snat["protocol"], "tcp");
    EXPECT_EQ(snat["original"], (json{{"source", "198.18.1.10:40000"}, {"destination", "198.18.100.200:80"}}));
    EXPECT_EQ(snat["translated"], (json{{"source", "198.18.100.12:2000"}, {"destination", "198.18.100.200:80"}}));
    EXPECT_DOUBLE_EQ(snat["age_seconds"].get<double>(), 60.0);
    EXPECT_EQ(snat["reservation"]["address"], "198.18.100.12:2000");
    EXPECT_EQ(snat["reservation"]["inside"], "198.18.1.10:40000");
    EXPECT_EQ(snat["reservation"]["rule_id"], 1);
    EXPECT_EQ(snat["reservation"]["rule"], "lan-pool");
    EXPECT_EQ(dnat["type"], "destination");
    EXPECT_EQ(dnat["translated"]["destination"], "198.18.1.100:80");
    EXPECT_FALSE(dnat.contains("reservation"));
}

TEST(ShowNat, HeldPortMissingFromTheTableIsFlagged) {
    NatReportInput in = input();
    in.reservations.clear();
    json t = nat_report(in)["translations"];
    json snat = t[0]["type"] == "source" ? t[0] : t[1];
    EXPECT_EQ(snat["reservation"]["missing"], true);
}

TEST(ShowNat, WithoutStateOrMapsEverySectionIsEmpty) {
    json r = nat_report(NatReportInput{});
    for (const char* key : {"rules", "pools", "interfaces", "translations"}) EXPECT_TRUE(r[key].empty()) << key;
}

TEST(ShowNat, TextListsEachSection) {
    std::ostringstream out;
    print_nat_report(nat_report(input()), out);
    std::string text = out.str();
    for (const char* needle : {"lan-pool", "public", "198.18.100.10-198.18.100.20", "wan0", "198.18.100.1",
                               "198.18.1.10:40000 > 198.18.100.200:80  =>  198.18.100.12:2000",
                               "held for 198.18.1.10:40000", "2 translation(s)"})
        EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
}

TEST(ShowSessionsNat, TranslatedPartsOnly) {
    Flow f = nat_flow(kOriginal, kToPool, IPPROTO_TCP, SESSION_NAT_SRC | SESSION_NAT_PORT_HELD);
    EXPECT_EQ(session_nat_json(f.initiator), (json{{"src", "198.18.100.12:2000"}}));
    EXPECT_EQ(session_nat_json(f.reply), (json{{"dst", "198.18.1.10:40000"}}));
    EXPECT_TRUE(session_nat_json(entry(kOriginal, IPPROTO_TCP)).is_null());
    Tuple o6 = tuple6("2001:2:0:1::10", 1000, "2001:2:0:100::200", 443);
    Tuple t6 = tuple6("2001:2:0:100::1", 1000, "2001:2:0:100::200", 443);
    EXPECT_EQ(session_nat_json(nat_flow(o6, t6, IPPROTO_TCP, SESSION_NAT_SRC).initiator)["src"],
              "[2001:2:0:100::1]:1000");
}
