#include "pipeline/prepare.h"

#include <chrono>

#include "compiler/compile.h"
#include "config/load_config.h"
#include "inspect/platform.h"

namespace sluice::pipeline {
namespace {

// Regexes are checked by the compiler that will run them: hyperscan rejects
// what PCRE accepts (back-references, look-around, patterns that match the
// empty string). Each refused pattern is a problem at its regex.
std::shared_ptr<const inspect::CompiledRulesets> compile_patterns(const config::Config& config,
                                                                  std::vector<config::Diagnostic>& problems) {
    if (!config.rulesets.empty()) {
        if (auto platform = inspect::check_platform(); !platform) {
            problems.push_back(config::Diagnostic{config.file, {}, "inspect",
                                                  "cannot compile patterns: " + platform.error().message});
            return nullptr;
        }
    }
    const size_t before = problems.size();
    auto rulesets = inspect::compile_rulesets(config, problems);
    if (!rulesets) {
        if (problems.size() == before)
            problems.push_back(config::Diagnostic{config.file, {}, "inspect", rulesets.error().message});
        return nullptr;
    }
    return std::make_shared<const inspect::CompiledRulesets>(std::move(rulesets.value()));
}

// A compile-stage error keeps the position the compiler gave it, if any.
config::Diagnostic compile_problem(const config::Config& config, const Error& error) {
    if (error.where) return config::Diagnostic{error.where->file.empty() ? config.file : error.where->file,
                                               config::Location{error.where->line, error.where->column},
                                               error.where->path, error.message};
    return config::Diagnostic{config.file, {}, "", "cannot compile: " + error.message};
}

}  // namespace

Error Prepared::error() const {
    if (problems.empty()) return make_error("the config was not prepared");
    std::string text;
    for (const auto& d : problems) text += (text.empty() ? "" : "\n") + config::format_diagnostic(d);
    const config::Diagnostic& first = problems.front();
    Error e = make_error(ErrorCode::InvalidConfig, text);
    e.where = ErrorLocation{first.file, first.location.line, first.location.column, first.path};
    return e;
}

Prepared prepare(const std::string& path, const PrepareOptions& options) {
    Prepared out;
    config::LoadResult loaded = config::read_config_file(path);
    if (!loaded.ok()) {
        out.problems = std::move(loaded.diagnostics);
        return out;
    }
    config::Config& parsed = *loaded.config;
    if (options.ruleset_ids) {
        auto ids = options.ruleset_ids(parsed);
        if (!ids) {
            out.problems.push_back(config::Diagnostic{parsed.file, {}, "inspect", ids.error().message});
            return out;
        }
        parsed.ruleset_ids = std::move(ids.value());
    }
    // Both stages run even when the first fails, so one check names every problem.
    const auto started = std::chrono::steady_clock::now();
    auto compiled = compiler::compile(parsed, static_cast<uint8_t>(options.generation));
    const double compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    if (!compiled) out.problems.push_back(compile_problem(parsed, compiled.error()));
    auto rulesets = compile_patterns(parsed, out.problems);
    if (!out.problems.empty()) return out;
    out.config = PreparedConfig{std::move(parsed), std::move(compiled.value()), std::move(rulesets), compile_ms};
    return out;
}

}  // namespace sluice::pipeline
