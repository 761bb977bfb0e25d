#include "inspect/scanner.h"

#include <hs/hs.h>

#include <algorithm>
#include <limits>

#include "inspect/platform.h"

namespace sluice::inspect {
namespace {

int collect_match(unsigned id, unsigned long long /*from*/, unsigned long long /*to*/, unsigned /*flags*/,
                  void* context) {
    static_cast<Matches*>(context)->push_back(id);
    return 0;  // keep scanning: every pattern that matches is counted
}

Error scan_error(const char* what, hs_error_t code) {
    return make_error(std::string("hyperscan ") + what + " failed: " + hs_error_name(code));
}

// hs_scan_stream takes an unsigned length; longer buffers go in pieces, which
// a stream treats exactly like one buffer.
hs_error_t scan_in_pieces(hs_stream_t* stream, std::span<const uint8_t> bytes, hs_scratch_t* scratch,
                          Matches& matches) {
    constexpr size_t kMaxPiece = std::numeric_limits<unsigned>::max();
    while (!bytes.empty()) {
        const size_t piece = std::min(bytes.size(), kMaxPiece);
        hs_error_t rc = hs_scan_stream(stream, reinterpret_cast<const char*>(bytes.data()),
                                       static_cast<unsigned>(piece), 0, scratch, collect_match, &matches);
        if (rc != HS_SUCCESS) return rc;
        bytes = bytes.subspan(piece);
    }
    return HS_SUCCESS;
}

}  // namespace

Scratch::~Scratch() { hs_free_scratch(scratch_); }

Scratch& Scratch::operator=(Scratch&& other) noexcept {
    if (this != &other) {
        hs_free_scratch(scratch_);
        scratch_ = std::exchange(other.scratch_, nullptr);
    }
    return *this;
}

Status Scratch::reserve(const HsDatabase& database) {
    // Grows in place (or reallocates) so it fits `database` and still fits
    // every database it fitted before; a no-op when it already fits.
    hs_error_t rc = hs_alloc_scratch(database.get(), &scratch_);
    if (rc != HS_SUCCESS) return scan_error("scratch allocation", rc);
    return {};
}

Result<DirectionStream> DirectionStream::open(std::shared_ptr<const CompiledRuleset> ruleset, Direction direction,
                                              Scratch& scratch) {
    if (!ruleset) return make_error("inspection stream opened without a ruleset");
    const HsDatabase* database = ruleset->database(direction);
    if (!database) return DirectionStream(std::move(ruleset), direction, nullptr);
    if (Status reserved = scratch.reserve(*database); !reserved) return reserved.error();
    hs_stream_t* stream = nullptr;
    if (hs_error_t rc = hs_open_stream(database->get(), 0, &stream); rc != HS_SUCCESS)
        return scan_error("stream open", rc);
    return DirectionStream(std::move(ruleset), direction, stream);
}

DirectionStream::DirectionStream(DirectionStream&& other) noexcept
    : ruleset_(std::move(other.ruleset_)),
      direction_(other.direction_),
      stream_(std::exchange(other.stream_, nullptr)),
      open_(std::exchange(other.open_, false)),
      bytes_scanned_(other.bytes_scanned_) {}

DirectionStream& DirectionStream::operator=(DirectionStream&& other) noexcept {
    if (this != &other) {
        discard();
        ruleset_ = std::move(other.ruleset_);
        direction_ = other.direction_;
        stream_ = std::exchange(other.stream_, nullptr);
        open_ = std::exchange(other.open_, false);
        bytes_scanned_ = other.bytes_scanned_;
    }
    return *this;
}

DirectionStream::~DirectionStream() { discard(); }

void DirectionStream::discard() {
    // Without scratch and callback hyperscan only frees the stream state.
    if (stream_) hs_close_stream(stream_, nullptr, nullptr, nullptr);
    stream_ = nullptr;
    open_ = false;
}

Result<Matches> DirectionStream::scan(std::span<const uint8_t> bytes, Scratch& scratch) {
    if (!open_) return make_error("scan of a closed inspection stream");
    bytes_scanned_ += bytes.size();
    Matches matches;
    if (!stream_) return matches;
    if (hs_error_t rc = scan_in_pieces(stream_, bytes, scratch.get(), matches); rc != HS_SUCCESS)
        return scan_error("stream scan", rc);
    return matches;
}

Result<Matches> DirectionStream::close(Scratch& scratch) {
    if (!open_) return make_error("close of a closed inspection stream");
    Matches matches;
    if (stream_) {
        hs_error_t rc = hs_close_stream(stream_, scratch.get(), collect_match, &matches);
        if (rc == HS_SUCCESS) stream_ = nullptr;  // hyperscan freed it
        else {
            discard();  // a refused close leaves the state allocated
            return scan_error("stream close", rc);
        }
    }
    open_ = false;
    return matches;
}

Result<Matches> scan_datagram(const HsDatabase& database, std::span<const uint8_t> bytes, Scratch& scratch) {
    if (Status reserved = scratch.reserve(database); !reserved) return reserved.error();
    hs_stream_t* stream = nullptr;
    if (hs_error_t rc = hs_open_stream(database.get(), 0, &stream); rc != HS_SUCCESS)
        return scan_error("stream open", rc);
    Matches matches;
    hs_error_t rc = scan_in_pieces(stream, bytes, scratch.get(), matches);
    if (rc != HS_SUCCESS) {
        hs_close_stream(stream, nullptr, nullptr, nullptr);
        return scan_error("datagram scan", rc);
    }
    if (rc = hs_close_stream(stream, scratch.get(), collect_match, &matches); rc != HS_SUCCESS) {
        hs_close_stream(stream, nullptr, nullptr, nullptr);
        return scan_error("datagram close", rc);
    }
    return matches;
}

std::optional<Action> strongest_action(const CompiledRuleset& ruleset, std::span<const uint32_t> matches) {
    std::optional<Action> strongest;
    for (uint32_t index : matches) {
        if (index >= ruleset.patterns.size()) continue;
        const Action action = ruleset.patterns[index].action;
        if (!strongest || action > *strongest) strongest = action;
    }
    return strongest;
}

}  // namespace sluice::inspect
