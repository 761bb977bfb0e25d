#include "bench/connrate_run.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <thread>

namespace sluice::bench {

Result<cluster::BackgroundProcess> start_connrate_server(Lab& lab, const std::string& tool,
                                                         const ConnrateServer& spec, const std::string& log_name) {
    std::vector<std::string> argv{tool, "server"};
    for (const auto& a : spec.addresses) {
        argv.push_back("--address");
        argv.push_back(a);
    }
    for (const auto& a : {std::string("--ports"), spec.ports, std::string("--threads"), std::to_string(spec.threads)})
        argv.push_back(a);
    auto p = lab.start(spec.node, argv, log_name, spec.cpu);
    if (!p) return p.error();
    for (int i = 0; i < 50; ++i) {
        if (read_text(p->log_path).find("listening") != std::string::npos) return *p;
        if (!lab.running(*p)) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::string text = read_text(p->log_path);
    (void)lab.stop(*p);
    return make_error("sluice_connrate server (ports " + spec.ports + ") did not start listening: " + text);
}

Result<ConnrateOutcome> parse_connrate(const std::string& text) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("per_second"))
        return make_error("sluice_connrate printed no result: " + text);
    ConnrateOutcome o;
    o.json = text;
    o.per_second = j.value("per_second", 0.0);
    o.completed = j.value("completed", uint64_t{0});
    if (j.contains("failures") && j["failures"].is_object())
        for (const auto& [k, v] : j["failures"].items()) {
            o.failures_by_kind[k] = v.get<uint64_t>();
            o.failures += v.get<uint64_t>();
        }
    if (j.contains("latency_us") && j["latency_us"].is_object()) {
        o.p50_us = j["latency_us"].value("p50", uint64_t{0});
        o.p90_us = j["latency_us"].value("p90", uint64_t{0});
        o.p99_us = j["latency_us"].value("p99", uint64_t{0});
    }
    o.next_offset = j.value("next_offset", uint64_t{0});
    return o;
}

Result<ConnrateOutcome> run_connrate(Lab& lab, const std::string& tool, const ConnrateClient& spec,
                                     uint64_t* offset) {
    auto num = [](double v) {
        std::string s = std::to_string(v);
        while (s.size() > 1 && s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
        return s;
    };
    std::vector<std::string> argv;
    if (spec.cpu >= 0) argv = {"taskset", "-c", std::to_string(spec.cpu)};
    for (const auto& a : {tool, std::string("client"), std::string("--address"), spec.address, std::string("--ports"),
                          spec.ports})
        argv.push_back(a);
    for (const auto& s : spec.sources) {
        argv.push_back("--source");
        argv.push_back(s);
    }
    for (const auto& a : {std::string("--duration"), num(spec.duration), std::string("--warmup"), num(spec.warmup),
                          std::string("--threads"), std::to_string(spec.threads), std::string("--concurrency"),
                          std::to_string(spec.concurrency), std::string("--offset"), std::to_string(*offset)})
        argv.push_back(a);
    if (spec.timeout_ms > 0) {
        argv.push_back("--timeout-ms");
        argv.push_back(std::to_string(spec.timeout_ms));
    }
    auto timeout = std::chrono::seconds(static_cast<long>(std::ceil(spec.duration + spec.warmup)) + 60);
    auto r = lab.output(spec.node, argv, timeout);
    if (!r) return with_context("sluice_connrate client", r.error());
    auto o = parse_connrate(*r);
    if (!o) return o.error();
    *offset = o->next_offset;
    return o;
}

}  // namespace sluice::bench
