#include "core/error.hpp"

namespace warden {

const char* error_kind_name(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::InvalidArgument:
      return "invalid_argument";
    case ErrorKind::InvalidInput:
      return "invalid_input";
    case ErrorKind::NotFound:
      return "not_found";
    case ErrorKind::Unsupported:
      return "unsupported";
    case ErrorKind::CorruptFile:
      return "corrupt_file";
    case ErrorKind::Io:
      return "io";
    case ErrorKind::Internal:
      return "internal";
  }
  return "internal";
}

}  // namespace warden
