// Scanning bytes against a compiled ruleset's databases. A worker thread owns
// one Scratch; each direction of a connection owns one DirectionStream, and
// each UDP datagram is scanned as a stream of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "common/result.h"
#include "inspect/ruleset_db.h"

struct hs_scratch;
struct hs_stream;

namespace sluice::inspect {

// Hyperscan's per-thread working memory. One per worker thread, never shared
// between threads. It must fit every database it scans with; during a reload
// old streams still scan with the previous generation's databases, so
// reserve() grows it to fit each new database while keeping the fit for the
// older ones.
class Scratch {
public:
    Scratch() = default;
    ~Scratch();
    Scratch(Scratch&& other) noexcept : scratch_(std::exchange(other.scratch_, nullptr)) {}
    Scratch& operator=(Scratch&& other) noexcept;
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;

    Status reserve(const HsDatabase& database);
    hs_scratch* get() const { return scratch_; }

private:
    hs_scratch* scratch_ = nullptr;
};

// Indices into CompiledRuleset::patterns of the patterns that matched.
using Matches = std::vector<uint32_t>;

// One direction of one connection as a hyperscan stream. It holds the
// ruleset generation it was opened on: a reload that replaces the ruleset
// frees neither the database under the stream nor the pattern list its match
// indices refer to, so the stream keeps the rules it started with until it
// ends. A direction no pattern looks at has no database: the stream then
// only counts bytes.
class DirectionStream {
public:
    static Result<DirectionStream> open(std::shared_ptr<const CompiledRuleset> ruleset, Direction direction,
                                        Scratch& scratch);

    DirectionStream(DirectionStream&& other) noexcept;
    DirectionStream& operator=(DirectionStream&& other) noexcept;
    DirectionStream(const DirectionStream&) = delete;
    DirectionStream& operator=(const DirectionStream&) = delete;
    // Closes without reporting matches if close() was not called.
    ~DirectionStream();

    // Feeds the next bytes of the direction; returns the patterns whose match
    // completed within these bytes (a match spanning earlier calls is
    // reported by the call that completes it). Each pattern at most once per
    // stream.
    Result<Matches> scan(std::span<const uint8_t> bytes, Scratch& scratch);
    // Ends the stream: returns matches that needed the end of data ('$'-anchored).
    Result<Matches> close(Scratch& scratch);

    bool is_open() const { return open_; }
    uint64_t bytes_scanned() const { return bytes_scanned_; }
    // The generation the match indices refer to.
    const CompiledRuleset& ruleset() const { return *ruleset_; }
    Direction direction() const { return direction_; }

private:
    DirectionStream(std::shared_ptr<const CompiledRuleset> ruleset, Direction direction, hs_stream* stream)
        : ruleset_(std::move(ruleset)), direction_(direction), stream_(stream), open_(true) {}
    void discard();

    std::shared_ptr<const CompiledRuleset> ruleset_;
    Direction direction_ = Direction::client_to_server;
    hs_stream* stream_ = nullptr;  // null when the direction has no database
    bool open_ = false;
    uint64_t bytes_scanned_ = 0;
};

// One datagram is one stream opened, scanned and closed, so '^' and '$' anchor
// at the datagram's edges and each pattern reports at most once per datagram.
Result<Matches> scan_datagram(const HsDatabase& database, std::span<const uint8_t> bytes, Scratch& scratch);

// The verdict of a set of matches: the strongest action wins (reject > drop >
// alert); nullopt when nothing matched. Unknown indices are ignored.
std::optional<Action> strongest_action(const CompiledRuleset& ruleset, std::span<const uint32_t> matches);

}  // namespace sluice::inspect
