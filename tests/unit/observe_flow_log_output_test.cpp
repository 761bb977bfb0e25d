// The flow-log outputs (userspace/observe/flow_log_output.*) on real files
// and sockets in a temporary directory: what lands in the file and its
// rotations, line for line; the exact datagram a syslog daemon (a unix
// socket bound here) or server (UDP on 127.0.0.1) receives; the errors a
// person sees when the destination is not there; the RFC 5424 line itself.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "observe/flow_log_output.h"

using namespace sluice;
using namespace sluice::observe;
namespace fs = std::filesystem;

namespace {

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// `{"n":07}`: eight characters, nine with the '\n', so sizes are easy to count.
std::string record(int n) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "{\"n\":%02d}", n);
    return buf;
}

std::string records(int from, int to) {  // lines from..to inclusive, as the file holds them
    std::string out;
    for (int n = from; n <= to; ++n) out += record(n) + "\n";
    return out;
}

// Runs f with the process's file size limit at `bytes` (SIGXFSZ ignored, so
// a write past it fails with EFBIG, as on a full disk) and returns what f did.
template <class F>
auto with_file_size_limit(rlim_t bytes, F f) {
    struct sigaction ignore = {};
    struct sigaction old = {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ignore, &old);
    rlimit saved{};
    getrlimit(RLIMIT_FSIZE, &saved);
    rlimit limited = saved;
    limited.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limited);
    auto result = f();
    setrlimit(RLIMIT_FSIZE, &saved);
    sigaction(SIGXFSZ, &old, nullptr);
    return result;
}

std::optional<std::string> receive(int fd, int timeout_ms = 2000) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) != 1) return std::nullopt;
    char buf[65536];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<size_t>(n));
}

// An RFC 5424 message taken apart: "<PRI>VERSION TS HOST APP PROCID MSGID SD MSG".
struct Syslog5424 {
    int pri = -1;
    int version = -1;
    std::vector<std::string> fields;  // TS HOST APP PROCID MSGID SD
    std::string msg;
};

std::optional<Syslog5424> parse_5424(const std::string& d) {
    Syslog5424 m;
    if (d.empty() || d[0] != '<') return std::nullopt;
    const auto gt = d.find('>');
    if (gt == std::string::npos || gt < 2 || gt > 4) return std::nullopt;
    m.pri = std::stoi(d.substr(1, gt - 1));
    auto pos = d.find(' ', gt);
    if (pos == std::string::npos) return std::nullopt;
    m.version = std::stoi(d.substr(gt + 1, pos - gt - 1));
    for (int i = 0; i < 6; ++i) {
        const auto next = d.find(' ', pos + 1);
        if (next == std::string::npos) return std::nullopt;
        m.fields.push_back(d.substr(pos + 1, next - pos - 1));
        pos = next;
    }
    m.msg = d.substr(pos + 1);
    return m;
}

// "2026-12-05T22:49:34.123456Z": digits where digits go, the rest literal.
bool is_utc_micro_timestamp(const std::string& s) {
    const std::string shape = "dddd-dd-ddTdd:dd:dd.ddddddZ";
    if (s.size() != shape.size()) return false;
    for (size_t i = 0; i < s.size(); ++i)
        if (shape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != shape[i]) return false;
    return true;
}

class FlowLogOutputTest : public ::testing::Test {
protected:
    void SetUp() override {
        char dir[] = "/tmp/sluice-flowlog-XXXXXX";  // short: unix socket paths are 107 characters at most
        ASSERT_NE(mkdtemp(dir), nullptr);
        dir_ = dir;
    }
    void TearDown() override {
        for (int fd : fds_) close(fd);
        fs::remove_all(dir_);
    }

    std::string path(const std::string& name) const { return dir_ + "/" + name; }

    FlowLogDestination file(const std::string& name, uint64_t max_bytes = 100ull << 20, unsigned keep = 5) const {
        FlowLogDestination d;
        d.kind = FlowLogDestination::Kind::file;
        d.path = path(name);
        d.max_bytes = max_bytes;
        d.keep = keep;
        return d;
    }

    FlowLogDestination syslog_at(const std::string& socket_path) const {
        FlowLogDestination d;
        d.kind = FlowLogDestination::Kind::syslog;
        d.syslog_socket = socket_path;
        d.hostname = "fw1";
        return d;
    }

    int keep_fd(int fd) {
        fds_.push_back(fd);
        return fd;
    }

    // A syslog daemon's socket: a unix datagram socket bound at `p`.
    int bind_unix(const std::string& p) {
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        EXPECT_GE(fd, 0);
        sockaddr_un sun{};
        sun.sun_family = AF_UNIX;
        std::strncpy(sun.sun_path, p.c_str(), sizeof(sun.sun_path) - 1);
        EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sun), sizeof(sun)), 0) << p << ": " << std::strerror(errno);
        return keep_fd(fd);
    }

    void write_records(FlowLogOutput& out, int from, int to) {
        for (int n = from; n <= to; ++n) {
            Status st = out.write(record(n), "flow-open", FlowLogSeverity::info);
            ASSERT_TRUE(st) << n << ": " << st.error().message;
        }
    }

    std::string dir_;
    std::vector<int> fds_;
};

// ---- file ----

TEST_F(FlowLogOutputTest, FileLinesAreAppendedAndReadBackExactly) {
    { std::ofstream(path("flows.jsonl")) << "{\"earlier\":true}\n"; }
    auto out = FlowLogOutput::open(file("flows.jsonl"));
    ASSERT_TRUE(out) << out.error().message;
    const std::string a = R"({"event":"open","src":"198.18.0.1","sport":40000,"note":"ünïcode"})";
    const std::string b = R"({"event":"close","bytes":12345})";
    ASSERT_TRUE((*out)->write(a, "flow-open", FlowLogSeverity::info));
    ASSERT_TRUE((*out)->write(b, "flow-close", FlowLogSeverity::info));
    EXPECT_EQ(read_all(path("flows.jsonl")), "{\"earlier\":true}\n" + a + "\n" + b + "\n");
    EXPECT_EQ((*out)->counters().lines, 2u);
    EXPECT_EQ((*out)->counters().bytes, a.size() + b.size() + 2);
    EXPECT_EQ((*out)->counters().write_errors, 0u);
    EXPECT_EQ((*out)->counters().rotations, 0u);
    EXPECT_EQ((*out)->describe(), "file " + path("flows.jsonl") + " (rotate at 100 MiB, keep 5)");
}

TEST_F(FlowLogOutputTest, FileIsCreated0640LessTheUmask) {
    const mode_t mask = umask(022);
    auto out = FlowLogOutput::open(file("flows.jsonl"));
    umask(mask);
    ASSERT_TRUE(out) << out.error().message;
    struct stat st {};
    ASSERT_EQ(stat(path("flows.jsonl").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
}

// 9 bytes a line, at most 30 a file: three lines each. Ten lines with keep 2
// are [0..2] (dropped), [3..5] in .2, [6..8] in .1, [9] in the file.
TEST_F(FlowLogOutputTest, FileRotatesBeforeALineWouldPassTheLimit) {
    auto out = FlowLogOutput::open(file("flows.jsonl", 30, 2));
    ASSERT_TRUE(out) << out.error().message;
    write_records(**out, 0, 9);
    EXPECT_EQ(read_all(path("flows.jsonl")), records(9, 9));
    EXPECT_EQ(read_all(path("flows.jsonl.1")), records(6, 8));
    EXPECT_EQ(read_all(path("flows.jsonl.2")), records(3, 5));
    EXPECT_FALSE(fs::exists(path("flows.jsonl.3")));
    EXPECT_EQ((*out)->counters().rotations, 3u);
    EXPECT_EQ((*out)->counters().lines, 10u);
    EXPECT_EQ((*out)->counters().bytes, 90u);
    EXPECT_EQ((*out)->describe(), "file " + path("flows.jsonl") + " (rotate at 30 bytes, keep 2)");
}

// A line that brings the file exactly to max_bytes is not past it.
TEST_F(FlowLogOutputTest, FileFilledExactlyToTheLimitRotatesOnlyOnTheNextLine) {
    auto out = FlowLogOutput::open(file("flows.jsonl", 27, 3));
    ASSERT_TRUE(out) << out.error().message;
    write_records(**out, 0, 2);
    EXPECT_EQ((*out)->counters().rotations, 0u);
    EXPECT_FALSE(fs::exists(path("flows.jsonl.1")));
    write_records(**out, 3, 3);
    EXPECT_EQ((*out)->counters().rotations, 1u);
    EXPECT_EQ(read_all(path("flows.jsonl.1")), records(0, 2));
    EXPECT_EQ(read_all(path("flows.jsonl")), records(3, 3));
}

// Rotation also counts what was in the file before sluice opened it.
TEST_F(FlowLogOutputTest, FileRotationCountsWhatWasThereBefore) {
    { std::ofstream(path("flows.jsonl")) << records(0, 2); }
    auto out = FlowLogOutput::open(file("flows.jsonl", 30, 5));
    ASSERT_TRUE(out) << out.error().message;
    write_records(**out, 3, 3);
    EXPECT_EQ(read_all(path("flows.jsonl.1")), records(0, 2));
    EXPECT_EQ(read_all(path("flows.jsonl")), records(3, 3));
}

// A line longer than max_bytes goes in whole, alone; the next starts a new file.
TEST_F(FlowLogOutputTest, FileLineLongerThanTheLimitIsWrittenWhole) {
    auto out = FlowLogOutput::open(file("flows.jsonl", 10, 2));
    ASSERT_TRUE(out) << out.error().message;
    const std::string big = "{\"big\":\"" + std::string(50, 'x') + "\"}";
    ASSERT_TRUE((*out)->write(big, "flow-open", FlowLogSeverity::info));
    EXPECT_EQ(read_all(path("flows.jsonl")), big + "\n");
    write_records(**out, 0, 0);
    EXPECT_EQ(read_all(path("flows.jsonl.1")), big + "\n");
    EXPECT_EQ(read_all(path("flows.jsonl")), records(0, 0));
}

// A rotation that cannot be done (here flows.jsonl.1 is a directory, which
// unlink refuses) loses no line: it goes to the full file, and the error
// says what stood in the way.
TEST_F(FlowLogOutputTest, FileRotationThatFailsStillWritesTheLine) {
    auto out = FlowLogOutput::open(file("flows.jsonl", 30, 1));
    ASSERT_TRUE(out) << out.error().message;
    write_records(**out, 0, 2);
    ASSERT_EQ(mkdir(path("flows.jsonl.1").c_str(), 0755), 0);
    Status st = (*out)->write(record(3), "flow-open", FlowLogSeverity::info);
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find("cannot remove " + path("flows.jsonl.1")), std::string::npos)
        << st.error().message;
    EXPECT_EQ(read_all(path("flows.jsonl")), records(0, 3));
    EXPECT_EQ((*out)->counters().lines, 4u);
    EXPECT_EQ((*out)->counters().rotation_errors, 1u);
    EXPECT_EQ((*out)->counters().write_errors, 0u);
    // Once the obstacle is gone, the next line rotates as it should.
    ASSERT_EQ(rmdir(path("flows.jsonl.1").c_str()), 0);
    write_records(**out, 4, 4);
    EXPECT_EQ(read_all(path("flows.jsonl.1")), records(0, 3));
    EXPECT_EQ(read_all(path("flows.jsonl")), records(4, 4));
    EXPECT_EQ((*out)->counters().rotations, 1u);
}

// A write cut short (the file size limit here; a full disk alike) leaves a
// torn line: the next record starts on a line of its own, whole.
TEST_F(FlowLogOutputTest, FileTornLineDoesNotSpoilTheNextOne) {
    auto out = FlowLogOutput::open(file("flows.jsonl"));
    ASSERT_TRUE(out) << out.error().message;
    write_records(**out, 0, 0);
    // Record 1 gets 4 of its 9 bytes.
    Status st = with_file_size_limit(13, [&] { return (*out)->write(record(1), "flow-open", FlowLogSeverity::info); });
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().sys_errno, EFBIG);
    EXPECT_NE(st.error().message.find(path("flows.jsonl")), std::string::npos) << st.error().message;
    write_records(**out, 2, 2);
    EXPECT_EQ(read_all(path("flows.jsonl")), record(0) + "\n" + record(1).substr(0, 4) + "\n" + record(2) + "\n");
    EXPECT_EQ((*out)->counters().lines, 2u);
    EXPECT_EQ((*out)->counters().write_errors, 1u);
    EXPECT_EQ((*out)->counters().bytes, 9u + 4u + 10u);
}

// ---- batches (what the daemon writes after each drain of the ring) ----

std::vector<FlowLogLine> batch_of(int from, int to) {
    std::vector<FlowLogLine> lines;
    for (int n = from; n <= to; ++n) lines.push_back({record(n), "flow-open", FlowLogSeverity::info, false});
    return lines;
}

// A batch ends as the same lines written one by one would: the same files,
// rotations at the same lines, the same counters; every line delivered.
TEST_F(FlowLogOutputTest, FileBatchRotatesAndCountsAsLineByLine) {
    auto one = FlowLogOutput::open(file("one.jsonl", 30, 2));
    auto all = FlowLogOutput::open(file("all.jsonl", 30, 2));
    ASSERT_TRUE(one && all);
    write_records(**one, 0, 9);
    auto lines = batch_of(0, 9);
    Status st = (*all)->write_batch(lines);
    ASSERT_TRUE(st) << st.error().message;
    for (const auto& l : lines) EXPECT_TRUE(l.delivered) << l.json;
    for (const std::string suffix : {"", ".1", ".2"})
        EXPECT_EQ(read_all(path("all.jsonl" + suffix)), read_all(path("one.jsonl" + suffix))) << suffix;
    EXPECT_EQ(read_all(path("all.jsonl.1")), records(6, 8));
    EXPECT_FALSE(fs::exists(path("all.jsonl.3")));
    EXPECT_EQ((*all)->counters().rotations, (*one)->counters().rotations);
    EXPECT_EQ((*all)->counters().lines, 10u);
    EXPECT_EQ((*all)->counters().bytes, 90u);
}

TEST_F(FlowLogOutputTest, FileBatchRefusesALineWithABreakAndWritesTheRest) {
    auto out = FlowLogOutput::open(file("flows.jsonl"));
    ASSERT_TRUE(out) << out.error().message;
    auto lines = batch_of(0, 2);
    lines[1].json = "{\"a\":1}\n{\"b\":2}";
    Status st = (*out)->write_batch(lines);
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find("line break"), std::string::npos) << st.error().message;
    EXPECT_TRUE(lines[0].delivered);
    EXPECT_FALSE(lines[1].delivered);
    EXPECT_TRUE(lines[2].delivered);
    EXPECT_EQ(read_all(path("flows.jsonl")), record(0) + "\n" + record(2) + "\n");
    EXPECT_EQ((*out)->counters().lines, 2u);
    EXPECT_EQ((*out)->counters().write_errors, 1u);
}

// The path is checked once per batch: a file removed before it is created again.
TEST_F(FlowLogOutputTest, FileBatchAfterTheFileWasRemovedStartsANewOne) {
    auto out = FlowLogOutput::open(file("flows.jsonl"));
    ASSERT_TRUE(out) << out.error().message;
    write_records(**out, 0, 1);
    ASSERT_EQ(unlink(path("flows.jsonl").c_str()), 0);
    auto lines = batch_of(2, 4);
    ASSERT_TRUE((*out)->write_batch(lines));
    EXPECT_EQ(read_all(path("flows.jsonl")), records(2, 4));
}

// A short write: the lines that went whole are delivered, the torn one and
// those after it are write errors, and the next batch starts on a line of its own.
TEST_F(FlowLogOutputTest, FileBatchTornDeliversOnlyWholeLines) {
    auto out = FlowLogOutput::open(file("flows.jsonl"));
    ASSERT_TRUE(out) << out.error().message;
    auto lines = batch_of(0, 3);
    // Records 0 and 1 (18 bytes), then 4 bytes of record 2.
    Status st = with_file_size_limit(22, [&] { return (*out)->write_batch(lines); });
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().sys_errno, EFBIG);
    EXPECT_TRUE(lines[0].delivered);
    EXPECT_TRUE(lines[1].delivered);
    EXPECT_FALSE(lines[2].delivered);
    EXPECT_FALSE(lines[3].delivered);
    auto next = batch_of(4, 4);
    ASSERT_TRUE((*out)->write_batch(next));
    EXPECT_EQ(read_all(path("flows.jsonl")), records(0, 1) + record(2).substr(0, 4) + "\n" + records(4, 4));
    EXPECT_EQ((*out)->counters().lines, 3u);
    EXPECT_EQ((*out)->counters().write_errors, 2u);
    EXPECT_EQ((*out)->counters().bytes, 18u + 4u + 10u);
}

TEST_F(FlowLogOutputTest, FileKeepZeroTruncatesInsteadOfRotating) {
    auto out = FlowLogOutput::open(file("flows.jsonl", 30, 0));
    ASSERT_TRUE(out) << out.error().message;
    write_records(**out, 0, 9);
    EXPECT_EQ(read_all(path("flows.jsonl")), records(9, 9));
    EXPECT_FALSE(fs::exists(path("flows.jsonl.1")));
    EXPECT_EQ((*out)->counters().rotations, 3u);
    EXPECT_EQ((*out)->counters().lines, 10u);
    EXPECT_EQ((*out)->describe(), "file " + path("flows.jsonl") + " (truncate at 30 bytes)");
}

TEST_F(FlowLogOutputTest, FileMaxBytesZeroNeverRotates) {
    auto out = FlowLogOutput::open(file("flows.jsonl", 0, 2));
    ASSERT_TRUE(out) << out.error().message;
    write_records(**out, 0, 19);
    EXPECT_EQ(read_all(path("flows.jsonl")), records(0, 19));
    EXPECT_EQ((*out)->counters().rotations, 0u);
    EXPECT_EQ((*out)->describe(), "file " + path("flows.jsonl") + " (no rotation)");
}

TEST_F(FlowLogOutputTest, FileRemovedUnderneathIsCreatedAgain) {
    auto out = FlowLogOutput::open(file("flows.jsonl"));
    ASSERT_TRUE(out) << out.error().message;
    write_records(**out, 0, 1);
    ASSERT_EQ(unlink(path("flows.jsonl").c_str()), 0);
    write_records(**out, 2, 3);
    EXPECT_EQ(read_all(path("flows.jsonl")), records(2, 3));
    EXPECT_EQ((*out)->counters().write_errors, 0u);
}

// What logrotate does (without copytruncate): the file is moved, the next line
// starts a new one and the moved file keeps what it had.
TEST_F(FlowLogOutputTest, FileMovedAwayIsStartedAnew) {
    auto out = FlowLogOutput::open(file("flows.jsonl"));
    ASSERT_TRUE(out) << out.error().message;
    write_records(**out, 0, 1);
    ASSERT_EQ(rename(path("flows.jsonl").c_str(), path("flows.jsonl.old").c_str()), 0);
    write_records(**out, 2, 2);
    EXPECT_EQ(read_all(path("flows.jsonl.old")), records(0, 1));
    EXPECT_EQ(read_all(path("flows.jsonl")), records(2, 2));
}

// The directory goes away: writes fail (counted), and work again once it is back.
TEST_F(FlowLogOutputTest, FileWhoseDirectoryWentAwayFailsThenRecovers) {
    ASSERT_EQ(mkdir(path("logs").c_str(), 0755), 0);
    auto out = FlowLogOutput::open(file("logs/flows.jsonl"));
    ASSERT_TRUE(out) << out.error().message;
    write_records(**out, 0, 0);
    fs::remove_all(path("logs"));
    Status st = (*out)->write(record(1), "flow-open", FlowLogSeverity::info);
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message.find(path("logs")), std::string::npos) << st.error().message;
    EXPECT_EQ((*out)->counters().write_errors, 1u);
    ASSERT_EQ(mkdir(path("logs").c_str(), 0755), 0);
    write_records(**out, 2, 2);
    EXPECT_EQ(read_all(path("logs/flows.jsonl")), records(2, 2));
    EXPECT_EQ((*out)->counters().lines, 2u);
}

TEST_F(FlowLogOutputTest, FileInAMissingDirectoryIsAnErrorNamingIt) {
    auto out = FlowLogOutput::open(file("nope/flows.jsonl"));
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, ErrorCode::NotFound);
    EXPECT_EQ(out.error().message, "flow-log file " + path("nope/flows.jsonl") + ": directory " + path("nope") +
                                       " does not exist (sluice does not create it)");
    EXPECT_FALSE(fs::exists(path("nope")));
}

TEST_F(FlowLogOutputTest, FileWithoutAPathIsAConfigError) {
    FlowLogDestination d;
    d.kind = FlowLogDestination::Kind::file;
    auto out = FlowLogOutput::open(d);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, ErrorCode::InvalidConfig);
}

TEST_F(FlowLogOutputTest, FileThatIsADirectoryIsAnErrorNamingIt) {
    ASSERT_EQ(mkdir(path("flows.jsonl").c_str(), 0755), 0);
    auto out = FlowLogOutput::open(file("flows.jsonl"));
    ASSERT_FALSE(out);
    EXPECT_NE(out.error().message.find(path("flows.jsonl")), std::string::npos) << out.error().message;
    EXPECT_EQ(out.error().sys_errno, EISDIR);
}

// A line break would make two records of one: refused, counted, and the
// output goes on.
TEST_F(FlowLogOutputTest, LineWithALineBreakIsRefused) {
    auto out = FlowLogOutput::open(file("flows.jsonl"));
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_FALSE((*out)->write("{\"a\":1}\n{\"b\":2}", "flow-open", FlowLogSeverity::info));
    EXPECT_FALSE((*out)->write("{\"a\":1}\n", "flow-open", FlowLogSeverity::info));
    write_records(**out, 0, 0);
    EXPECT_EQ(read_all(path("flows.jsonl")), records(0, 0));
    EXPECT_EQ((*out)->counters().write_errors, 2u);
    EXPECT_EQ((*out)->counters().lines, 1u);
}

// ---- stdout ----

TEST_F(FlowLogOutputTest, StdoutGetsOneLinePerRecord) {
    std::fflush(stdout);
    const int saved = dup(STDOUT_FILENO);
    ASSERT_GE(saved, 0);
    const int f = open(path("stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(f, 0);
    dup2(f, STDOUT_FILENO);
    close(f);
    // Nothing asserted while fd 1 is the file: gtest reports there.
    auto out = FlowLogOutput::open(FlowLogDestination{});
    bool written = false;
    std::string described;
    FlowLogOutputCounters counters;
    if (out) {
        written = (*out)->write(record(1), "flow-open", FlowLogSeverity::info).ok() &&
                  (*out)->write(record(2), "flow-deny", FlowLogSeverity::warning).ok();
        described = (*out)->describe();
        counters = (*out)->counters();
    }
    dup2(saved, STDOUT_FILENO);
    close(saved);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_TRUE(written);
    EXPECT_EQ(read_all(path("stdout")), records(1, 2));
    EXPECT_EQ(described, "stdout");
    EXPECT_EQ(counters.lines, 2u);
    EXPECT_EQ(counters.bytes, 18u);
}

// Under systemd stdout is a stream socket to the journal. A reader that
// went away is an error returned (EPIPE), not a SIGPIPE that ends the daemon.
TEST_F(FlowLogOutputTest, StdoutSocketWhoseReaderWentAwayIsAnError) {
    int pair[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    keep_fd(pair[0]);
    std::fflush(stdout);
    const int saved = dup(STDOUT_FILENO);
    ASSERT_GE(saved, 0);
    dup2(pair[1], STDOUT_FILENO);
    close(pair[1]);
    auto out = FlowLogOutput::open(FlowLogDestination{});
    bool first = false;
    std::optional<Error> second;
    std::string got;
    if (out) {
        first = (*out)->write(record(1), "flow-open", FlowLogSeverity::info).ok();
        char buf[64];
        const ssize_t n = recv(pair[0], buf, sizeof(buf), 0);
        if (n > 0) got.assign(buf, static_cast<size_t>(n));
        close(pair[0]);
        fds_.clear();
        Status st = (*out)->write(record(2), "flow-open", FlowLogSeverity::info);
        if (!st) second = st.error();
    }
    dup2(saved, STDOUT_FILENO);
    close(saved);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_TRUE(first);
    EXPECT_EQ(got, records(1, 1));
    ASSERT_TRUE(second);
    EXPECT_EQ(second->sys_errno, EPIPE);
    EXPECT_EQ((*out)->counters().write_errors, 1u);
}

// ---- syslog over a unix socket ----

TEST_F(FlowLogOutputTest, SyslogUnixSocketGetsTheRfc5424Datagram) {
    const int rx = bind_unix(path("log"));
    auto out = FlowLogOutput::open(syslog_at(path("log")));
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ((*out)->describe(), "syslog " + path("log"));
    const std::string json = R"({"event":"deny","src":"198.18.0.7","dst":"198.18.1.10","dport":22})";
    ASSERT_TRUE((*out)->write(json, "flow-deny", FlowLogSeverity::notice));

    auto d = receive(rx);
    ASSERT_TRUE(d);
    auto m = parse_5424(*d);
    ASSERT_TRUE(m) << *d;
    EXPECT_EQ(m->pri, 16 * 8 + 5);  // local0, notice
    EXPECT_EQ(m->version, 1);
    EXPECT_TRUE(is_utc_micro_timestamp(m->fields[0])) << m->fields[0];
    EXPECT_EQ(m->fields[1], "fw1");
    EXPECT_EQ(m->fields[2], "sluice");
    EXPECT_EQ(m->fields[3], std::to_string(getpid()));
    EXPECT_EQ(m->fields[4], "flow-deny");
    EXPECT_EQ(m->fields[5], "-");
    EXPECT_EQ(m->msg, json);  // no trailing newline, nothing added
    EXPECT_EQ((*out)->counters().lines, 1u);
    EXPECT_EQ((*out)->counters().bytes, d->size());
}

TEST_F(FlowLogOutputTest, SyslogFacilityAppNameAndDefaultHostname) {
    const int rx = bind_unix(path("log"));
    FlowLogDestination dest = syslog_at(path("log"));
    dest.hostname.clear();
    dest.facility = 3;  // daemon
    dest.app_name = "sluice fw";
    auto out = FlowLogOutput::open(dest);
    ASSERT_TRUE(out) << out.error().message;
    ASSERT_TRUE((*out)->write("{}", "flow-close", FlowLogSeverity::info));
    auto d = receive(rx);
    ASSERT_TRUE(d);
    auto m = parse_5424(*d);
    ASSERT_TRUE(m) << *d;
    EXPECT_EQ(m->pri, 3 * 8 + 6);
    char host[256] = {};
    ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
    EXPECT_EQ(m->fields[1], host);
    EXPECT_EQ(m->fields[2], "sluice_fw");
    EXPECT_EQ(m->fields[4], "flow-close");
    EXPECT_EQ(m->msg, "{}");
}

TEST_F(FlowLogOutputTest, SyslogSocketThatIsAbsentIsAnErrorNamingIt) {
    auto out = FlowLogOutput::open(syslog_at(path("no-such-log")));
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().code, ErrorCode::NotFound);
    EXPECT_NE(out.error().message.find("no syslog socket at " + path("no-such-log") +
                                       ": is a syslog daemon running? or set flow-log.syslog.server"),
              std::string::npos)
        << out.error().message;
}

// A socket file left behind by a syslog daemon that is gone.
TEST_F(FlowLogOutputTest, SyslogSocketNobodyListensOnIsAnErrorNamingIt) {
    const int rx = bind_unix(path("log"));
    close(rx);
    fds_.clear();
    auto out = FlowLogOutput::open(syslog_at(path("log")));
    ASSERT_FALSE(out);
    EXPECT_NE(out.error().message.find("nothing listens on the syslog socket " + path("log")), std::string::npos)
        << out.error().message;
    EXPECT_EQ(out.error().sys_errno, ECONNREFUSED);
}

TEST_F(FlowLogOutputTest, SyslogStreamSocketIsAnErrorSayingSo) {
    const int s = keep_fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un sun{};
    sun.sun_family = AF_UNIX;
    std::strncpy(sun.sun_path, path("log").c_str(), sizeof(sun.sun_path) - 1);
    ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&sun), sizeof(sun)), 0);
    ASSERT_EQ(listen(s, 4), 0);
    auto out = FlowLogOutput::open(syslog_at(path("log")));
    ASSERT_FALSE(out);
    EXPECT_NE(out.error().message.find(path("log") + " is not a datagram socket"), std::string::npos)
        << out.error().message;
}

// The syslog daemon restarts: its socket is a new one at the same path. The
// next event reconnects and is delivered, nothing counted as lost.
TEST_F(FlowLogOutputTest, SyslogReconnectsWhenTheDaemonRestarts) {
    const int first = bind_unix(path("log"));
    auto out = FlowLogOutput::open(syslog_at(path("log")));
    ASSERT_TRUE(out) << out.error().message;
    ASSERT_TRUE((*out)->write(record(1), "flow-open", FlowLogSeverity::info));
    ASSERT_TRUE(receive(first));
    close(first);
    fds_.clear();
    unlink(path("log").c_str());
    const int second = bind_unix(path("log"));
    Status st = (*out)->write(record(2), "flow-open", FlowLogSeverity::info);
    ASSERT_TRUE(st) << st.error().message;
    auto d = receive(second);
    ASSERT_TRUE(d);
    auto m = parse_5424(*d);
    ASSERT_TRUE(m) << *d;
    EXPECT_EQ(m->msg, record(2));
    EXPECT_EQ((*out)->counters().lines, 2u);
    EXPECT_EQ((*out)->counters().write_errors, 0u);
}

// Syslog has no batch of its own: one datagram per line, each delivered.
TEST_F(FlowLogOutputTest, SyslogBatchSendsOneDatagramPerLine) {
    const int rx = bind_unix(path("log"));
    auto out = FlowLogOutput::open(syslog_at(path("log")));
    ASSERT_TRUE(out) << out.error().message;
    auto lines = batch_of(0, 2);
    ASSERT_TRUE((*out)->write_batch(lines));
    for (int n = 0; n <= 2; ++n) {
        EXPECT_TRUE(lines[n].delivered);
        auto d = receive(rx);
        ASSERT_TRUE(d);
        EXPECT_EQ(parse_5424(*d)->msg, record(n));
    }
    EXPECT_EQ((*out)->counters().lines, 3u);
}

// A syslog daemon that does not read: events are dropped and counted, the
// caller is never held, and once the daemon reads again events go through.
TEST_F(FlowLogOutputTest, SyslogFullSocketDropsAndCountsWithoutBlocking) {
    const int rx = bind_unix(path("log"));
    auto out = FlowLogOutput::open(syslog_at(path("log")));
    ASSERT_TRUE(out) << out.error().message;
    constexpr int kEvents = 5000;
    std::string last_error;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kEvents; ++i) {
        Status st = (*out)->write(record(i % 100), "flow-open", FlowLogSeverity::info);
        if (!st) last_error = st.error().message;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    const auto& c = (*out)->counters();
    EXPECT_GT(c.lines, 0u);
    EXPECT_GT(c.write_errors, 0u);
    EXPECT_EQ(c.lines + c.write_errors, static_cast<uint64_t>(kEvents));
    EXPECT_NE(last_error.find("the socket is full"), std::string::npos) << last_error;

    char buf[4096];
    while (recv(rx, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
    }
    Status st = (*out)->write(record(1), "flow-open", FlowLogSeverity::info);
    EXPECT_TRUE(st) << st.error().message;
    auto d = receive(rx);
    ASSERT_TRUE(d);
    EXPECT_EQ(parse_5424(*d)->msg, record(1));
}

// ---- syslog over UDP ----

TEST_F(FlowLogOutputTest, SyslogUdpServerGetsTheDatagram) {
    const int rx = keep_fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(rx, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
    socklen_t len = sizeof(sa);
    ASSERT_EQ(getsockname(rx, reinterpret_cast<sockaddr*>(&sa), &len), 0);
    const std::string server = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));

    FlowLogDestination dest = syslog_at(path("unused"));  // udp_server wins over the socket path
    dest.udp_server = server;
    auto out = FlowLogOutput::open(dest);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ((*out)->describe(), "syslog udp " + server);
    const std::string json = R"({"event":"open","proto":"tcp"})";
    ASSERT_TRUE((*out)->write(json, "flow-open", FlowLogSeverity::info));
    auto d = receive(rx);
    ASSERT_TRUE(d);
    auto m = parse_5424(*d);
    ASSERT_TRUE(m) << *d;
    EXPECT_EQ(m->pri, 134);
    EXPECT_EQ(m->version, 1);
    EXPECT_EQ(m->fields[1], "fw1");
    EXPECT_EQ(m->fields[4], "flow-open");
    EXPECT_EQ(m->msg, json);
}

TEST_F(FlowLogOutputTest, SyslogUdpServerOverIpv6) {
    const int rx = keep_fd(socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_addr = in6addr_loopback;
    if (rx < 0 || bind(rx, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) GTEST_SKIP() << "no ::1 here";
    socklen_t len = sizeof(sa);
    ASSERT_EQ(getsockname(rx, reinterpret_cast<sockaddr*>(&sa), &len), 0);
    FlowLogDestination dest = syslog_at("/dev/log");
    dest.udp_server = "[::1]:" + std::to_string(ntohs(sa.sin6_port));
    auto out = FlowLogOutput::open(dest);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ((*out)->describe(), "syslog udp " + dest.udp_server);
    ASSERT_TRUE((*out)->write("{\"v\":6}", "flow-close", FlowLogSeverity::info));
    auto d = receive(rx);
    ASSERT_TRUE(d);
    EXPECT_EQ(parse_5424(*d)->msg, "{\"v\":6}");
}

// Nobody on the port: loopback answers port unreachable, and the next send
// reports it, as a dropped event with a hint.
TEST_F(FlowLogOutputTest, SyslogUdpServerNotListeningIsReported) {
    int probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(probe, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
    socklen_t len = sizeof(sa);
    ASSERT_EQ(getsockname(probe, reinterpret_cast<sockaddr*>(&sa), &len), 0);
    close(probe);  // the port is free now, nobody on it

    FlowLogDestination dest = syslog_at("/dev/log");
    dest.udp_server = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
    auto out = FlowLogOutput::open(dest);
    ASSERT_TRUE(out) << out.error().message;
    std::optional<Error> refused;
    for (int i = 0; i < 5 && !refused; ++i) {
        Status st = (*out)->write(record(i), "flow-open", FlowLogSeverity::info);
        if (!st) refused = st.error();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->sys_errno, ECONNREFUSED);
    EXPECT_NE(refused->message.find("is a syslog server listening on that port?"), std::string::npos)
        << refused->message;
    EXPECT_GE((*out)->counters().write_errors, 1u);
}

TEST_F(FlowLogOutputTest, SyslogUdpServerThatDoesNotParseIsAConfigError) {
    for (const char* bad :
         {"198.18.0.9", "198.18.0.9:", "198.18.0.9:0", "198.18.0.9:65536", "198.18.0.9:51x", "syslog.example:514",
          "2001:db8::9:514", "[2001:db8::9]", "[2001:db8::9]514", "[198.18.0.9]:514", ":514"}) {
        FlowLogDestination dest = syslog_at("/dev/log");
        dest.udp_server = bad;
        auto out = FlowLogOutput::open(dest);
        ASSERT_FALSE(out) << bad;
        EXPECT_EQ(out.error().code, ErrorCode::InvalidConfig) << bad;
        EXPECT_NE(out.error().message.find(std::string("\"") + bad + "\""), std::string::npos) << out.error().message;
    }
}

TEST_F(FlowLogOutputTest, SyslogFacilityOutOfRangeIsAConfigError) {
    bind_unix(path("log"));
    for (int facility : {-1, 24}) {
        FlowLogDestination dest = syslog_at(path("log"));
        dest.facility = facility;
        auto out = FlowLogOutput::open(dest);
        ASSERT_FALSE(out) << facility;
        EXPECT_EQ(out.error().code, ErrorCode::InvalidConfig);
    }
}

// ---- rfc5424_line ----

std::chrono::system_clock::time_point fixed_time() {
    using namespace std::chrono;
    return sys_days{year{2026} / 12 / 5} + hours{22} + minutes{49} + seconds{34} + microseconds{123456};
}

TEST(Rfc5424Line, FixedTimeGivesTheExactLine) {
    EXPECT_EQ(rfc5424_line(16, FlowLogSeverity::info, fixed_time(), "fw1", "sluice", 4242, "flow-open",
                           R"({"a":1,"s":"x y"})"),
              R"(<134>1 2026-12-05T22:49:34.123456Z fw1 sluice 4242 flow-open - {"a":1,"s":"x y"})");
    EXPECT_EQ(rfc5424_line(0, FlowLogSeverity::warning, fixed_time(), "fw1", "sluice", 1, "flow-deny", "{}"),
              "<4>1 2026-12-05T22:49:34.123456Z fw1 sluice 1 flow-deny - {}");
    EXPECT_EQ(rfc5424_line(23, FlowLogSeverity::notice, fixed_time(), "fw1", "sluice", 1, "flow-close", "{}"),
              "<189>1 2026-12-05T22:49:34.123456Z fw1 sluice 1 flow-close - {}");
}

TEST(Rfc5424Line, MicrosecondsArePaddedAndTheEpochEdgesAreRight) {
    using namespace std::chrono;
    const auto t = sys_days{year{2027} / 1 / 2} + hours{3} + minutes{4} + seconds{5} + microseconds{7};
    EXPECT_EQ(rfc5424_line(16, FlowLogSeverity::info, t, "h", "a", 1, "m", "{}"),
              "<134>1 2027-01-02T03:04:05.000007Z h a 1 m - {}");
    // Before 1970 the second is floored, not truncated towards zero.
    const auto before = system_clock::time_point{} - milliseconds{500};
    EXPECT_EQ(rfc5424_line(16, FlowLogSeverity::info, before, "h", "a", 1, "m", "{}"),
              "<134>1 1969-12-31T23:59:59.500000Z h a 1 m - {}");
}

TEST(Rfc5424Line, EmptyFieldsAreNilValues) {
    EXPECT_EQ(rfc5424_line(16, FlowLogSeverity::info, fixed_time(), "", "", 0, "", "{}"),
              "<134>1 2026-12-05T22:49:34.123456Z - - - - - {}");
}

TEST(Rfc5424Line, HeaderFieldsAreSanitisedAndCut) {
    const std::string long_app = "sluice firewall " + std::string(60, 'a');
    const std::string line = rfc5424_line(16, FlowLogSeverity::info, fixed_time(), std::string(300, 'h'), long_app, 7,
                                          "flow open\x01" + std::string(40, 'm'), "{\"k\":\"v w\"}");
    const std::string app = "sluice_firewall_" + std::string(32, 'a');  // 48 characters
    const std::string msgid = "flow_open_" + std::string(22, 'm');      // 32 characters
    EXPECT_EQ(line, "<134>1 2026-12-05T22:49:34.123456Z " + std::string(255, 'h') + " " + app + " 7 " + msgid +
                        " - {\"k\":\"v w\"}");
    // Non-ASCII bytes are not PRINTUSASCII either.
    EXPECT_EQ(rfc5424_line(16, FlowLogSeverity::info, fixed_time(), "fw\xc3\xa9", "sluice", 7, "m", "{}"),
              "<134>1 2026-12-05T22:49:34.123456Z fw__ sluice 7 m - {}");
}

}  // namespace
