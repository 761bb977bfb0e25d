// Errors are values: a Result<T> holds either a T or an Error whose message a
// person can act on (what failed, on what, and why). Code that must tell one
// failure from another reads the Error's code (and errno), never its text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sluice {

// What kind of failure, for callers that react to it.
enum class ErrorCode : uint8_t {
    Failed,            // nothing more specific
    NotFound,          // a named thing (file, program, interface, pin) is not there
    AlreadyExists,     // EEXIST: e.g. a pin or an instance of that name
    Busy,              // EBUSY: held by another (an XDP program of another tool)
    PermissionDenied,  // EPERM/EACCES, or a group the user is not in
    Unsupported,       // the kernel, driver or CPU cannot do it
    InvalidConfig,     // the config says something wrong; `where` says where
    Incompatible,      // state left by another version (pins of another ABI)
    Timeout,
};

// Where in a config file an error is, as `sluice check` prints it.
struct ErrorLocation {
    std::string file;
    int line = 0;  // 1-based; 0 = unknown
    int column = 0;
    std::string path;  // the field, e.g. "policies[2].source[0]"
};

struct Error {
    std::string message;
    ErrorCode code = ErrorCode::Failed;
    int sys_errno = 0;  // the errno behind it; 0 when there is none
    std::optional<ErrorLocation> where;
};

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error error) : v_(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(v_); }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<T>(v_); }
    const T& value() const& { return std::get<T>(v_); }
    T&& value() && { return std::get<T>(std::move(v_)); }
    T* operator->() { return &std::get<T>(v_); }
    const T* operator->() const { return &std::get<T>(v_); }
    T& operator*() & { return value(); }
    const Error& error() const { return std::get<Error>(v_); }

private:
    std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : error_(std::move(error)), failed_(true) {}
    bool ok() const { return !failed_; }
    explicit operator bool() const { return ok(); }
    const Error& error() const { return error_; }

private:
    Error error_;
    bool failed_ = false;
};

using Status = Result<void>;

inline Error make_error(ErrorCode code, std::string message) {
    Error e;
    e.message = std::move(message);
    e.code = code;
    return e;
}
inline Error make_error(std::string message) { return make_error(ErrorCode::Failed, std::move(message)); }

// The ErrorCode an errno stands for.
ErrorCode error_code_for_errno(int err);

// "WHAT: strerror(err)", carrying err (negative values, as libbpf returns
// them, are taken as their absolute value) and its ErrorCode.
Error errno_error(const std::string& what, int err);

// The same Error with `context: ` in front of its message; code, errno and
// position are kept.
Error with_context(const std::string& context, Error error);

}  // namespace sluice
