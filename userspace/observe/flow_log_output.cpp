#include "observe/flow_log_output.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

namespace sluice::observe {
namespace {

// Closes its descriptor when it goes.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() { reset(); }
    Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset();
            fd_ = std::exchange(other.fd_, -1);
        }
        return *this;
    }
    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    void reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_ = -1;
};

// A record is one line: a line break inside would split it in two for every
// reader of a JSON-lines file (and for most syslog daemons).
bool has_line_break(std::string_view line) {
    // Two memchr scans: find_first_of would call memchr once per character.
    return line.find('\n') != std::string_view::npos || line.find('\r') != std::string_view::npos;
}

Error line_break_error(const std::string& where) {
    return make_error(where + ": a flow-log record with a line break in it was dropped (a record must be one line)");
}

// "100 MiB" for the sizes people configure, bytes otherwise.
std::string size_text(uint64_t bytes) {
    if (bytes != 0 && bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
    if (bytes != 0 && bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    if (bytes != 0 && bytes % (1ull << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

// An RFC 5424 header field: PRINTUSASCII (33..126) only, at most `max`
// characters, "-" (NILVALUE) when empty. Other characters become '_' rather
// than vanish, so "my app" still reads as "my_app".
std::string header_field(std::string_view value, size_t max) {
    std::string out;
    out.reserve(std::min(value.size(), max));
    for (char c : value) {
        if (out.size() == max) break;
        const auto u = static_cast<unsigned char>(c);
        out += (u >= 33 && u <= 126) ? c : '_';
    }
    return out.empty() ? "-" : out;
}

// Writes whole lines to a descriptor, one write(2) per call: whole lines in
// one call to a file opened O_APPEND are never interleaved with another
// writer's nor split across a rotation. A short write (a full disk, a signal)
// is continued; should that fail too, the next call starts with a '\n', so
// that the torn part is a (broken) line of its own and the lines after it are
// whole.
class LineWriter {
public:
    // Writes `line` and its '\n' to `fd`; `written` says how many bytes went.
    // A socket is sent to with MSG_NOSIGNAL: a reader that went away is an
    // error (EPIPE), not a SIGPIPE that ends the daemon.
    Status write(int fd, bool is_socket, std::string_view line, const std::string& where, uint64_t& written) {
        std::string& b = start();
        b.append(line);
        b += '\n';
        return send(fd, is_socket, where, written);
    }

    // A block of lines: fill start()'s buffer with lines ending in '\n',
    // then send() it. Of the bytes send() reports written, the first lead()
    // are the '\n' that ends a torn line before them.
    std::string& start() {
        buf_.clear();
        lead_ = torn_ ? 1 : 0;
        if (torn_) buf_ += '\n';
        return buf_;
    }
    size_t lead() const { return lead_; }

    Status send(int fd, bool is_socket, const std::string& where, uint64_t& written) {
        size_t done = 0;
        while (done < buf_.size()) {
            const char* p = buf_.data() + done;
            const size_t left = buf_.size() - done;
            const ssize_t n = is_socket ? ::send(fd, p, left, MSG_NOSIGNAL) : ::write(fd, p, left);
            if (n > 0) {
                done += static_cast<size_t>(n);
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            const int err = n < 0 ? errno : EIO;  // write(2) of a non-empty buffer returning 0: count it as EIO
            if (done > 0) torn_ = buf_[done - 1] != '\n';
            written = done;
            return errno_error(where + ": flow-log record not written", err);
        }
        torn_ = false;
        written = done;
        return {};
    }

private:
    std::string buf_;  // the lines and their '\n', kept to spare an allocation per call
    size_t lead_ = 0;
    bool torn_ = false;
};

// ---- stdout ----

class StdoutOutput final : public FlowLogOutput {
public:
    explicit StdoutOutput(bool is_socket) : is_socket_(is_socket) {}

    // Blocking, as the daemon's own log on stderr is: under systemd stdout is
    // the journal's stream socket, and a line given up half-way would join
    // the next one. stdout is for foreground runs and containers, where the
    // reader keeps up; a file or syslog never holds the main loop.
    Status write(std::string_view line, std::string_view, FlowLogSeverity) override {
        if (has_line_break(line)) {
            ++counters_.write_errors;
            return line_break_error("stdout");
        }
        uint64_t written = 0;
        Status st = writer_.write(STDOUT_FILENO, is_socket_, line, "stdout", written);
        counters_.bytes += written;
        if (!st) {
            ++counters_.write_errors;
            return st;
        }
        ++counters_.lines;
        return {};
    }

    std::string describe() const override { return "stdout"; }

private:
    bool is_socket_;
    LineWriter writer_;
};

Result<std::unique_ptr<FlowLogOutput>> open_stdout() {
    struct stat st {};
    if (::fstat(STDOUT_FILENO, &st) != 0)
        return errno_error("flow-log to stdout: stdout is not open (start sluice with a stdout, or log to a file)",
                           errno);
    return std::unique_ptr<FlowLogOutput>(new StdoutOutput(S_ISSOCK(st.st_mode)));
}

// ---- file ----

std::string parent_dir(const std::string& path) {
    std::string dir = std::filesystem::path(path).parent_path().string();
    return dir.empty() ? "." : dir;
}

Error file_open_error(const std::string& path, int err) {
    if (err == ENOENT) {
        const std::string dir = parent_dir(path);
        struct stat st {};
        if (::stat(dir.c_str(), &st) != 0) {
            Error e = make_error(ErrorCode::NotFound, "flow-log file " + path + ": directory " + dir +
                                                          " does not exist (sluice does not create it)");
            e.sys_errno = ENOENT;
            return e;
        }
    }
    return errno_error("flow-log file " + path + ": cannot open it for appending", err);
}

class FileOutput final : public FlowLogOutput {
public:
    explicit FileOutput(const FlowLogDestination& d)
        : path_(d.path), max_bytes_(d.max_bytes), keep_(d.keep), where_("flow-log file " + d.path) {}

    // Opens `path` for appending (creating it), in place of the file open so
    // far, which is kept should this fail. Returns the file's size.
    Result<uint64_t> open_path() {
        Fd fd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640));
        if (!fd) return file_open_error(path_, errno);
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0) return errno_error(where_ + ": fstat", errno);
        fd_ = std::move(fd);
        dev_ = st.st_dev;
        ino_ = st.st_ino;
        // Only a regular file rotates: renaming /dev/null or a FIFO away
        // would be a surprise (and st_size means nothing for them).
        regular_ = S_ISREG(st.st_mode);
        return static_cast<uint64_t>(st.st_size);
    }

    Status write(std::string_view line, std::string_view, FlowLogSeverity) override {
        if (has_line_break(line)) {
            ++counters_.write_errors;
            return line_break_error(where_);
        }
        auto size = current_size();
        if (!size) {
            ++counters_.write_errors;
            return size.error();
        }
        // A line alone in a file may be longer than max_bytes: it goes in
        // whole (never split), and the next line starts the next file.
        Status rotated;
        if (regular_ && max_bytes_ > 0 && *size > 0 && *size + line.size() + 1 > max_bytes_) {
            rotated = rotate();
            if (rotated)
                ++counters_.rotations;
            else
                ++counters_.rotation_errors;
        }
        uint64_t written = 0;
        Status st = writer_.write(fd_.get(), false, line, where_, written);
        counters_.bytes += written;
        if (!st) {
            ++counters_.write_errors;
            return st;
        }
        ++counters_.lines;
        return rotated;
    }

    Status write_batch(std::span<FlowLogLine> lines) override {
        Status first;
        auto keep_first = [&first](Status s) {
            if (!s && first) first = std::move(s);
        };
        auto size = current_size();
        if (!size) {
            counters_.write_errors += lines.size();
            return size.error();
        }
        uint64_t at = *size;   // the file's size before the block
        std::string* block = &writer_.start();
        std::vector<FlowLogLine*> pending;   // the lines in *block, in order
        auto flush = [&]() {
            if (pending.empty()) return;
            uint64_t written = 0;
            Status st = writer_.send(fd_.get(), false, where_, written);
            counters_.bytes += written;
            at += written;
            // What went is a prefix of the block: the lines that end in it.
            uint64_t end = writer_.lead();
            for (FlowLogLine* l : pending) {
                end += l->json.size() + 1;
                l->delivered = end <= written;
                if (l->delivered) ++counters_.lines;
                else ++counters_.write_errors;
            }
            keep_first(std::move(st));
            pending.clear();
            block = &writer_.start();
        };
        for (FlowLogLine& l : lines) {
            l.delivered = false;
            if (has_line_break(l.json)) {
                ++counters_.write_errors;
                keep_first(line_break_error(where_));
                continue;
            }
            // As write(): the line that would take a non-empty file past
            // max_bytes starts the next one.
            const uint64_t before = at + block->size();
            if (regular_ && max_bytes_ > 0 && before > 0 && before + l.json.size() + 1 > max_bytes_) {
                flush();
                Status rotated = rotate();
                if (rotated) {
                    ++counters_.rotations;
                    at = 0;
                } else {
                    ++counters_.rotation_errors;
                    keep_first(std::move(rotated));
                }
                block = &writer_.start();
            }
            block->append(l.json);
            *block += '\n';
            pending.push_back(&l);
        }
        flush();
        return first;
    }

    std::string describe() const override {
        if (max_bytes_ == 0) return "file " + path_ + " (no rotation)";
        if (keep_ == 0) return "file " + path_ + " (truncate at " + size_text(max_bytes_) + ")";
        return "file " + path_ + " (rotate at " + size_text(max_bytes_) + ", keep " + std::to_string(keep_) + ")";
    }

private:
    // The size of the file `path` names, after opening it anew when that is
    // no longer the file open: removed, or moved away by logrotate or by hand.
    // One stat(2) on every write rather than once a second: it costs about a
    // microsecond, and no line goes to a file that is gone in the meantime.
    Result<uint64_t> current_size() {
        struct stat st {};
        if (fd_) {
            if (::stat(path_.c_str(), &st) == 0) {
                if (st.st_dev == dev_ && st.st_ino == ino_) return static_cast<uint64_t>(st.st_size);
            } else if (errno != ENOENT) {
                // The path cannot be looked at (its directory's permissions
                // changed, say): keep to the file open.
                if (::fstat(fd_.get(), &st) == 0) return static_cast<uint64_t>(st.st_size);
                return errno_error(where_ + ": fstat", errno);
            }
        }
        auto size = open_path();
        // A file that is gone takes no more lines: they would be lost unseen.
        if (!size) fd_.reset();
        return size;
    }

    std::string rotated_name(unsigned i) const { return path_ + "." + std::to_string(i); }

    Status rotate() {
        if (keep_ == 0) {
            if (::ftruncate(fd_.get(), 0) != 0)
                return errno_error(where_ + ": cannot truncate it at its size limit", errno);
            return {};
        }
        const std::string oldest = rotated_name(keep_);
        if (::unlink(oldest.c_str()) != 0 && errno != ENOENT)
            return errno_error(where_ + ": rotation: cannot remove " + oldest, errno);
        for (unsigned i = keep_; i > 1; --i) {
            const std::string from = rotated_name(i - 1), to = rotated_name(i);
            if (::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT)
                return errno_error(where_ + ": rotation: cannot rename " + from + " to " + to, errno);
        }
        const std::string first = rotated_name(1);
        if (::rename(path_.c_str(), first.c_str()) != 0)
            return errno_error(where_ + ": rotation: cannot rename it to " + first, errno);
        // Should a new `path` not open, the line still goes to the file open
        // (path.1 now) and the next write tries `path` again.
        if (auto size = open_path(); !size) return with_context("rotation", size.error());
        return {};
    }

    std::string path_;
    uint64_t max_bytes_;
    unsigned keep_;
    std::string where_;  // "flow-log file PATH", for errors
    Fd fd_;
    dev_t dev_ = 0;
    ino_t ino_ = 0;
    bool regular_ = false;
    LineWriter writer_;
};

Result<std::unique_ptr<FlowLogOutput>> open_file(const FlowLogDestination& d) {
    if (d.path.empty()) return make_error(ErrorCode::InvalidConfig, "flow-log file output: no path given");
    auto out = std::make_unique<FileOutput>(d);
    if (auto size = out->open_path(); !size) return size.error();
    return std::unique_ptr<FlowLogOutput>(std::move(out));
}

// ---- syslog ----

struct SocketAddress {
    sockaddr_storage addr{};
    socklen_t len = 0;
};

Result<SocketAddress> parse_udp_server(const std::string& text) {
    auto bad = [&](const std::string& why) {
        return make_error(ErrorCode::InvalidConfig, "flow-log syslog server \"" + text + "\": " + why +
                                                        " (expected ADDR:PORT or [V6ADDR]:PORT, e.g. 198.18.0.9:514)");
    };
    std::string host, port;
    bool v6 = false;
    if (!text.empty() && text[0] == '[') {
        const auto close = text.find(']');
        if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
            return bad("no :PORT after the bracketed address");
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
        v6 = true;
    } else {
        const auto colon = text.rfind(':');
        if (colon == std::string::npos) return bad("no port");
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (host.find(':') != std::string::npos) return bad("an IPv6 address goes in brackets");
    }
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535)
        return bad("the port must be a number from 1 to 65535");
    SocketAddress out;
    if (v6) {
        auto* sa = reinterpret_cast<sockaddr_in6*>(&out.addr);
        sa->sin6_family = AF_INET6;
        sa->sin6_port = htons(static_cast<uint16_t>(value));
        if (inet_pton(AF_INET6, host.c_str(), &sa->sin6_addr) != 1)
            return bad("\"" + host + "\" is not an IPv6 address");
        out.len = sizeof(sockaddr_in6);
    } else {
        auto* sa = reinterpret_cast<sockaddr_in*>(&out.addr);
        sa->sin_family = AF_INET;
        sa->sin_port = htons(static_cast<uint16_t>(value));
        if (inet_pton(AF_INET, host.c_str(), &sa->sin_addr) != 1)
            return bad("\"" + host + "\" is not a numeric IPv4 address");
        out.len = sizeof(sockaddr_in);
    }
    return out;
}

Error unix_connect_error(const std::string& path, int err) {
    const std::string hint = ": is a syslog daemon running? or set flow-log.syslog.server";
    Error e;
    switch (err) {
        case ENOENT:
            e = make_error(ErrorCode::NotFound, "no syslog socket at " + path + hint);
            break;
        case ECONNREFUSED:
            e = make_error("nothing listens on the syslog socket " + path + hint);
            break;
        case EPROTOTYPE:
            e = make_error(ErrorCode::Unsupported,
                           "syslog socket " + path + " is not a datagram socket (sluice sends one datagram per event)");
            break;
        default:
            return errno_error("syslog socket " + path + ": cannot connect", err);
    }
    e.sys_errno = err;
    return e;
}

class SyslogOutput final : public FlowLogOutput {
public:
    SyslogOutput(const FlowLogDestination& d, std::optional<SocketAddress> udp, std::string hostname)
        : unix_path_(d.syslog_socket),
          udp_(udp),
          facility_(d.facility),
          app_name_(d.app_name),
          hostname_(std::move(hostname)),
          pid_(static_cast<int>(::getpid())),
          what_(udp ? "syslog udp " + d.udp_server : "syslog " + d.syslog_socket) {}

    // A new socket, connected: the kernel then checks the destination once,
    // and a unix socket's peer going away shows as ECONNREFUSED on send.
    Status connect() {
        fd_.reset();
        if (udp_) {
            Fd fd(::socket(udp_->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
            if (!fd) return errno_error(what_ + ": socket", errno);
            if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&udp_->addr), udp_->len) != 0)
                return errno_error(what_ + ": cannot connect", errno);
            fd_ = std::move(fd);
            return {};
        }
        sockaddr_un sun{};
        sun.sun_family = AF_UNIX;
        if (unix_path_.empty() || unix_path_.size() >= sizeof(sun.sun_path))
            return make_error(ErrorCode::InvalidConfig, "syslog socket \"" + unix_path_ + "\": a socket path is 1 to " +
                                                            std::to_string(sizeof(sun.sun_path) - 1) + " characters");
        std::memcpy(sun.sun_path, unix_path_.data(), unix_path_.size());
        Fd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        if (!fd) return errno_error(what_ + ": socket", errno);
        if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&sun), sizeof(sun)) != 0)
            return unix_connect_error(unix_path_, errno);
        fd_ = std::move(fd);
        return {};
    }

    Status write(std::string_view line, std::string_view msg_id, FlowLogSeverity severity) override {
        if (has_line_break(line)) {
            ++counters_.write_errors;
            return line_break_error("flow-log to " + what_);
        }
        msg_ = rfc5424_line(facility_, severity, std::chrono::system_clock::now(), hostname_, app_name_, pid_, msg_id,
                            line);
        int err = fd_ ? send_once() : ENOTCONN;
        // The local syslog daemon restarted (its socket is a new one), or an
        // earlier reconnect failed: connect again, and try this event once more.
        if (!udp_ && (err == ECONNREFUSED || err == ENOTCONN || err == ECONNRESET)) {
            if (Status st = connect(); !st) {
                ++counters_.write_errors;
                return with_context("flow-log to " + what_ + ": event dropped, reconnecting failed", st.error());
            }
            err = send_once();
        }
        if (err != 0) {
            ++counters_.write_errors;
            return send_error(err);
        }
        ++counters_.lines;
        counters_.bytes += msg_.size();
        return {};
    }

    std::string describe() const override { return what_; }

private:
    // 0 or the errno. MSG_DONTWAIT: a syslog daemon that does not keep up
    // costs events (counted), never the daemon's main loop.
    int send_once() {
        for (;;) {
            if (::send(fd_.get(), msg_.data(), msg_.size(), MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) return 0;
            if (errno != EINTR) return errno;
        }
    }

    Error send_error(int err) const {
        const std::string what = "flow-log to " + what_ + ": event dropped";
        Error e;
        if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS)
            e = make_error(what + ": the socket is full (the syslog " +
                           std::string(udp_ ? "server or the network" : "daemon") + " is not keeping up)");
        else if (err == EMSGSIZE)
            e = make_error(what + ": " + std::to_string(msg_.size()) + " bytes is more than one datagram can carry");
        else if (udp_ && err == ECONNREFUSED)
            e = make_error(what +
                           ": the server refused an earlier one (ICMP port unreachable): "
                           "is a syslog server listening on that port?");
        else
            return errno_error(what, err);
        e.sys_errno = err;
        return e;
    }

    std::string unix_path_;
    std::optional<SocketAddress> udp_;
    int facility_;
    std::string app_name_;
    std::string hostname_;
    int pid_;
    std::string what_;  // "syslog /dev/log", "syslog udp 198.18.0.9:514"
    Fd fd_;
    std::string msg_;  // the datagram being sent
};

Result<std::unique_ptr<FlowLogOutput>> open_syslog(const FlowLogDestination& d) {
    if (d.facility < 0 || d.facility > 23)
        return make_error(ErrorCode::InvalidConfig, "flow-log syslog facility " + std::to_string(d.facility) +
                                                        ": must be 0 to 23 (local0 is 16)");
    std::optional<SocketAddress> udp;
    if (!d.udp_server.empty()) {
        auto addr = parse_udp_server(d.udp_server);
        if (!addr) return addr.error();
        udp = *addr;
    }
    std::string hostname = d.hostname;
    if (hostname.empty()) {
        char buf[256] = {};
        if (::gethostname(buf, sizeof(buf) - 1) == 0) hostname = buf;  // failing that, "-" in each message
    }
    auto out = std::make_unique<SyslogOutput>(d, udp, std::move(hostname));
    if (Status st = out->connect(); !st) return with_context("flow-log to syslog", st.error());
    return std::unique_ptr<FlowLogOutput>(std::move(out));
}

}  // namespace

Status FlowLogOutput::write_batch(std::span<FlowLogLine> lines) {
    Status first;
    for (FlowLogLine& l : lines) {
        const uint64_t before = counters_.lines;
        Status st = write(l.json, l.msg_id, l.severity);
        l.delivered = counters_.lines != before;
        if (!st && first) first = std::move(st);
    }
    return first;
}

Result<std::unique_ptr<FlowLogOutput>> FlowLogOutput::open(const FlowLogDestination& d) {
    switch (d.kind) {
        case FlowLogDestination::Kind::file:
            return open_file(d);
        case FlowLogDestination::Kind::syslog:
            return open_syslog(d);
        case FlowLogDestination::Kind::stdout_stream:
            return open_stdout();
    }
    return make_error(ErrorCode::InvalidConfig, "flow-log output: unknown destination kind");
}

std::string rfc5424_line(int facility, FlowLogSeverity severity, std::chrono::system_clock::time_point when,
                         std::string_view hostname, std::string_view app_name, int pid, std::string_view msg_id,
                         std::string_view msg) {
    using namespace std::chrono;
    const auto secs = floor<seconds>(when);
    const auto micros = duration_cast<microseconds>(when - secs).count();
    const time_t t = system_clock::to_time_t(secs);
    tm utc{};
    gmtime_r(&t, &utc);
    char stamp[128];
    std::snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900, utc.tm_mon + 1,
                  utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<long long>(micros));

    std::string out;
    out.reserve(msg.size() + 128);
    out += '<';
    out += std::to_string(facility * 8 + static_cast<int>(severity));
    out += ">1 ";
    out += stamp;
    out += ' ';
    out += header_field(hostname, 255);
    out += ' ';
    out += header_field(app_name, 48);
    out += ' ';
    out += pid > 0 ? std::to_string(pid) : "-";
    out += ' ';
    out += header_field(msg_id, 32);
    out += " - ";
    out += msg;
    return out;
}

}  // namespace sluice::observe
