#pragma once
// An HTTP API error: the status and the message a client sees. Routes throw it; the router
// turns it into TEI's or OpenAI's error body, depending on which API the route belongs to.

#include <stdexcept>
#include <string>

namespace warden::http {

class ApiError : public std::runtime_error {
 public:
  // error_type is TEI's: "Validation", "Empty", "Tokenizer", "Backend", "Overloaded", ...
  // param is OpenAI's: the request field at fault, empty when none.
  ApiError(int status, std::string error_type, const std::string& message, std::string param = {})
      : std::runtime_error(message),
        status_(status),
        error_type_(std::move(error_type)),
        param_(std::move(param)) {}
  [[nodiscard]] int status() const noexcept { return status_; }
  [[nodiscard]] const std::string& error_type() const noexcept { return error_type_; }
  [[nodiscard]] const std::string& param() const noexcept { return param_; }

 private:
  int status_;
  std::string error_type_;
  std::string param_;
};

}  // namespace warden::http
