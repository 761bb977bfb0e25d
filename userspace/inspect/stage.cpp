#include "inspect/stage.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "inspect/platform.h"

extern "C" {
#include "sluice_maps.h"
}

namespace sluice::inspect {

Stage::Stage(const StageOptions& options)
    : options_(options), context_{SessionLink(options.sessions_v4_fd, options.sessions_v6_fd), {}, nullptr,
                                  options.udp_idle_ns} {}

Result<std::unique_ptr<Stage>> Stage::start(const StageOptions& options,
                                            std::shared_ptr<const CompiledRulesets> rulesets) {
    if (auto s = check_platform(); !s) return s.error();
    std::unique_ptr<Stage> stage(new Stage(options));
    auto counters = CounterTable::create(options.counters_path);
    if (!counters) return counters.error();
    stage->counters_ = std::move(counters.value());
    stage->context_.counters = stage->counters_.get();
    stage->context_.rulesets.store(std::move(rulesets));
    auto routing = PuntRoutingLease::acquire(options.routing);
    if (!routing) return routing.error();
    stage->routing_ = std::move(routing.value());

    unsigned n = options.workers ? options.workers : std::max(1u, std::thread::hardware_concurrency());
    StagePorts ports;
    for (unsigned i = 0; i < n; ++i) {
        auto worker = Worker::open(stage->context_, ports);
        if (!worker) {
            stage->stop();
            return make_error("inspection stage: " + worker.error().message);
        }
        ports = worker.value()->ports();  // the rest share the first one's ports
        stage->workers_.push_back(std::move(worker.value()));
    }
    stage->ports_ = ports;
    for (auto& w : stage->workers_) stage->threads_.emplace_back([raw = w.get()] { raw->run(); });
    if (auto s = stage->write_punt_config(true); !s) {
        stage->stop();
        return s.error();
    }
    return stage;
}

Stage::~Stage() { stop(); }

void Stage::update_rulesets(std::shared_ptr<const CompiledRulesets> rulesets) {
    context_.rulesets.store(std::move(rulesets));
}

Status Stage::write_punt_config(bool up) const {
    punt_config cfg{};
    cfg.mark = options_.routing.mark;
    cfg.stage_up = up ? 1 : 0;
    cfg.overloaded = overloaded_ ? 1 : 0;
    cfg.tcp_port = htons(ports_.tcp);
    cfg.udp_port = htons(ports_.udp);
    uint32_t key = 0;
    if (bpf_map_update_elem(options_.punt_cfg_fd, &key, &cfg, BPF_ANY) != 0)
        return make_error(std::string("inspection stage: cannot write punt_cfg: ") + std::strerror(errno));
    return {};
}

void Stage::check_load() {
    int64_t n = open_flows();
    bool over = overloaded_ ? n >= options_.max_flows * 9 / 10 : n > options_.max_flows;
    if (over == overloaded_ || workers_.empty()) return;
    overloaded_ = over;
    std::cerr << "sluice: inspection stage " << (over ? "overloaded" : "no longer overloaded") << ": " << n
              << " open flows (limit " << options_.max_flows << ")"
              << (over ? "; new punted flows get their ruleset's fail-mode" : "") << std::endl;
    if (auto s = write_punt_config(true); !s) std::cerr << "sluice: " << s.error().message << std::endl;
}

void Stage::stop() {
    if (!workers_.empty() || routing_) {
        if (auto s = write_punt_config(false); !s) std::cerr << "sluice: " << s.error().message << std::endl;
    }
    for (auto& w : workers_) w->stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
    workers_.clear();  // closes every proxied connection
    routing_.reset();  // the route goes with the last lease (the DNS proxy may hold one)
}

}  // namespace sluice::inspect
