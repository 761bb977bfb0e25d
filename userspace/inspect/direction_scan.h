// One direction of one punted flow as the stage scans it: its hyperscan
// stream, the ruleset it started with, its byte count against the ruleset's
// inspect-bytes, and the counters each match feeds.
#pragma once

#include <memory>
#include <optional>
#include <span>

#include "inspect/scanner.h"
#include "inspect/stage_context.h"
#include "inspect/tls_client_hello.h"

namespace sluice::inspect {

// What a flow (both directions) has matched so far: counters count flows.
struct FlowMatches {
    bool any = false;
    bool alerted = false;
    std::vector<bool> patterns;
};

struct ScanOutcome {
    std::optional<Action> block;  // drop or reject: the flow must be stopped
    bool offload = false;         // inspect-bytes reached with these bytes: stop scanning
};

class DirectionScan {
public:
    // A TCP direction: one stream for the connection's life.
    static Result<DirectionScan> open(std::shared_ptr<const CompiledRuleset> ruleset, Direction side, Scratch& scratch,
                                      CounterTable* counters);

    // A UDP direction: datagrams are scanned one by one, no stream.
    static DirectionScan for_datagrams(std::shared_ptr<const CompiledRuleset> ruleset, Direction side,
                                       CounterTable* counters) {
        return DirectionScan(std::move(ruleset), side, std::nullopt, counters);
    }

    // The next bytes of the direction. Once offloaded, bytes pass unscanned.
    ScanOutcome feed(std::span<const uint8_t> bytes, Scratch& scratch);
    // End of the direction: patterns anchored at the end ('$') may match.
    ScanOutcome finish(Scratch& scratch);
    // A UDP datagram: scanned on its own ('^'/'$' at its edges).
    ScanOutcome datagram(std::span<const uint8_t> bytes, Scratch& scratch);

    bool offloaded() const { return offloaded_; }
    // Patterns still watch this direction: the ruleset has some for it and
    // inspect-bytes has not been reached.
    bool needs_scanning() const { return !offloaded_ && (database() != nullptr || client_hello_ != nullptr); }
    void share(std::shared_ptr<FlowMatches> m) { flow_ = std::move(m); }
    const CompiledRuleset& ruleset() const { return *ruleset_; }

private:
    DirectionScan(std::shared_ptr<const CompiledRuleset> ruleset, Direction side, std::optional<DirectionStream> stream,
                  CounterTable* counters)
        : ruleset_(std::move(ruleset)),
          side_(side),
          stream_(std::move(stream)),
          counters_(counters),
          // Found once: slot() takes the table's lock, the counters themselves don't.
          slot_(counters ? counters->slot(ruleset_->name) : CounterSlotRef(nullptr)) {
        if (ruleset_->sni_gate && side_ == Direction::client_to_server) client_hello_ = std::make_unique<ClientHelloReader>();
    }
    // An egress SNI check's client direction: the ClientHello decides.
    ScanOutcome judge_client_hello(std::span<const uint8_t> bytes);
    ScanOutcome judge(const Result<Matches>& matches, size_t bytes);
    const std::shared_ptr<const HsDatabase>& database() const;

    std::shared_ptr<const CompiledRuleset> ruleset_;
    Direction side_;
    std::optional<DirectionStream> stream_;
    CounterTable* counters_;
    CounterSlotRef slot_;  // the ruleset's own counters
    uint64_t clean_bytes_ = 0;
    bool offloaded_ = false;
    std::shared_ptr<FlowMatches> flow_;
    std::unique_ptr<ClientHelloReader> client_hello_;  // the SNI check's reader, until it decided
};

}  // namespace sluice::inspect
