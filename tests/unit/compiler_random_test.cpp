// The compiled tables, read the way the BPF program reads them, must pick the
// same policy as a first-match scan of the config, for random rule sets with
// overlapping prefixes and port ranges and random packets over the same space.
#include <gtest/gtest.h>

#include <random>

#include "compiler_test_util.h"

using namespace sluice;

namespace {

constexpr int kZones = 3;

class RandomConfigs {
public:
    explicit RandomConfigs(uint32_t seed) : rng_(seed) {}

    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

    // A small address space so prefixes nest and overlap: 198.18.0.0/22 and
    // 2001:2::/48 with variation only in a few low bytes.
    std::array<uint8_t, 16> random_address(config::Family family) {
        std::array<uint8_t, 16> a{};
        if (family == config::Family::ipv4) {
            a = {198, 18, static_cast<uint8_t>(pick(0, 3)), static_cast<uint8_t>(pick(0, 3) * 64 + pick(0, 2))};
        } else {
            a = {0x20, 0x01, 0x00, 0x02, 0, 0, 0, static_cast<uint8_t>(pick(0, 3))};
            a[15] = static_cast<uint8_t>(pick(0, 3) * 64 + pick(0, 2));
        }
        return a;
    }

    config::Prefix random_prefix() {
        config::Prefix p;
        p.family = pick(0, 2) ? config::Family::ipv4 : config::Family::ipv6;
        if (p.family == config::Family::ipv4) p.length = static_cast<uint8_t>(pick(0, 4) ? pick(20, 32) : pick(0, 19));
        else p.length = static_cast<uint8_t>(pick(0, 4) ? pick(56, 128) : pick(0, 55));
        p.addr = config::mask_address(random_address(p.family), p.length);
        return p;
    }

    uint16_t random_port() {
        switch (pick(0, 3)) {
        case 0: return static_cast<uint16_t>(pick(0, 40));
        case 1: return static_cast<uint16_t>(pick(65500, 65535));
        default: return static_cast<uint16_t>(pick(0, 1200));
        }
    }

    config::AddressMatch random_match(config::Config& c) {
        config::AddressMatch m;
        if (pick(0, 4) == 0) return m;  // any
        m.any = false;
        int n = pick(1, 3);
        for (int i = 0; i < n; ++i) {
            if (pick(0, 1)) {
                auto p = random_prefix();
                m.items.push_back({p.to_string(), {}, p});
            } else {
                m.items.push_back({c.address_book[pick(0, static_cast<int>(c.address_book.size()) - 1)].name, {}, std::nullopt});
            }
        }
        return m;
    }

    config::Config random_config(int rules) {
        config::Config c;
        for (int z = 1; z <= kZones; ++z) c.zones.push_back({"z" + std::to_string(z), {}, {}, {}});
        for (int i = 0; i < 8; ++i) {
            config::AddressBookEntry e{"ab" + std::to_string(i), {}, {}};
            for (int j = pick(1, 3); j > 0; --j) e.prefixes.push_back(random_prefix());
            c.address_book.push_back(e);
        }
        const uint8_t protos[] = {config::kProtoTcp, config::kProtoUdp, config::kProtoIcmp, config::kProtoIcmpv6};
        for (int i = 0; i < 10; ++i) {
            config::Application app{"app" + std::to_string(i), {}, protos[pick(0, 3)], {}};
            if ((app.protocol == config::kProtoTcp || app.protocol == config::kProtoUdp) && pick(0, 4)) {
                for (int j = pick(1, 3); j > 0; --j) {
                    uint16_t a = random_port(), b = random_port();
                    app.destination_ports.push_back({std::min(a, b), pick(0, 1) ? std::max(a, b) : std::min(a, b)});
                }
            }
            c.applications.push_back(app);
        }
        for (int i = 0; i < rules; ++i) {
            config::Policy p;
            p.name = "p" + std::to_string(i);
            p.from.name = "z" + std::to_string(pick(1, kZones));
            p.to.name = "z" + std::to_string(pick(1, kZones));
            p.source = random_match(c);
            p.destination = random_match(c);
            if (pick(0, 3)) {
                p.any_application = false;
                for (int j = pick(1, 2); j > 0; --j) p.applications.push_back({c.applications[pick(0, 9)].name, {}});
            }
            p.action = pick(0, 1) ? config::PolicyAction::permit : config::PolicyAction::deny;
            c.policies.push_back(p);
        }
        return c;
    }

    compiler::PacketSpec random_packet() {
        compiler::PacketSpec p;
        p.from_zone = static_cast<uint16_t>(pick(1, kZones));
        p.to_zone = static_cast<uint16_t>(pick(1, kZones));
        p.family = pick(0, 1) ? config::Family::ipv4 : config::Family::ipv6;
        p.src = random_address(p.family);
        p.dst = random_address(p.family);
        const uint8_t protos[] = {config::kProtoTcp, config::kProtoUdp, config::kProtoIcmp, config::kProtoIcmpv6, 47};
        p.protocol = protos[pick(0, 4)];
        if (p.protocol == config::kProtoIcmp) p.port = pick(0, 1) ? 8 : 0;
        else if (p.protocol == config::kProtoIcmpv6) p.port = pick(0, 1) ? 128 : 129;
        else if (p.protocol != 47) p.port = random_port();
        return p;
    }

private:
    std::mt19937 rng_;
};

}  // namespace

TEST(CompilerRandom, TablesAgreeWithLinearFirstMatch) {
    RandomConfigs gen(20261130);
    size_t packets = 0, matched = 0;
    for (int round = 0; round < 24; ++round) {
        const int rules = round < 4 ? gen.pick(1, 5) : gen.pick(20, 150);
        config::Config config = gen.random_config(rules);
        auto compiled = compiler::compile(config, static_cast<uint8_t>(round % 2));
        ASSERT_TRUE(compiled.ok()) << compiled.error().message;
        for (int i = 0; i < 500; ++i, ++packets) {
            compiler::PacketSpec p = gen.random_packet();
            auto expected = compiler::classify_linear(config, p);
            auto got = compiler::classify_tables(compiled->tables, p);
            matched += expected.has_value();
            ASSERT_EQ(got, expected) << "round " << round << " packet " << i << " proto " << int(p.protocol)
                                     << " port " << p.port << " zones " << p.from_zone << "->" << p.to_zone;
        }
    }
    EXPECT_GE(packets, 10000u);
    // The space is small on purpose; make sure the test is not vacuous.
    EXPECT_GT(matched, packets / 5);
    EXPECT_LT(matched, packets);
}

// Timing is the benchmark's business (no wall-clock thresholds in tests);
// these check that thousands of rules compile to correct tables.
TEST(CompilerRandom, ThousandsOfMixedRulesCompile) {
    RandomConfigs gen(7);
    config::Config config = gen.random_config(2000);
    auto compiled = compiler::compile(config, 1);
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    EXPECT_EQ(compiled->tables.rule_count, 2000u);
    // Spot-check the big tables against the linear scan.
    for (int i = 0; i < 2000; ++i) {
        auto p = gen.random_packet();
        ASSERT_EQ(compiler::classify_tables(compiled->tables, p), compiler::classify_linear(config, p));
    }
}

// The benchmark's rule kinds (docs/scale.md): 10,000 single-field rules fit
// easily, and still classify exactly.
// The two zones and interfaces the scale configs below start with.
constexpr const char* kTwoZones =
    "interfaces: { lan0: { zone: trust }, wan0: { zone: untrust } }\n"
    "zones: { trust: {}, untrust: {} }\n";

TEST(CompilerRandom, TenThousandSourceOrPortRulesCompile) {
    for (bool ports : {false, true}) {
        std::string text = kTwoZones;
        if (ports) {
            text += "applications:\n";
            for (int i = 0; i < 10000; ++i)
                text += "  a" + std::to_string(i) + ": { protocol: " + (i % 2 ? "udp" : "tcp") +
                        ", destination-port: " + std::to_string(10000 + i) + " }\n";
        }
        text += "policies:\n";
        for (int i = 0; i < 10000; ++i) {
            text += "  - { name: r" + std::to_string(i) + ", from: trust, to: untrust, ";
            if (ports) text += "application: a" + std::to_string(i);
            else text += "source: 198.19." + std::to_string(i / 256) + "." + std::to_string(i % 256);
            text += ", action: deny }\n";
        }
        text += "  - { name: rest, from: trust, to: untrust, action: permit }\n";
        auto loaded = config::parse_config(text, "scale.yaml");
        ASSERT_TRUE(loaded.ok());
        auto compiled = compiler::compile(*loaded.config, 0);
        ASSERT_TRUE(compiled.ok()) << compiled.error().message;
        // Tables grow linearly: a few entries per rule, far from the limit.
        EXPECT_LT(compiled->tables.cross.size(), 100000u);
        for (int i = 0; i < 10000; i += 37) {
            compiler::PacketSpec p;
            p.from_zone = 1;
            p.to_zone = 2;
            p.family = config::Family::ipv4;
            p.src = config::parse_address(ports ? "198.18.1.1"
                                                : "198.19." + std::to_string(i / 256) + "." + std::to_string(i % 256))
                        .value()
                        .addr;
            p.dst = config::parse_address("198.18.100.200").value().addr;
            p.protocol = ports && i % 2 ? config::kProtoUdp : config::kProtoTcp;
            p.port = static_cast<uint16_t>(ports ? 10000 + i : 5201);
            ASSERT_EQ(compiler::classify_tables(compiled->tables, p), std::optional<uint32_t>(i));
            p.port = 5201;
            p.src = config::parse_address("198.18.1.1").value().addr;
            ASSERT_EQ(compiler::classify_tables(compiled->tables, p), std::optional<uint32_t>(10000));
        }
    }
}

namespace {

std::string host(int base, int i) {
    return "198." + std::to_string(base + i / 65536) + "." + std::to_string(i / 256 % 256) + "." +
           std::to_string(i % 256);
}

compiler::PacketSpec scale_packet(const std::string& src, const std::string& dst, uint8_t protocol, uint16_t port) {
    compiler::PacketSpec p;
    p.from_zone = 1;
    p.to_zone = 2;
    p.family = config::Family::ipv4;
    p.src = config::parse_address(src).value().addr;
    p.dst = config::parse_address(dst).value().addr;
    p.protocol = protocol;
    p.port = port;
    return p;
}

}  // namespace

// Rules of different shapes multiply in one set of tables: 3,000 source-host
// rules and 3,000 destination-host rules make every (source, destination)
// pair a class (9 M entries, more than a generation holds). Split by shape
// they need a few entries per rule, and classify exactly as a linear scan.
TEST(CompilerRandom, MixedShapesSplitIntoGroups) {
    std::string text = std::string(kTwoZones) + "applications:\n";
    for (int i = 0; i < 3000; ++i)
        text += "  a" + std::to_string(i) + ": { protocol: tcp, destination-port: " + std::to_string(20000 + i) +
                " }\n";
    text += "policies:\n";
    for (int i = 0; i < 9000; ++i) {
        text += "  - { name: r" + std::to_string(i) + ", from: trust, to: untrust, ";
        if (i % 3 == 0) text += "source: " + host(19, i);
        else if (i % 3 == 1) text += "destination: " + host(18, i);
        else text += "application: a" + std::to_string(i / 3);
        text += ", action: " + std::string(i % 2 ? "deny" : "reject") + " }\n";
    }
    text += "  - { name: rest, from: trust, to: untrust, action: permit }\n";
    auto loaded = config::parse_config(text, "mixed.yaml");
    ASSERT_TRUE(loaded.ok());
    const config::Config& config = *loaded.config;

    // One group cannot hold them: the split is what makes this compile.
    auto compiled = compiler::compile(config, 0);
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    const CompiledClassifier& t = compiled->tables;
    ASSERT_EQ(t.layout.groups, 3u);  // any/any (ports, rest), source set, destination set
    EXPECT_LT(t.cross.size(), 200000u);
    uint32_t grouped = 0;
    for (const auto& g : t.groups) grouped += g.rules;
    EXPECT_EQ(grouped, 9001u);

    for (int i = 0; i < 9000; i += 61) {
        const std::string src = i % 3 == 0 ? host(19, i) : "198.18.200.1";
        const std::string dst = i % 3 == 1 ? host(18, i) : "198.18.201.1";
        const uint16_t port = static_cast<uint16_t>(i % 3 == 2 ? 20000 + i / 3 : 443);
        for (const auto& p : {scale_packet(src, dst, config::kProtoTcp, port),
                              scale_packet(src, host(18, (i + 1) / 3 * 3 + 1), config::kProtoTcp, port),
                              scale_packet(host(19, i / 3 * 3), dst, config::kProtoTcp, 20000 + (i + 5) / 3 % 3000),
                              scale_packet(src, dst, config::kProtoUdp, port)}) {
            auto expected = compiler::classify_linear(config, p);
            ASSERT_TRUE(expected.has_value());
            ASSERT_EQ(compiler::classify_tables(t, p), expected) << "policy " << i;
        }
    }
}

// Rules that each pair two distinct values (a source host with a destination
// host, or with a port) fill N x N cells of which N are non-empty: those
// tables are stored sparse, and classify exactly as a linear scan.
TEST(CompilerRandom, PairRulesUseSparseTables) {
    std::string text = std::string(kTwoZones) + "applications:\n";
    for (int i = 0; i < 3000; ++i)
        text += "  a" + std::to_string(i) + ": { protocol: udp, destination-port: " + std::to_string(30000 + i) +
                " }\n";
    text += "policies:\n";
    for (int i = 0; i < 6000; ++i) {
        text += "  - { name: r" + std::to_string(i) + ", from: trust, to: untrust, source: " + host(19, i) + ", ";
        if (i % 2) text += "destination: " + host(18, i);
        else text += "application: a" + std::to_string(i / 2);
        text += ", action: " + std::string(i % 3 ? "deny" : "reject") + " }\n";
    }
    text += "  - { name: rest, from: trust, to: untrust, action: permit }\n";
    auto loaded = config::parse_config(text, "pairs.yaml");
    ASSERT_TRUE(loaded.ok());
    const config::Config& config = *loaded.config;
    auto compiled = compiler::compile(config, 1);
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    const CompiledClassifier& t = compiled->tables;
    EXPECT_EQ(t.layout.groups, 3u);  // source + port, source + destination, rest
    EXPECT_GT(t.sparse.size(), 0u);
    EXPECT_LT(t.sparse.size(), 20000u);
    for (const auto& [key, value] : t.sparse) {
        ASSERT_EQ(key.generation, 1);
        ASSERT_NE(value, 0u);
        ASSERT_EQ(t.layout.table[key.group][key.table].width, 0u);
    }
    for (int i = 0; i < 6000; i += 29) {
        const uint16_t port = static_cast<uint16_t>(30000 + i / 2);
        for (const auto& p : {scale_packet(host(19, i), host(18, i), config::kProtoUdp, port),
                              scale_packet(host(19, i), host(18, i + 1), config::kProtoUdp, port),
                              scale_packet(host(19, i), host(18, i), config::kProtoUdp, port + 1),
                              scale_packet(host(19, i + 2), host(18, i), config::kProtoTcp, port)}) {
            auto expected = compiler::classify_linear(config, p);
            ASSERT_TRUE(expected.has_value());
            ASSERT_EQ(compiler::classify_tables(t, p), expected) << "policy " << i;
        }
    }
}

// A wide rule of the same shape overlaps every pair: all N x N cells are
// non-empty, more than either table space holds. Refused, naming the table
// and the group.
TEST(CompilerRandom, PairsUnderAWideRuleAreAClearError) {
    std::string text = std::string(kTwoZones) + "policies:\n";
    for (int i = 0; i < 3000; ++i)
        text += "  - { name: r" + std::to_string(i) + ", from: trust, to: untrust, source: " + host(19, i) +
                ", destination: " + host(18, i) + ", action: deny }\n";
    text += "  - { name: wide, from: trust, to: untrust, source: 198.19.0.0/16, destination: 198.18.0.0/16, "
            "action: deny }\n";
    text += "  - { name: rest, from: trust, to: untrust, action: permit }\n";
    auto loaded = config::parse_config(text, "pairs.yaml");
    ASSERT_TRUE(loaded.ok());
    auto compiled = compiler::compile(*loaded.config, 0);
    ASSERT_FALSE(compiled.ok());
    const std::string& m = compiled.error().message;
    EXPECT_NE(m.find("more classifier table space than a generation holds: T_SRC_DST is 3,002 source classes x "
                     "3,002 destination classes"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("of its cells are non-empty"), std::string::npos) << m;
    EXPECT_NE(m.find("3,001 rules with source set, destination set"), std::string::npos) << m;
}

// Cross-producting has a price: many rules that each combine overlapping
// source and destination prefixes can need more table entries than a
// generation holds. That is an error that says so, never a partial table.
TEST(CompilerRandom, TooManyCombinationsIsAClearError) {
    RandomConfigs gen(7);
    config::Config config = gen.random_config(10000);
    auto compiled = compiler::compile(config, 1);
    ASSERT_FALSE(compiled.ok());
    EXPECT_NE(compiled.error().message.find("more classifier table space than a generation holds"),
              std::string::npos)
        << compiled.error().message;
    EXPECT_NE(compiled.error().message.find("classes x"), std::string::npos) << compiled.error().message;
}

// A filter whose `count` rules could count one packet more than
// CLASSIFIER_MAX_COUNTED times is refused, naming the rule and the file line.
TEST(CompilerRandom, TooManyCountingRulesNameTheRule) {
    std::string text = "interfaces: { lan0: { zone: trust, filter: f } }\nzones: { trust: {} }\nfilters:\n  f:\n";
    for (int i = 0; i < 7; ++i) text += "    - { name: c" + std::to_string(i) + ", protocol: udp, action: count }\n";
    auto loaded = config::parse_config(text, "fw.yaml");
    ASSERT_TRUE(loaded.ok());
    auto compiled = compiler::compile(*loaded.config, 0);
    ASSERT_FALSE(compiled.ok());
    EXPECT_NE(compiled.error().message.find("filters.f[6] \"c6\": a packet can match this rule after 6"),
              std::string::npos)
        << compiled.error().message;
    // The position survives as the error's, for `check --json`.
    ASSERT_TRUE(compiled.error().where.has_value());
    EXPECT_EQ(compiled.error().where->file, "fw.yaml");
    EXPECT_EQ(compiled.error().where->line, 11);
    EXPECT_NE(compiled.error().message.find("filters.f[0] \"c0\" (fw.yaml:5)"), std::string::npos)
        << compiled.error().message;
    // Six fit.
    text.erase(text.rfind("    - { name: c6"));
    auto six = config::parse_config(text, "fw.yaml");
    ASSERT_TRUE(six.ok());
    EXPECT_TRUE(compiler::compile(*six.config, 0).ok());
}
