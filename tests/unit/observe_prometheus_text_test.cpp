// The Prometheus text format writer: exact output, escaping, and refusal of
// names Prometheus would not take.
#include <gtest/gtest.h>

#include "observe/prometheus_text.h"

using namespace sluice::observe;

TEST(PrometheusText, RendersFamiliesExactly) {
    MetricFamily packets{"sluice_packets_total", "Packets.\nBy reason.", MetricType::counter, {}};
    packets.add({{"reason", "drop-policy-deny"}, {"kind", "drop"}}, 9).add({{"reason", "a\"b\\c\nd"}, {"kind", "x"}}, 0);
    MetricFamily up{"sluice_up", "Up.", MetricType::gauge, {}};
    up.add({}, 1.5);
    EXPECT_EQ(render_prometheus({packets, up}),
              "# HELP sluice_packets_total Packets.\\nBy reason.\n"
              "# TYPE sluice_packets_total counter\n"
              "sluice_packets_total{reason=\"drop-policy-deny\",kind=\"drop\"} 9\n"
              "sluice_packets_total{reason=\"a\\\"b\\\\c\\nd\",kind=\"x\"} 0\n"
              "# HELP sluice_up Up.\n"
              "# TYPE sluice_up gauge\n"
              "sluice_up 1.5\n");
}

TEST(PrometheusText, LargeCountersStayIntegers) {
    MetricFamily f{"sluice_bytes_total", "Bytes.", MetricType::counter, {}};
    f.add({}, 123456789012345.0);
    EXPECT_NE(render_prometheus({f}).find("sluice_bytes_total 123456789012345\n"), std::string::npos);
}

TEST(PrometheusText, RefusesBadNamesAndDuplicates) {
    MetricFamily bad{"sluice-bad", "x", MetricType::counter, {}};
    EXPECT_THROW(render_prometheus({bad}), std::invalid_argument);
    MetricFamily label{"sluice_ok", "x", MetricType::counter, {}};
    label.add({{"__reserved", "v"}}, 1);
    EXPECT_THROW(render_prometheus({label}), std::invalid_argument);
    MetricFamily a{"sluice_a", "x", MetricType::counter, {}};
    EXPECT_THROW(render_prometheus({a, a}), std::invalid_argument);
}

TEST(PrometheusText, JsonCarriesTheSameSamples) {
    MetricFamily f{"sluice_sessions", "Sessions.", MetricType::gauge, {}};
    f.add({{"family", "ipv4"}}, 3);
    auto j = families_json({f});
    ASSERT_EQ(j.size(), 1u);
    EXPECT_EQ(j[0]["type"], "gauge");
    EXPECT_EQ(j[0]["samples"][0]["labels"]["family"], "ipv4");
    EXPECT_EQ(j[0]["samples"][0]["value"], 3.0);
}
