#pragma once
// What a task refuses, in terms every transport can map: the client's fault by what it did
// (an empty input, a field out of its rules, an answer past a size limit, a model that cannot
// do the task) or the server's state (no model, an unknown one, a load that failed). It is a
// warden::Error, so a transport that maps by kind alone still answers sensibly; HTTP maps the
// fault to its status, gRPC to its code.

#include <string>

#include "core/error.hpp"

namespace warden::serving::tasks {

enum class Fault {
  Empty,          // an input with nothing in it (TEI: 400 "Empty")
  Invalid,        // a field breaks a rule (422 "Validation")
  Untokenizable,  // a text or ids the tokenizer cannot take (422 "Tokenizer")
  TooLarge,       // the answer would pass a size limit (413)
  ModelCannot,    // the model is of the wrong kind or lacks the output asked for (424)
  NoModel,        // no model is being served (503)
  UnknownModel,   // the request names a model nobody serves (404, param "model")
  LoadFailed,     // the model failed to load (500); kind() is the loader's
};

class TaskError : public Error {
 public:
  TaskError(Fault fault, const std::string& message, std::string param = {})
      : Error(kind_of(fault), message), fault_(fault), param_(std::move(param)) {}
  // A load failure keeps the loader's own kind.
  TaskError(Fault fault, ErrorKind kind, const std::string& message, std::string param = {})
      : Error(kind, message), fault_(fault), param_(std::move(param)) {}

  [[nodiscard]] Fault fault() const noexcept { return fault_; }
  // The request field at fault (OpenAI's `param`), empty when none.
  [[nodiscard]] const std::string& param() const noexcept { return param_; }

 private:
  static ErrorKind kind_of(Fault fault) noexcept {
    switch (fault) {
      case Fault::ModelCannot:
        return ErrorKind::Unsupported;
      case Fault::UnknownModel:
        return ErrorKind::NotFound;
      case Fault::NoModel:
      case Fault::LoadFailed:
        return ErrorKind::Internal;
      default:
        return ErrorKind::InvalidArgument;
    }
  }
  Fault fault_;
  std::string param_;
};

}  // namespace warden::serving::tasks
