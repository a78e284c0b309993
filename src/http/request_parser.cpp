#include "http/request_parser.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include <fmt/format.h>
#include <boost/beast/http/error.hpp>

namespace warden::http {

namespace bhttp = boost::beast::http;

namespace {

// Each field costs its framing too: ": " (or ":") and CRLF. Counting 4 keeps a flood of
// empty fields ("a:\r\n") as expensive as its bytes on the wire.
constexpr std::size_t kFieldFraming = 4;

std::string_view sv(boost::beast::string_view s) noexcept {
  return {s.data(), s.size()};
}

std::string_view trimmed(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// A field seen again is joined as RFC 9110 §5.3 combines repeated list fields.
void append_list(std::string& list, std::string_view value) {
  if (!list.empty()) list += ", ";
  list += value;
}

}  // namespace

RequestParser::RequestParser(std::size_t header_limit, std::size_t body_limit) : header_limit_(header_limit) {
  // Beast's own limit stays as a second bound on what one put() looks at; ours counts every byte.
  header_limit_ = std::min<std::size_t>(header_limit_, std::numeric_limits<std::uint32_t>::max());
  this->header_limit(static_cast<std::uint32_t>(header_limit_));
  this->body_limit(body_limit);
  this->eager(true);  // one put() goes on from the header into the body
}

void RequestParser::refuse(int status, std::string message, error_code& ec) {
  refusal_ = Refusal{status, std::move(message)};
  ec = bhttp::error::bad_value;
}

bool RequestParser::spend(std::size_t bytes, error_code& ec) {
  if (!header_done_) {
    head_bytes_ += bytes;
    if (head_bytes_ > header_limit_) {
      refuse(431, fmt::format("request headers are larger than the limit of {} bytes", header_limit_), ec);
      return false;
    }
    return true;
  }
  trailer_bytes_ += bytes;
  if (trailer_bytes_ > header_limit_) {
    refuse(400,
           fmt::format("chunk extensions and trailer fields are larger than the limit of {} bytes",
                       header_limit_),
           ec);
    return false;
  }
  return true;
}

void RequestParser::on_request_impl(verb method, string_view method_str, string_view target, int version,
                                    error_code& ec) {
  // "METHOD SP target SP HTTP/1.1 CRLF"
  if (!spend(method_str.size() + target.size() + 12, ec)) return;
  message_.target(target);
  if (method == verb::unknown) {
    message_.method_string(method_str);
  } else {
    message_.method(method);
  }
  message_.version(version);
}

void RequestParser::on_field_impl(field name, string_view name_string, string_view value, error_code& ec) {
  if (!spend(name_string.size() + value.size() + kFieldFraming, ec)) return;
  if (header_done_) return;  // a trailer: counted, never merged into the request's fields
  switch (name) {
    case field::transfer_encoding:
      ++transfer_encodings_;
      append_list(transfer_encoding_, sv(value));
      break;
    case field::content_length:
      content_length_ = true;
      break;
    case field::host:
      ++hosts_;
      break;
    case field::expect:
      append_list(expect_, sv(value));
      break;
    default:
      break;
  }
  message_.insert(name, name_string, value);
}

void RequestParser::on_header_impl(error_code& ec) {
  header_done_ = true;
  if (transfer_encodings_ > 0) {
    if (!iequals(trimmed(transfer_encoding_), "chunked")) {
      return refuse(400,
                    fmt::format("Transfer-Encoding must be exactly chunked, got \"{}\"",
                                transfer_encoding_.substr(0, 100)),
                    ec);
    }
    if (content_length_)
      return refuse(400, "a request may not carry both Transfer-Encoding and Content-Length", ec);
  }
  if (message_.version() >= 11 && hosts_ != 1) {
    return refuse(400, hosts_ == 0 ? "an HTTP/1.1 request needs a Host header" : "more than one Host header",
                  ec);
  }
  if (!expect_.empty()) {
    if (!iequals(trimmed(expect_), "100-continue")) {
      return refuse(
          417, fmt::format("Expect \"{}\" is not supported (only 100-continue)", expect_.substr(0, 100)), ec);
    }
    expect_continue_ = message_.version() >= 11;
  }
  awaiting_chunk_line_ = this->chunked();
}

void RequestParser::on_body_init_impl(const boost::optional<std::uint64_t>& content_length, error_code& ec) {
  // Beast's eager loop goes on into the body after on_header_impl failed, with the error
  // still set: keep it (clearing it here would accept the refused request).
  if (refusal_) {
    ec = bhttp::error::bad_value;
    return;
  }
  ec = {};
  // Beast has checked a Content-Length against the body limit already, so this is bounded.
  if (content_length) message_.body().reserve(static_cast<std::size_t>(*content_length));
}

std::size_t RequestParser::on_body_impl(string_view body, error_code& ec) {
  ec = {};
  message_.body().append(body.data(), body.size());
  return body.size();
}

void RequestParser::on_chunk_header_impl(std::uint64_t size, string_view extensions, error_code& ec) {
  if (!spend(extensions.size(), ec)) return;
  // Chunk data follows, unless this was the last chunk (its trailers come as fields).
  awaiting_chunk_line_ = false;
  (void)size;
}

std::size_t RequestParser::on_chunk_body_impl(std::uint64_t remain, string_view body, error_code& ec) {
  ec = {};
  message_.body().append(body.data(), body.size());
  if (remain == body.size()) awaiting_chunk_line_ = true;  // this chunk's data is all here
  return body.size();
}

void RequestParser::on_finish_impl(error_code& ec) {
  ec = {};
  awaiting_chunk_line_ = false;
}

}  // namespace warden::http
