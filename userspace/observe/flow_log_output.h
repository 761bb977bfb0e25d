// Where flow-log records go. The daemon turns each flow event (a session
// opened, closed, or a packet denied) into one JSON object on one line; an
// output delivers those lines to a file that rotates by size, to syslog
// (RFC 5424, one datagram per event, over the local socket or to a UDP
// server), or to stdout, and counts what it delivered and what it could not.
// The daemon calls it from its main loop, so nothing here waits for long:
// sockets are sent to without blocking (a full socket drops the event and
// counts it), a file gets one write(2) per batch of whole lines.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sluice::observe {

struct FlowLogDestination {
    enum class Kind { file, syslog, stdout_stream };
    Kind kind = Kind::stdout_stream;

    // file: JSON lines appended to `path`, created 0640 (less the umask) if
    // absent; its directory must exist (an error otherwise, naming it).
    // Before a line that would take the file past max_bytes it is rotated:
    // path.keep is removed, path.(keep-1) -> path.keep ... path -> path.1, and
    // a new empty `path` is started. keep == 0 truncates the file instead.
    // max_bytes == 0 never rotates (for an external logrotate: the output
    // notices the file was moved away and starts a new one).
    std::string path;
    uint64_t max_bytes = 100ull << 20;
    unsigned keep = 5;

    // syslog: a local unix datagram socket (`syslog_socket`), or, when
    // `udp_server` is set, a UDP server "ADDR:PORT" or "[V6ADDR]:PORT" with a
    // numeric address (no name lookups in the daemon's main loop).
    std::string syslog_socket = "/dev/log";
    std::string udp_server;
    int facility = 16;  // local0; 0..23
    std::string app_name = "sluice";
    std::string hostname;  // empty: gethostname()
};

// The RFC 5424 severities flow events are logged at.
enum class FlowLogSeverity : uint8_t { info = 6, notice = 5, warning = 4 };

struct FlowLogOutputCounters {
    uint64_t lines = 0;  // events delivered
    // Bytes handed to the kernel: file and stdout count the JSON and its
    // '\n', syslog the whole datagram.
    uint64_t bytes = 0;
    uint64_t rotations = 0;        // file rotations (and truncations, keep == 0)
    uint64_t write_errors = 0;     // events not delivered
    uint64_t rotation_errors = 0;  // rotations that failed (the line went to the full file)
};

// One event for write_batch.
struct FlowLogLine {
    std::string json;              // as for write(): one line, no '\n'
    std::string_view msg_id;       // a string literal (flow_event_msg_id)
    FlowLogSeverity severity = FlowLogSeverity::info;
    bool delivered = false;        // set by write_batch
};

class FlowLogOutput {
public:
    virtual ~FlowLogOutput() = default;
    FlowLogOutput(const FlowLogOutput&) = delete;
    FlowLogOutput& operator=(const FlowLogOutput&) = delete;

    // Opens the destination: the file for appending, the socket connected.
    // An error says what could not be opened, where, and what to do.
    static Result<std::unique_ptr<FlowLogOutput>> open(const FlowLogDestination& d);

    // Delivers one event. `json_line` is one line (no '\n'; one with a line
    // break in it is refused). `msg_id` is the RFC 5424 MSGID ("flow-open",
    // "flow-close", "flow-deny"); it and `severity` matter to syslog only.
    // A failure returns the error and counts a write error; the output stays
    // usable. A file output checks on every write that `path` is still the
    // file it has open (one stat(2)), and opens it anew when it was removed
    // or moved away. A syslog output whose local socket went away (the syslog
    // daemon restarted) connects again and retries the event once.
    // A failed rotation still writes the line (to the file over its limit)
    // and returns the rotation's error.
    virtual Status write(std::string_view json_line, std::string_view msg_id, FlowLogSeverity severity) = 0;

    // Delivers `lines` in order, each as write() would (the same counters,
    // rotations between lines, refusals), setting each one's `delivered`;
    // returns the first error. A file output checks its path once per batch
    // and hands the lines between two rotations to one write(2): the daemon
    // writes what one drain of the ring (or one GC walk) produced at once,
    // tens of thousands of lines a second under a connection flood. Others
    // deliver line by line.
    virtual Status write_batch(std::span<FlowLogLine> lines);

    const FlowLogOutputCounters& counters() const { return counters_; }

    // "file /var/log/sluice/flows.jsonl (rotate at 100 MiB, keep 5)",
    // "syslog /dev/log", "syslog udp 198.18.0.9:514", "stdout".
    virtual std::string describe() const = 0;

protected:
    FlowLogOutput() = default;
    FlowLogOutputCounters counters_;
};

// The RFC 5424 message for an event, without a trailing newline:
//   "<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID - MSG"
// PRI = facility * 8 + severity; TIMESTAMP in UTC with microseconds
// (2026-12-05T22:49:34.123456Z); PROCID the pid; no STRUCTURED-DATA; MSG the
// JSON as it is (UTF-8, no BOM). HOSTNAME, APP-NAME and MSGID keep to
// printable US-ASCII (anything else, a space included, becomes '_') and to
// 255, 48 and 32 characters; an empty one (or a pid <= 0) becomes "-".
std::string rfc5424_line(int facility, FlowLogSeverity severity, std::chrono::system_clock::time_point when,
                         std::string_view hostname, std::string_view app_name, int pid, std::string_view msg_id,
                         std::string_view msg);

}  // namespace sluice::observe
