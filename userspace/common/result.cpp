#include "common/result.h"

#include <cerrno>
#include <cstring>

namespace sluice {

ErrorCode error_code_for_errno(int err) {
    switch (err < 0 ? -err : err) {
    case ENOENT:
    case ENODEV:
    case ESRCH: return ErrorCode::NotFound;
    case EEXIST: return ErrorCode::AlreadyExists;
    case EBUSY: return ErrorCode::Busy;
    case EPERM:
    case EACCES: return ErrorCode::PermissionDenied;
    case EOPNOTSUPP:
    case ENOSYS:
    case EPROTONOSUPPORT: return ErrorCode::Unsupported;
    case ETIMEDOUT: return ErrorCode::Timeout;
    default: return ErrorCode::Failed;
    }
}

Error errno_error(const std::string& what, int err) {
    const int e = err < 0 ? -err : err;
    Error error = make_error(error_code_for_errno(e), what + ": " + std::strerror(e));
    error.sys_errno = e;
    return error;
}

Error with_context(const std::string& context, Error error) {
    error.message = context + ": " + error.message;
    return error;
}

}  // namespace sluice
