// metrics:, flow-log:, default-log: and the policies' log: (docs/operations.md):
// the model a good file parses into, what it compiles to (flags per policy,
// the rate limit), and each mistake reported at its position.
#include <gtest/gtest.h>

#include "compiler/compile.h"
#include "config/load_config.h"

extern "C" {
#include "observe.h"
}

using namespace sluice::config;

namespace {

const std::string kBase =
    "interfaces: { lan0: { zone: trust }, wan0: { zone: untrust } }\n"
    "zones: { trust: { host-inbound: [metrics] }, untrust: {} }\n";

const std::string kPolicies = R"yaml(
policies:
  - { name: out, from: trust, to: untrust, action: permit, log: { open: true, close: true, deny: false } }
  - { name: no-in, from: untrust, to: trust, action: deny, log: [deny] }
  - { name: quiet, from: trust, to: trust, action: permit }
default-log: { deny: true }
)yaml";

std::vector<std::string> errors_of(const std::string& text) {
    auto result = parse_config(text, "t.yaml");
    std::vector<std::string> out;
    for (const auto& d : result.diagnostics) out.push_back(format_diagnostic(d));
    return out;
}

std::string joined(const std::vector<std::string>& v) {
    std::string all;
    for (const auto& e : v) all += e + "\n";
    return all;
}

TEST(ConfigObserve, GoodFileParsesAndCompiles) {
    auto result = parse_config(kBase + kPolicies + R"yaml(
metrics: { listen: "198.18.1.1:9100" }
flow-log:
  output: syslog
  syslog: { server: "[2001:2::9]:5514", facility: local3 }
  rate-limit: 500
  burst: 20
)yaml",
                               "t.yaml");
    ASSERT_TRUE(result.ok()) << joined(errors_of(kBase));
    const Config& c = *result.config;
    ASSERT_TRUE(c.metrics.listen);
    EXPECT_EQ(c.metrics.listen->port, 9100);
    EXPECT_EQ(c.policies[0].log, uint32_t(FLOW_LOG_OPEN | FLOW_LOG_CLOSE));
    EXPECT_EQ(c.policies[1].log, uint32_t(FLOW_LOG_DENY));
    EXPECT_EQ(c.policies[2].log, 0u);
    EXPECT_EQ(c.default_log, uint32_t(FLOW_LOG_DENY));
    EXPECT_EQ(c.flow_log.output, FlowLogOutputKind::syslog);
    ASSERT_TRUE(c.flow_log.syslog_server);
    EXPECT_EQ(c.flow_log.syslog_server->port, 5514);
    EXPECT_EQ(c.flow_log.facility, 19);

    auto compiled = sluice::compiler::compile(c, 0);
    ASSERT_TRUE(compiled.ok()) << compiled.error().message;
    const auto& cc = compiled.value();
    EXPECT_TRUE(cc.flow_log);
    EXPECT_EQ(cc.policy_log, (std::vector<uint32_t>{FLOW_LOG_OPEN | FLOW_LOG_CLOSE, FLOW_LOG_DENY, 0}));
    EXPECT_EQ(cc.default_log, uint32_t(FLOW_LOG_DENY));
    EXPECT_EQ(cc.flow_log_interval_ns, 2'000'000u);          // 500 per second
    EXPECT_EQ(cc.flow_log_tolerance_ns, 19u * 2'000'000u);   // 20 back to back
    // host-inbound's `metrics` opens the listener's port, TCP, in trust only.
    bool found = false;
    for (const auto& [k, v] : cc.host_inbound.entries)
        if (k.zone_id == 1 && k.protocol == 6 && k.port == 9100) found = true;
    EXPECT_TRUE(found);
}

TEST(ConfigObserve, DefaultsWithoutSections) {
    auto result = parse_config(kBase + "metrics: { listen: \"[2001:2::1]:9100\" }\n" + kPolicies, "t.yaml");
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result.config->flow_log.output, FlowLogOutputKind::file);
    EXPECT_EQ(result.config->flow_log.path, kDefaultFlowLogPath);
    EXPECT_EQ(result.config->flow_log.rate_limit, 10000u);
    auto compiled = sluice::compiler::compile(*result.config, 0);
    ASSERT_TRUE(compiled.ok());
    EXPECT_EQ(compiled.value().flow_log_interval_ns, 100'000u);
}

TEST(ConfigObserve, NothingLogsNothingEnabled) {
    auto result = parse_config(
        "interfaces: { lan0: { zone: trust } }\nzones: { trust: {} }\n"
        "policies: [{ name: a, from: trust, to: trust, action: permit }]\n",
        "t.yaml");
    ASSERT_TRUE(result.ok());
    auto compiled = sluice::compiler::compile(*result.config, 0);
    ASSERT_TRUE(compiled.ok());
    EXPECT_FALSE(compiled.value().flow_log);
}

struct BadCase {
    std::string yaml;
    std::string expected;   // a substring of the one error
};

TEST(ConfigObserve, MistakesAreReportedWhereTheyAre) {
    const std::vector<BadCase> cases = {
        {"metrics: { listen: 198.18.1.1 }\n", "t.yaml:3:20: metrics.listen: \"198.18.1.1\" has no port"},
        {"metrics: { listen: \"198.18.1.1:0\" }\n", "metrics.listen: \"198.18.1.1:0\": the port must be 1-65535"},
        {"metrics: { listen: nowhere:9100 }\n", "metrics.listen: \"nowhere:9100\" is not an address to serve"},
        {"metrics: { listen: \"198.18.1.1:9100\", port: 9100 }\n", "metrics.port: unknown key \"port\""},
        {"metrics: { listen: \"198.18.1.1:9100\" }\nflow-log: { output: kafka }\n", "flow-log.output"},
        {"metrics: { listen: \"198.18.1.1:9100\" }\nflow-log: { path: relative.log }\n",
         "flow-log.path: write an absolute path"},
        {"metrics: { listen: \"198.18.1.1:9100\" }\nflow-log: { max-size: 10 }\n", "flow-log.max-size: rotate at 4KiB or more"},
        {"metrics: { listen: \"198.18.1.1:9100\" }\nflow-log: { rate-limit: -1 }\n", "flow-log.rate-limit"},
        {"metrics: { listen: \"198.18.1.1:9100\" }\nflow-log: { burst: 0 }\n", "flow-log.burst"},
        {"metrics: { listen: \"198.18.1.1:9100\" }\nflow-log: { syslog: { facility: mail } }\n",
         "flow-log.syslog.facility"},
        {"metrics: { listen: \"198.18.1.1:9100\" }\ndefault-log: { open: true }\n",
         "default-log: the default action opens no session"},
        {"metrics: { listen: \"198.18.1.1:9100\" }\n"
         "policies: [{ name: d, from: trust, to: untrust, action: deny, log: [open] }]\n",
         "policies[0].log: a deny policy opens no session"},
        {"metrics: { listen: \"198.18.1.1:9100\" }\n"
         "policies: [{ name: p, from: trust, to: untrust, action: permit, log: [opne] }]\n",
         "policies[0].log[0]: \"opne\" is not a flow event"},
        {"metrics: { listen: \"198.18.1.1:9100\" }\n"
         "policies: [{ name: p, from: trust, to: untrust, action: permit, log: { open: maybe } }]\n",
         "policies[0].log.open: expected true or false"},
    };
    for (const auto& c : cases) {
        auto errors = errors_of(kBase + c.yaml);
        ASSERT_EQ(errors.size(), 1u) << c.yaml << joined(errors);
        EXPECT_NE(errors[0].find(c.expected), std::string::npos) << c.yaml << "got: " << errors[0];
    }
}

TEST(ConfigObserve, HostInboundMetricsNeedsTheEndpoint) {
    auto errors = errors_of(kBase);
    ASSERT_EQ(errors.size(), 1u) << joined(errors);
    EXPECT_NE(errors[0].find("zones.trust.host-inbound[0]: host-inbound names metrics, but the config serves no metrics"),
              std::string::npos)
        << errors[0];
}

}  // namespace
