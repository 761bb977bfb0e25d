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
        FlowMatches one;  // a datagram: a flow of its own
        FlowMatches& f = flow_ ? *flow_ : one;
        if (f.patterns.size() < ruleset_->patterns.size()) f.patterns.resize(ruleset_->patterns.size());
        if (counters_) {
            if (!f.any) rs.add(Counter::matches);
            for (uint32_t id : matches.value())
                if (id < ruleset_->patterns.size() && !f.patterns[id]) {
                    f.patterns[id] = true;
                    counters_->slot(ruleset_->name, ruleset_->patterns[id].name).add(Counter::matches);
                }
        }
        f.any = true;
        auto action = strongest_action(*ruleset_, matches.value());
        if (action && *action != Action::alert) {
            out.block = action;
            return out;
        }
        if (counters_ && action && !f.alerted) rs.add(Counter::alerts);
        if (action) f.alerted = true;
    }
    clean_bytes_ += bytes;
    if (ruleset_->inspect_bytes && !offloaded_ && clean_bytes_ >= *ruleset_->inspect_bytes) {
        offloaded_ = true;
        out.offload = true;
        if (counters_) rs.add(Counter::offloaded);
    }
    return out;
}

ScanOutcome DirectionScan::judge_client_hello(std::span<const uint8_t> bytes) {
    ScanOutcome out;
    if (counters_) slot_.add(Counter::bytes_client_to_server, bytes.size());
    const auto state = client_hello_->feed(bytes);
    if (state == ClientHelloReader::State::need_more) return out;
    const bool allowed = state == ClientHelloReader::State::done && ruleset_->sni_gate->allows(client_hello_->sni());
    client_hello_.reset();
    if (!allowed) {
        // Not TLS, no SNI, or a name the scope does not allow: the client
        // is reset (the relay's block() counts it).
        out.block = Action::reject;
        return out;
    }
    offloaded_ = true;
    out.offload = true;
    if (counters_) slot_.add(Counter::offloaded);
    return out;
}

ScanOutcome DirectionScan::feed(std::span<const uint8_t> bytes, Scratch& scratch) {
    if (client_hello_) return judge_client_hello(bytes);
    if (offloaded_ || !stream_) return {};
    return judge(stream_->scan(bytes, scratch), bytes.size());
}

ScanOutcome DirectionScan::finish(Scratch& scratch) {
    if (client_hello_) {
        // The client ended before its ClientHello was complete: nothing
        // was judged allowed, so nothing more goes through.
        client_hello_.reset();
        return {.block = Action::reject, .offload = false};
    }
    if (offloaded_ || !stream_ || !stream_->is_open()) return {};
    return judge(stream_->close(scratch), 0);
}

ScanOutcome DirectionScan::datagram(std::span<const uint8_t> bytes, Scratch& scratch) {
    if (offloaded_) return {};
    const auto& db = database();
    if (counters_) slot_.add(Counter::datagrams);
    if (!db) return judge(Matches{}, bytes.size());
    if (auto s = scratch.reserve(*db); !s) return judge(s.error(), bytes.size());
    return judge(scan_datagram(*db, bytes, scratch), bytes.size());
}

}  // namespace sluice::inspect
