#include "inspect/direction_scan.h"

namespace sluice::inspect {

const std::shared_ptr<const HsDatabase>& DirectionScan::database() const {
    return side_ == Direction::client_to_server ? ruleset_->client_to_server : ruleset_->server_to_client;
}

Result<DirectionScan> DirectionScan::open(std::shared_ptr<const CompiledRuleset> ruleset, Direction side,
                                          Scratch& scratch, CounterTable* counters) {
    auto stream = DirectionStream::open(ruleset, side, scratch);
    if (!stream) return stream.error();
    return DirectionScan(std::move(ruleset), side, std::move(stream.value()), counters);
}

ScanOutcome DirectionScan::judge(const Result<Matches>& matches, size_t bytes) {
    ScanOutcome out;
    const CounterSlotRef& rs = slot_;
    if (counters_)
        rs.add(side_ == Direction::client_to_server ? Counter::bytes_client_to_server : Counter::bytes_server_to_client,
               bytes);
    if (!matches) {
        // A scan that fails cannot vouch for the bytes: treat it as a drop.
        if (counters_) rs.add(Counter::stage_errors);
        out.block = Action::drop;
        return out;
    }
    if (!matches->empty()) {
        if (counters_) {
            rs.add(Counter::matches);
            for (uint32_t id : matches.value())
                if (id < ruleset_->patterns.size()) counters_->slot(ruleset_->name, ruleset_->patterns[id].name).add(Counter::matches);
        }
        auto action = strongest_action(*ruleset_, matches.value());
        if (action && *action != Action::alert) {
            out.block = action;
            return out;
        }
        if (counters_ && action) rs.add(Counter::alerts);
    }
    clean_bytes_ += bytes;
    if (ruleset_->inspect_bytes && !offloaded_ && clean_bytes_ >= *ruleset_->inspect_bytes) {
        offloaded_ = true;
        out.offload = true;
        if (counters_) rs.add(Counter::offloaded);
    }
    return out;
}

ScanOutcome DirectionScan::feed(std::span<const uint8_t> bytes, Scratch& scratch) {
    if (offloaded_ || !stream_) return {};
    return judge(stream_->scan(bytes, scratch), bytes.size());
}

ScanOutcome DirectionScan::finish(Scratch& scratch) {
    if (offloaded_ || !stream_ || !stream_->is_open()) return {};
    return judge(stream_->close(scratch), 0);
}

ScanOutcome DirectionScan::datagram(std::span<const uint8_t> bytes, Scratch& scratch) {
    if (offloaded_) return {};
    const auto& db = database();
    if (!db) return judge(Matches{}, bytes.size());
    if (auto s = scratch.reserve(*db); !s) return judge(s.error(), bytes.size());
    if (counters_) slot_.add(Counter::datagrams);
    return judge(scan_datagram(*db, bytes, scratch), bytes.size());
}

}  // namespace sluice::inspect
