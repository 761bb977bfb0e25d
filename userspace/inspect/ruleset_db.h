// Config rulesets compiled into hyperscan stream-mode databases, one per
// direction, so the stage scans each direction of a connection as a byte
// stream (docs/design.md "Inspection stage"). A compiled generation is immutable
// and shared: a reload builds a new CompiledRulesets while streams opened on
// the old one keep their databases alive through shared_ptr until they end.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "config/diagnostics.h"

struct hs_database;

namespace sluice::inspect {

// Ordered by strength, so the verdict of several matches is the largest.
enum class Action : uint8_t { alert, drop, reject };

const char* to_string(Action action);

struct PatternInfo {
    std::string name;
    Action action = Action::alert;
    config::PatternDirection direction = config::PatternDirection::both;
};

// Owns one hyperscan database; non-copyable, freed with hs_free_database.
class HsDatabase {
public:
    HsDatabase(hs_database* database, std::vector<uint32_t> pattern_ids)
        : database_(database), pattern_ids_(std::move(pattern_ids)) {}
    ~HsDatabase();
    HsDatabase(const HsDatabase&) = delete;
    HsDatabase& operator=(const HsDatabase&) = delete;

    const hs_database* get() const { return database_; }
    // Indices (into the ruleset's pattern list) of the patterns compiled in.
    const std::vector<uint32_t>& pattern_ids() const { return pattern_ids_; }
    // Bytes of stream state every open stream on this database costs.
    size_t stream_size() const;

private:
    hs_database* database_;
    std::vector<uint32_t> pattern_ids_;
};

// The direction of traffic a stream carries (a pattern may look at both).
enum class Direction : uint8_t { client_to_server, server_to_client };

// egress verify-sni (docs/egress.md): a TLS connection to an address the
// scope learned passes only when its ClientHello asks for a name the scope
// allows (and the DoH blocklist does not name); the stage reads the
// ClientHello, resets the connection or hands it back to the fast path.
// The egress policy the SNI checks decide with: one per compile, swapped when
// rules change at run time (`sluice egress add`) without a recompile.
struct EgressPolicyCell {
    std::atomic<std::shared_ptr<const config::Egress>> policy;
};

struct SniGate {
    std::shared_ptr<EgressPolicyCell> cell;
    uint8_t scope_id = 0;
    bool allows(std::string_view sni) const;
};

struct CompiledRuleset {
    std::string name;
    uint16_t id = 0;  // Config::ruleset_id: 1-based file order
    bool fail_closed = true;
    std::optional<uint64_t> inspect_bytes;  // empty = unlimited
    std::vector<PatternInfo> patterns;      // index = hyperscan match id
    // Patterns for client-to-server or both / server-to-client or both; null
    // when no pattern looks at that direction (it needs no scanning).
    std::shared_ptr<const HsDatabase> client_to_server, server_to_client;
    // Set for an egress scope's SNI check (id SLUICE_EGRESS_SNI_RULESET_BASE |
    // scope): no patterns; the client's ClientHello decides.
    std::shared_ptr<const SniGate> sni_gate;

    const HsDatabase* database(Direction direction) const {
        return (direction == Direction::client_to_server ? client_to_server : server_to_client).get();
    }
};

struct CompiledRulesets {
    // index = id - 1; null where no ruleset has that id (ids stay stable
    // across reloads, so a removed ruleset leaves a gap)
    std::vector<std::shared_ptr<const CompiledRuleset>> rulesets;
    // The egress scopes' SNI checks, index = scope id - 1 (null where a scope has none).
    std::vector<std::shared_ptr<const CompiledRuleset>> sni_gates;
    std::shared_ptr<EgressPolicyCell> egress_policy;  // what they decide with; null without them

    // The ruleset a session carries by id; null for 0 or an unknown id.
    // Shared, so a stream opened on it can keep this generation alive.
    std::shared_ptr<const CompiledRuleset> find(uint16_t id) const;
    size_t pattern_count() const;
};

// Compiles every ruleset of the config. Every invalid pattern is reported in
// `problems` as FILE:LINE:COLUMN of its regex, path
// "inspect.rulesets.NAME.patterns[I].regex", message "invalid regex: <hyperscan's
// message>"; then the result is an error and nothing is returned.
Result<CompiledRulesets> compile_rulesets(const config::Config& config, std::vector<config::Diagnostic>& problems);

}  // namespace sluice::inspect
