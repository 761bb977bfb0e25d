#include "perftest/runner.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cluster/environment.h"
#include "cluster/incus_cli.h"
#include "cluster/netns_cluster.h"
#include "perftest/baseline.h"
#include "perftest/compare.h"
#include "perftest/history.h"
#include "perftest/path_check.h"
#include "perftest/paths.h"
#include "perftest/profiler.h"
#include "perftest/text.h"
#include "perftest/throughput.h"

namespace sluice::perftest {

namespace {

constexpr size_t kTopSymbols = 15;

struct Context {
    const PerfTestOptions& options;
    std::ostream& out;
    std::ostream& log;
    std::string root;      // source tree ("" when unknown)
    std::string prefix;
    cluster::Environment environment;
    std::vector<std::string> detection_notes;
    std::unique_ptr<cluster::Executor> executor;

    int passes() const { return options.passes > 0 ? options.passes : (options.quick ? 1 : 3); }
    cluster::IperfParams iperf() const {
        cluster::IperfParams p = options.quick ? environment.quick : environment.normal;
        if (options.quick && p.timeout_seconds <= 0) p.timeout_seconds = p.seconds + 5;
        return p;
    }
};

// "Step 2/7: IPv4 throughput" headers for `all`; nothing otherwise.
struct Steps {
    bool on = false;
    int total = 7;
    int current = 0;
    std::ostream* out = nullptr;
    void next(const std::string& title) {
        if (!on) return;
        ++current;
        *out << "\n## Step " << current << "/" << total << ": " << title << "\n\n";
    }
};

// An Incus environment's nodes exist and run, or an error that says how to
// build them: checked up front, as for netns, rather than letting incus say
// "Instance not found" from deep inside the first measurement.
Status incus_nodes_ready(const cluster::Environment& e, cluster::IncusCli& incus) {
    const std::string up = "`sluice cluster up --env " + e.name + "`";
    for (const auto& [role, name] : std::vector<std::pair<std::string, std::string>>{
             {"lan-host", e.lan_host}, {"fw0", e.fw0}, {"wan-host", e.wan_host}}) {
        if (name.empty()) continue;
        const std::string instance = e.qualified(name);
        auto status = incus.instance_status(instance);
        if (!status) {
            if (cluster::is_not_found(status.error()))
                return make_error("environment " + e.name + " is an Incus cluster, but incus is not installed (" +
                                  status.error().message + ")");
            if (cluster::is_incus_not_found(status.error().message))
                return make_error("no Incus cluster for environment " + e.name + ": its " + role + " " + instance +
                                  " does not exist: run " + up + " first");
            return make_error("environment " + e.name + ": " + status.error().message);
        }
        if (*status != "RUNNING")
            return make_error("environment " + e.name + ": its " + role + " " + instance + " is " + *status +
                              ": start it (incus start " + instance + ") or run " + up);
    }
    return {};
}

Result<Context> set_up(const PerfTestOptions& options, std::ostream& out, std::ostream& log) {
    Context ctx{options, out, log, source_root(), options.prefix.empty() ? cluster::kDefaultPrefix : options.prefix,
                {}, {}, nullptr};
    auto environments = cluster::load_default_environments(options.environments_file);
    if (!environments) return environments.error();
    auto incus = std::make_shared<cluster::IncusCli>();
    auto environment = cluster::select_environment(*environments, options.env, *incus, &ctx.detection_notes);
    if (!environment) return environment.error();
    ctx.environment = std::move(environment.value());
    if (ctx.environment.kind == cluster::EnvironmentKind::netns) {
        if (auto s = cluster::validate_prefix(ctx.prefix); !s) return s.error();
        auto status = cluster::cluster_status(ctx.prefix);
        if (!status.exists) {
            return make_error("no local cluster with prefix \"" + ctx.prefix + "\": run `sluice cluster up --prefix " +
                              ctx.prefix + "` first");
        }
        if (!status.healthy()) {
            std::ostringstream detail;
            status.print(detail);
            return make_error("the local cluster \"" + ctx.prefix + "\" is not healthy (namespace or process missing):\n" +
                              detail.str());
        }
    } else if (auto s = incus_nodes_ready(ctx.environment, *incus); !s) {
        return s.error();
    }
    ctx.executor = cluster::make_executor(ctx.environment, ctx.prefix, incus);
    return ctx;
}

void print_detection(Context& ctx, bool json) {
    if (json) return;
    const auto& e = ctx.environment;
    ctx.out << "Environment: " << e.name << " (" << cluster::to_string(e.kind) << ")"
            << (e.kind == cluster::EnvironmentKind::netns ? ", prefix " + ctx.prefix : "") << "\n";
    ctx.out << "  traffic " << e.traffic_source() << " -> " << e.fw0 << " (active firewall) -> " << e.ipv4_target
            << (e.has_ipv6() ? " / " + e.ipv6_target : "") << "\n";
    for (const auto& note : ctx.detection_notes) ctx.out << "  detection: " << note << "\n";
}

// IPv4 and/or IPv6 through sluice, `passes` times; with a baseline each pass
// measures both configurations, alternating which goes first (sluice first in
// odd passes), so drift across the run lands on both as spread.
Result<CompareRun> measure(Context& ctx, std::vector<Family> families) {
    CompareRun run;
    run.environment = ctx.environment.name;
    run.baseline = ctx.options.baseline;
    run.passes = ctx.passes();
    run.quick = ctx.options.quick;
    auto params = ctx.iperf();
    run.streams = params.streams;
    run.seconds = params.seconds;
    run.expected_ipv4 = ctx.environment.baseline.ipv4;
    run.expected_ipv6 = ctx.environment.baseline.ipv6;
    for (Family f : families) {
        if (!target_of(ctx.environment, f).empty()) {
            run.families.push_back(f);
        } else {
            ctx.log << "perf-test: " << ctx.environment.name << " has no " << display_name(f) << " target; skipped\n";
        }
    }
    if (run.families.empty()) return make_error("nothing to measure in environment " + ctx.environment.name);

    std::unique_ptr<FirewallSwitch> firewall;
    std::optional<BaselineGuard> guard;
    if (!run.baseline.empty()) {
        firewall = make_firewall_switch(ctx.environment, *ctx.executor, ctx.prefix, run.baseline, ctx.log);
        guard.emplace(*firewall);
    }
    // Every number is checked against what it is labelled with.
    PathCheck path = PathCheck::for_environment(*ctx.executor, ctx.environment, ctx.prefix);
    int order = 0;
    for (int pass = 1; pass <= run.passes; ++pass) {
        std::vector<std::string> configs{"sluice"};
        if (!run.baseline.empty()) {
            configs = pass % 2 ? std::vector<std::string>{"sluice", run.baseline}
                               : std::vector<std::string>{run.baseline, "sluice"};
        }
        for (const auto& config : configs) {
            if (guard) {
                auto s = config == "sluice" ? guard->to_sluice() : guard->to_baseline();
                if (!s) return make_error("switching the firewall to " + config + ": " + s.error().message);
            }
            for (Family family : run.families) {
                const std::string label = config + " " + display_name(family) + " (pass " + std::to_string(pass) + ")";
                auto before = path.read();
                if (!before) return make_error("checking the firewall before " + label + ": " + before.error().message);
                if (config != "sluice") {
                    if (auto s = verify_sluice_detached(*before, path.node(), label); !s) return s.error();
                }
                Measurement m = measure_throughput(*ctx.executor, ctx.environment, family, params);
                if (config == "sluice" && m.result) {
                    auto after = path.read();
                    if (!after) return make_error("checking the firewall after " + label + ": " + after.error().message);
                    const double bytes = m.result->receiver_bps / 8 * m.result->seconds;
                    if (auto s = verify_sluice_in_path(*before, *after, bytes, path.node(), label); !s) {
                        return make_error(s.error().message +
                                          "\nperf-test reports no sluice number for a run sluice was not in.");
                    }
                    ctx.log << in_path_note(*before, *after, bytes, path.node()) << "\n";
                }
                m.config = config;
                m.pass = pass;
                m.order = ++order;
                ctx.log << "pass " << pass << "/" << run.passes << ": " << config << " " << display_name(family) << ": ";
                if (m.result) {
                    ctx.log << fixed(m.result->receiver_bps / 1e9, 2) << " Gbps received, " << m.result->retransmits
                            << " retransmits\n";
                } else {
                    ctx.log << "FAILED: " << m.error << "\n";
                }
                run.measurements.push_back(std::move(m));
            }
        }
    }
    if (guard) {
        if (auto s = guard->to_sluice(); !s) return make_error("re-attaching sluice: " + s.error().message);
    }
    return run;
}

std::string history_path(const Context& ctx) {
    return ctx.options.history_file.empty() ? default_history_path() : ctx.options.history_file;
}

void record_history(Context& ctx, const CompareRun& run, const CompareSummary& summary) {
    if (ctx.options.no_history) return;
    std::string path = history_path(ctx);
    HistoryRow row;
    row.date = history_now();
    row.environment = run.environment;
    row.revision = git_revision(ctx.root);
    row.mode = ctx.options.mode;
    row.quick = run.quick;
    row.passes = run.passes;
    row.baseline = run.baseline;
    row.gap_percent = summary.gap_percent;
    for (const auto& f : summary.families) {
        std::optional<double> gbps = f.gbps.count ? std::optional<double>(f.gbps.median) : std::nullopt;
        std::optional<double> ratio = f.ratio.count ? std::optional<double>(f.ratio.median) : std::nullopt;
        (f.family == Family::ipv4 ? row.ipv4_gbps : row.ipv6_gbps) = gbps;
        (f.family == Family::ipv4 ? row.ipv4_ratio : row.ipv6_ratio) = ratio;
    }
    if (!row.ipv4_gbps && !row.ipv6_gbps) return;   // nothing measured: nothing to remember
    if (auto s = append_history(path, row); !s) {
        ctx.log << "perf-test: " << s.error().message << "\n";
    } else {
        ctx.log << "perf-test: appended this run to " << path << "\n";
    }
}

std::string profiles_dir(const Context& ctx) {
    if (!ctx.options.profiles_dir.empty()) return ctx.options.profiles_dir;
    return ctx.root.empty() ? "" : (std::filesystem::path(ctx.root) / "profiles").string();
}

struct ProfileOutcome {
    ProfileRun run;
    std::optional<std::vector<SymbolReview>> review;
    std::string review_source;
    std::string review_note;   // why there is no review
};

Result<ProfileOutcome> profile(Context& ctx, Family family) {
    ProfileOptions po;
    po.streams = ctx.environment.normal.streams;   // a profile needs full load, --quick or not
    po.record_seconds = ctx.options.profile_seconds > 0 ? ctx.options.profile_seconds : (ctx.options.quick ? 5 : 20);
    // Ends on its own after the recording (perf's start-up included), so
    // that its result can be checked against sluice's counters.
    po.traffic_seconds = po.warmup_seconds + po.record_seconds + 8;
    PathCheck firewall = PathCheck::for_environment(*ctx.executor, ctx.environment, ctx.prefix);
    auto run = record_profile(*ctx.executor, ctx.environment, family, po, firewall, ctx.log);
    if (!run) return run.error();
    ProfileOutcome outcome{std::move(run.value()), std::nullopt, "", ""};
    std::string dir = profiles_dir(ctx);
    std::string path = dir.empty() ? "" : (std::filesystem::path(dir) / (ctx.environment.name + ".yaml")).string();
    if (path.empty() || !std::filesystem::exists(path)) {
        outcome.review_note = "no profiles/" + ctx.environment.name + ".yaml: nothing to review against";
        return outcome;
    }
    auto expectations = load_profile_expectations(path);
    if (!expectations) return expectations.error();
    outcome.review = review_profile(outcome.run.profile, *expectations);
    outcome.review_source = path;
    return outcome;
}

void print_profile(Context& ctx, const ProfileOutcome& p) {
    const auto& r = p.run;
    ctx.out << display_name(r.family) << " profile: " << r.perf_binary << " record -a -g --freq=" << r.options.frequency
            << " for " << r.options.record_seconds << " s on " << r.node << " while iperf3 -P " << r.options.streams
            << " ran through it (" << fixed(r.traffic.receiver_bps / 1e9, 2) << " Gbps received, sluice in the path); "
            << r.profile.samples << " samples"
            << (r.profile.event.empty() ? "" : " of " + r.profile.event) << "\n\n";
    ctx.out << "Top " << kTopSymbols << " (self time, percent of all samples on every CPU):\n\n"
            << render_top(r.profile, kTopSymbols) << "\n";
    ctx.out << "BPF programs:\n\n" << render_bpf_programs(r.profile) << "\n";
    if (p.review) {
        ctx.out << "Review against " << p.review_source << ":\n\n" << render_review(*p.review);
        int flagged = 0;
        for (const auto& s : *p.review) flagged += s.status != SymbolStatus::ok;
        ctx.out << (any_red_flag(*p.review) ? "RED FLAG: see the rows marked red-flag.\n"
                                            : flagged ? "Outside the healthy range: " + std::to_string(flagged) + " symbol(s).\n"
                                                      : "Every symbol within its healthy range.\n");
    } else {
        ctx.out << "Review: " << p.review_note << "\n";
    }
}

nlohmann::json profile_json(const ProfileOutcome& p) {
    auto j = profile_to_json(p.run, p.review ? &*p.review : nullptr);
    j["review_source"] = p.review_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.review_source);
    if (!p.review_note.empty()) j["review_note"] = p.review_note;
    return j;
}

nlohmann::json environment_json(const Context& ctx) {
    const auto& e = ctx.environment;
    return {{"name", e.name},          {"kind", cluster::to_string(e.kind)},
            {"prefix", e.kind == cluster::EnvironmentKind::netns ? nlohmann::json(ctx.prefix) : nlohmann::json(nullptr)},
            {"traffic_source", e.traffic_source()},
            {"firewall", e.fw0},       {"ipv4_target", e.ipv4_target},
            {"ipv6_target", e.ipv6_target}, {"detection", ctx.detection_notes}};
}

int throughput_mode(Context& ctx, std::vector<Family> families) {
    print_detection(ctx, ctx.options.json);
    auto run = measure(ctx, families);
    if (!run) {
        ctx.log << "perf-test: " << run.error().message << "\n";
        return 1;
    }
    auto summary = summarize(*run);
    record_history(ctx, *run, summary);
    if (ctx.options.json) {
        auto j = compare_to_json(*run, summary);
        j["environment_detail"] = environment_json(ctx);
        ctx.out << j.dump(2) << "\n";
    } else {
        ctx.out << "\n" << render_compare(*run, summary);
    }
    return summary.all_ok ? 0 : 1;
}

int profile_mode(Context& ctx) {
    print_detection(ctx, ctx.options.json);
    auto p = profile(ctx, Family::ipv4);
    if (!p) {
        ctx.log << "perf-test: " << p.error().message << "\n";
        return 1;
    }
    if (ctx.options.json) {
        nlohmann::json j{{"environment", ctx.environment.name}, {"environment_detail", environment_json(ctx)}};
        j["profiles"]["ipv4"] = profile_json(*p);
        ctx.out << j.dump(2) << "\n";
    } else {
        ctx.out << "\n";
        print_profile(ctx, *p);
    }
    return 0;
}

// The seed's seven steps.
int all_mode(Context& ctx) {
    Steps steps{!ctx.options.json, 7, 0, &ctx.out};
    nlohmann::json j{{"environment", ctx.environment.name}, {"environment_detail", environment_json(ctx)}};
    int status = 0;

    steps.next("environment detection");
    print_detection(ctx, ctx.options.json);

    // Steps 2 and 3 are measured together (interleaved with the baseline when
    // asked) and printed as they come.
    auto run = measure(ctx, {Family::ipv4, Family::ipv6});
    if (!run) {
        ctx.log << "perf-test: " << run.error().message << "\n";
        return 1;
    }
    auto summary = summarize(*run);
    record_history(ctx, *run, summary);
    if (!summary.all_ok) status = 1;
    for (Family family : {Family::ipv4, Family::ipv6}) {
        steps.next(std::string(display_name(family)) + " throughput");
        if (ctx.options.json) continue;
        for (const auto& m : run->measurements) {
            if (m.family != family) continue;
            ctx.out << "- pass " << m.pass << ", " << m.config << ": "
                    << (m.result ? format_gbps(m.result->receiver_bps / 1e9) + " received, " +
                                       format_gbps(m.result->sender_bps / 1e9) + " sent, " +
                                       std::to_string(m.result->retransmits) + " retransmits"
                                 : "FAILED: " + m.error)
                    << "\n";
        }
    }
    steps.next("compare table");
    if (!ctx.options.json) ctx.out << render_compare(*run, summary);
    j["compare"] = compare_to_json(*run, summary);

    std::optional<ProfileOutcome> profiles[2];
    for (Family family : {Family::ipv4, Family::ipv6}) {
        steps.next(std::string(display_name(family)) + " profile");
        if (target_of(ctx.environment, family).empty()) {
            if (!ctx.options.json) ctx.out << "no " << display_name(family) << " target in this environment\n";
            continue;
        }
        auto p = profile(ctx, family);
        if (!p) {
            ctx.log << "perf-test: " << p.error().message << "\n";
            if (!ctx.options.json) ctx.out << "profile failed: " << p.error().message << "\n";
            status = 1;
            continue;
        }
        if (!ctx.options.json) print_profile(ctx, *p);
        j["profiles"][to_string(family)] = profile_json(*p);
        profiles[family == Family::ipv4 ? 0 : 1] = std::move(p.value());
    }

    steps.next("review: IPv4 vs IPv6 profiles side by side");
    if (profiles[0] && profiles[1]) {
        if (!ctx.options.json) {
            ctx.out << "Top " << kTopSymbols << " side by side:\n\n"
                    << render_side_by_side(profiles[0]->run.profile, profiles[1]->run.profile, kTopSymbols);
        }
    } else if (!ctx.options.json) {
        ctx.out << "(needs both profiles)\n";
    }
    if (!ctx.options.json) {
        for (const auto& p : profiles) {
            if (!p || !p->review) continue;
            for (const auto& r : *p->review) {
                if (r.status == SymbolStatus::ok) continue;
                ctx.out << "- " << display_name(p->run.family) << " " << r.expected.symbol << " " << fixed(r.percent, 2)
                        << "%: " << to_string(r.status) << " (healthy " << fixed(r.expected.healthy_min, 1) << "–"
                        << fixed(r.expected.healthy_max, 1) << "%, red flag >" << fixed(r.expected.red_flag, 1)
                        << "%): " << r.expected.meaning << "\n";
            }
        }
        ctx.out << "Background iperf3 clients were stopped by PID after each profile.\n";
    }
    if (ctx.options.json) ctx.out << j.dump(2) << "\n";
    return status;
}

int history_mode(const PerfTestOptions& options, std::ostream& out, std::ostream& log) {
    const std::string path = options.history_file.empty() ? default_history_path() : options.history_file;
    auto rows = load_history(path);
    if (!rows) {
        log << "perf-test: " << rows.error().message << "\n";
        return 1;
    }
    std::vector<HistoryRow> selected;
    for (auto& r : *rows) {
        if (options.env == "auto" || options.env.empty() || r.environment == options.env) selected.push_back(r);
    }
    if (options.json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& r : selected) {
            auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
            j.push_back({{"date", r.date},         {"environment", r.environment}, {"revision", r.revision},
                         {"mode", r.mode},         {"quick", r.quick},             {"passes", r.passes},
                         {"ipv4_gbps", opt(r.ipv4_gbps)}, {"ipv6_gbps", opt(r.ipv6_gbps)},
                         {"gap_percent", opt(r.gap_percent)}, {"baseline", r.baseline},
                         {"ipv4_ratio", opt(r.ipv4_ratio)}, {"ipv6_ratio", opt(r.ipv6_ratio)}});
        }
        out << j.dump(2) << "\n";
    } else {
        out << "Historical results (" << path << ", " << selected.size() << " runs"
            << (options.env == "auto" ? "" : ", environment " + options.env) << "):\n\n"
            << render_history(selected);
    }
    if (!options.svg.empty()) {
        std::string title = "sluice perf-test history" + (options.env == "auto" ? std::string() : ": " + options.env);
        std::ofstream svg(options.svg);
        svg << history_svg(selected, title);
        if (!svg) {
            log << "perf-test: cannot write " << options.svg << "\n";
            return 1;
        }
        log << "perf-test: chart written to " << options.svg << "\n";
    }
    return 0;
}

}  // namespace

int run_perf_test(const PerfTestOptions& options, std::ostream& out, std::ostream& log) {
    if (options.mode == "history") return history_mode(options, out, log);
    if (!options.svg.empty()) {
        log << "perf-test: --svg draws the history: use `sluice perf-test history --svg FILE`\n";
        return 2;
    }
    auto ctx = set_up(options, out, log);
    if (!ctx) {
        log << "perf-test: " << ctx.error().message << "\n";
        return 1;
    }
    if (options.mode == "ipv4") return throughput_mode(*ctx, {Family::ipv4});
    if (options.mode == "ipv6") return throughput_mode(*ctx, {Family::ipv6});
    if (options.mode == "compare") return throughput_mode(*ctx, {Family::ipv4, Family::ipv6});
    if (options.mode == "profile") return profile_mode(*ctx);
    if (options.mode == "all") return all_mode(*ctx);
    log << "perf-test: unknown mode " << options.mode << "\n";
    return 2;
}

}  // namespace sluice::perftest
