// Stream scanning as the stage does it: each direction of a connection is one
// hyperscan stream fed in pieces, a datagram is a stream of its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "inspect/ruleset_db.h"
#include "inspect/scanner.h"

using namespace sluice;
using namespace sluice::inspect;
using config::PatternAction;
using config::PatternDirection;

namespace {

config::InspectPattern pattern(std::string name, std::string regex,
                               PatternDirection direction = PatternDirection::both,
                               PatternAction action = PatternAction::alert, bool caseless = false) {
    return {.name = std::move(name), .location = {}, .regex = std::move(regex), .direction = direction,
            .action = action, .caseless = caseless};
}

// One ruleset "r" of the given patterns, compiled; fails the test on error.
std::shared_ptr<const CompiledRuleset> compile(std::vector<config::InspectPattern> patterns) {
    config::Config config;
    config.file = "test.yaml";
    config.rulesets.push_back({.name = "r", .location = {}, .fail_closed = true, .inspect_bytes = {},
                               .patterns = std::move(patterns)});
    std::vector<config::Diagnostic> problems;
    auto compiled = compile_rulesets(config, problems);
    EXPECT_TRUE(compiled.ok()) << (compiled.ok() ? "" : compiled.error().message);
    if (!compiled.ok()) return nullptr;
    return compiled->rulesets.at(0);
}

std::span<const uint8_t> bytes(std::string_view text) {
    return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

// The names of the matched patterns, sorted, so expectations read as names.
std::vector<std::string> names(const CompiledRuleset& ruleset, const Matches& matches) {
    std::vector<std::string> out;
    for (uint32_t index : matches) out.push_back(ruleset.patterns.at(index).name);
    std::sort(out.begin(), out.end());
    return out;
}

using Names = std::vector<std::string>;

// A stream on one direction of a ruleset plus the calls a test makes on it;
// results are pattern names of the generation the stream was opened on.
class Stream {
public:
    Stream(std::shared_ptr<const CompiledRuleset> ruleset, Direction direction, Scratch& scratch)
        : scratch_(scratch), stream_(open(std::move(ruleset), direction, scratch)) {}

    Names scan(std::string_view text) { return names_of(stream_.scan(bytes(text), scratch_)); }
    Names close() { return names_of(stream_.close(scratch_)); }
    DirectionStream& raw() { return stream_; }

private:
    static DirectionStream open(std::shared_ptr<const CompiledRuleset> ruleset, Direction direction,
                                Scratch& scratch) {
        auto stream = DirectionStream::open(std::move(ruleset), direction, scratch);
        if (!stream.ok()) ADD_FAILURE() << stream.error().message;
        return std::move(stream).value();
    }
    Names names_of(const Result<Matches>& matches) {
        EXPECT_TRUE(matches.ok()) << (matches.ok() ? "" : matches.error().message);
        return matches.ok() ? names(stream_.ruleset(), matches.value()) : Names{"<error>"};
    }
    Scratch& scratch_;
    DirectionStream stream_;
};

constexpr Direction kToServer = Direction::client_to_server;
constexpr Direction kToClient = Direction::server_to_client;

}  // namespace

TEST(InspectScanner, PatternSplitAcrossTwoScansMatchesInTheCallThatCompletesIt) {
    auto ruleset = compile({pattern("admin", "GET /admin")});
    Scratch scratch;
    Stream stream(ruleset, kToServer, scratch);
    EXPECT_EQ(stream.scan("GET /ad"), Names{});
    EXPECT_EQ(stream.scan("min HTTP/1.1\r\n"), Names{"admin"});
    EXPECT_EQ(stream.close(), Names{});
}

TEST(InspectScanner, PatternSplitAcrossManyScansMatchesOnTheLastByte) {
    auto ruleset = compile({pattern("flag", R"(flag\{[A-Za-z0-9_]+\})")});
    Scratch scratch;
    Stream stream(ruleset, kToClient, scratch);
    const std::string text = "xx flag{s3cret_value} yy";
    const size_t last = text.find('}');
    for (size_t i = 0; i < text.size(); ++i)
        EXPECT_EQ(stream.scan(text.substr(i, 1)), i == last ? Names{"flag"} : Names{}) << "byte " << i;
    EXPECT_EQ(stream.raw().bytes_scanned(), text.size());
}

TEST(InspectScanner, EachDirectionDatabaseHoldsItsOwnAndBothPatterns) {
    auto ruleset = compile({pattern("upload", "upload", PatternDirection::client_to_server),
                            pattern("flag", "flag", PatternDirection::server_to_client),
                            pattern("evil", "evil", PatternDirection::both)});
    ASSERT_TRUE(ruleset->client_to_server && ruleset->server_to_client);
    EXPECT_EQ(ruleset->client_to_server->pattern_ids(), (std::vector<uint32_t>{0, 2}));
    EXPECT_EQ(ruleset->server_to_client->pattern_ids(), (std::vector<uint32_t>{1, 2}));

    Scratch scratch;
    Stream to_server(ruleset, kToServer, scratch);
    Stream to_client(ruleset, kToClient, scratch);
    EXPECT_EQ(to_server.scan("upload flag evil"), (Names{"evil", "upload"}));
    EXPECT_EQ(to_client.scan("upload flag evil"), (Names{"evil", "flag"}));
}

TEST(InspectScanner, ADirectionWithoutPatternsHasNoDatabaseAndOnlyCountsBytes) {
    auto ruleset = compile({pattern("probe", "probe", PatternDirection::client_to_server)});
    EXPECT_NE(ruleset->client_to_server, nullptr);
    EXPECT_EQ(ruleset->server_to_client, nullptr);
    Scratch scratch;
    Stream to_client(ruleset, kToClient, scratch);
    EXPECT_EQ(to_client.scan("probe"), Names{});
    EXPECT_EQ(to_client.close(), Names{});
    EXPECT_EQ(to_client.raw().bytes_scanned(), 5u);
}

TEST(InspectScanner, CaselessOnlyWhenAsked) {
    auto ruleset = compile({pattern("any-case", "secret", PatternDirection::both, PatternAction::alert, true),
                            pattern("exact", "Token", PatternDirection::both, PatternAction::alert, false)});
    Scratch scratch;
    Stream upper(ruleset, kToServer, scratch);
    EXPECT_EQ(upper.scan("SeCrEt TOKEN"), Names{"any-case"});
    Stream exact(ruleset, kToServer, scratch);
    EXPECT_EQ(exact.scan("secret Token"), (Names{"any-case", "exact"}));
}

TEST(InspectScanner, CaretAnchorsAtTheStartOfTheStreamOnly) {
    auto ruleset = compile({pattern("starts-get", "^GET ")});
    Scratch scratch;
    Stream at_start(ruleset, kToServer, scratch);
    EXPECT_EQ(at_start.scan("GET / HTTP/1.1"), Names{"starts-get"});

    Stream split(ruleset, kToServer, scratch);
    EXPECT_EQ(split.scan("GE"), Names{});
    EXPECT_EQ(split.scan("T /"), Names{"starts-get"});

    Stream not_first(ruleset, kToServer, scratch);
    EXPECT_EQ(not_first.scan("xGET /"), Names{});

    // Neither the start of a later scan() call nor the start of a line is the start of the stream.
    Stream later(ruleset, kToServer, scratch);
    EXPECT_EQ(later.scan("HEAD / HTTP/1.1\r\n\r\n"), Names{});
    EXPECT_EQ(later.scan("GET / HTTP/1.1"), Names{});
}

TEST(InspectScanner, DollarMatchesOnlyAtCloseWhenTheStreamEnds) {
    auto ruleset = compile({pattern("ends-bye", "bye$")});
    Scratch scratch;
    Stream ends(ruleset, kToServer, scratch);
    EXPECT_EQ(ends.scan("good bye"), Names{});
    EXPECT_EQ(ends.close(), Names{"ends-bye"});

    Stream goes_on(ruleset, kToServer, scratch);
    EXPECT_EQ(goes_on.scan("bye"), Names{});
    EXPECT_EQ(goes_on.scan(" and more"), Names{});
    EXPECT_EQ(goes_on.close(), Names{});

    // PCRE's '$' also matches before a final newline.
    Stream newline(ruleset, kToServer, scratch);
    EXPECT_EQ(newline.scan("bye\n"), Names{});
    EXPECT_EQ(newline.close(), Names{"ends-bye"});
}

TEST(InspectScanner, HexEscapeMatchesItsByte) {
    auto ruleset = compile({pattern("hex", R"(\x41\x00\xffZ)")});
    Scratch scratch;
    Stream stream(ruleset, kToServer, scratch);
    EXPECT_EQ(stream.scan(std::string_view("xxA\0\xffZ", 6)), Names{"hex"});
}

TEST(InspectScanner, EscapedNewlineMatchesAcrossLinesButDotDoesNot) {
    auto ruleset = compile({pattern("literal-newline", R"(foo\nbar)"), pattern("dot", "foo.bar")});
    Scratch scratch;
    Stream lines(ruleset, kToServer, scratch);
    EXPECT_EQ(lines.scan("foo\nbar"), Names{"literal-newline"});
    Stream same_line(ruleset, kToServer, scratch);
    EXPECT_EQ(same_line.scan("foo-bar"), Names{"dot"});
}

TEST(InspectScanner, APatternReportsOncePerStream) {
    auto ruleset = compile({pattern("attack", "attack")});
    Scratch scratch;
    Stream stream(ruleset, kToServer, scratch);
    EXPECT_EQ(stream.scan("attack attack"), Names{"attack"});
    EXPECT_EQ(stream.scan("attack"), Names{});
    EXPECT_EQ(stream.close(), Names{});
    Stream next(ruleset, kToServer, scratch);
    EXPECT_EQ(next.scan("attack"), Names{"attack"});
}

TEST(InspectScanner, AnOpenStreamKeepsItsGenerationAfterASwap) {
    auto generation1 = compile({pattern("old-rule", "old")});
    std::weak_ptr<const HsDatabase> database1 = generation1->client_to_server;
    Scratch scratch;
    auto old_stream = std::make_unique<Stream>(generation1, kToServer, scratch);
    EXPECT_EQ(old_stream->scan("ol"), Names{});

    // A reload: generation 2 replaces generation 1 (whose last owner outside
    // the stream lets go), and the worker's scratch is grown for it.
    auto generation2 = compile({pattern("new-rule", "new"), pattern("other", "other")});
    generation1.reset();
    ASSERT_TRUE(scratch.reserve(*generation2->client_to_server).ok());
    EXPECT_FALSE(database1.expired()) << "the open stream holds its database";

    Stream new_stream(generation2, kToServer, scratch);
    EXPECT_EQ(old_stream->scan("d new other"), Names{"old-rule"});
    EXPECT_EQ(new_stream.scan("old new other"), (Names{"new-rule", "other"}));
    EXPECT_EQ(old_stream->close(), Names{});
    old_stream.reset();
    EXPECT_TRUE(database1.expired()) << "generation 1 is freed with its last stream";
}

TEST(InspectScanner, DatagramIsAStreamOfItsOwn) {
    auto ruleset = compile({pattern("whole", "^PING$"), pattern("word", "PING")});
    Scratch scratch;
    auto scan = [&](std::string_view datagram) {
        auto matches = scan_datagram(*ruleset->client_to_server, bytes(datagram), scratch);
        EXPECT_TRUE(matches.ok()) << (matches.ok() ? "" : matches.error().message);
        return matches.ok() ? names(*ruleset, *matches) : Names{"<error>"};
    };
    EXPECT_EQ(scan("PING"), (Names{"whole", "word"}));
    EXPECT_EQ(scan("PING"), (Names{"whole", "word"})) << "each datagram matches anew";
    EXPECT_EQ(scan("PING PING"), Names{"word"});
    EXPECT_EQ(scan("xPING"), Names{"word"});
}

TEST(InspectScanner, StrongestActionWins) {
    auto ruleset = compile({pattern("a", "a", PatternDirection::both, PatternAction::alert),
                            pattern("d", "d", PatternDirection::both, PatternAction::drop),
                            pattern("r", "r", PatternDirection::both, PatternAction::reject)});
    std::vector<uint32_t> none, alert{0}, alert_drop{0, 1}, all{2, 0, 1};
    EXPECT_EQ(strongest_action(*ruleset, none), std::nullopt);
    EXPECT_EQ(strongest_action(*ruleset, alert), Action::alert);
    EXPECT_EQ(strongest_action(*ruleset, alert_drop), Action::drop);
    EXPECT_EQ(strongest_action(*ruleset, all), Action::reject);
}

TEST(InspectScanner, AClosedStreamRefusesMoreBytes) {
    auto ruleset = compile({pattern("x", "x")});
    Scratch scratch;
    auto stream = DirectionStream::open(ruleset, kToServer, scratch);
    ASSERT_TRUE(stream.ok());
    ASSERT_TRUE(stream->close(scratch).ok());
    EXPECT_FALSE(stream->is_open());
    auto more = stream->scan(bytes("x"), scratch);
    ASSERT_FALSE(more.ok());
    EXPECT_EQ(more.error().message, "scan of a closed inspection stream");
}
