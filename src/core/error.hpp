#pragma once
// Warden's error policy (docs/architecture.md): code that rejects input or a file throws
// warden::Error with a kind; the CLI and HTTP boundaries catch it and map the kind to an
// exit code or an HTTP status. Hot loops (kernels, the forward pass) never throw: they run
// only on input that was validated before them.

#include <stdexcept>
#include <string>

namespace warden {

enum class ErrorKind {
  InvalidArgument,  // a caller passed a bad option or name (CLI: usage error)
  InvalidInput,     // user data is malformed: invalid UTF-8, bad JSON, out-of-range ids
  NotFound,         // a named model, file or component does not exist
  Unsupported,      // well-formed but not implemented (an architecture, a dtype)
  CorruptFile,      // a model/tokenizer file is inconsistent or hostile
  Io,               // the operating system refused (open, read, write, mmap)
  Internal,         // a bug in Warden: an invariant did not hold
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  [[nodiscard]] ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

// Short lowercase name of a kind, for logs and JSON error bodies.
const char* error_kind_name(ErrorKind kind) noexcept;

}  // namespace warden
