#pragma once
// The HTTP/1.1 request parser of the socket layer: Beast's basic_parser for the syntax, with
// every byte a client controls counted before anything grows with it. Internal to
// server.cpp (it includes Beast); its own file so that the rules it enforces can be read,
// and tested, in one place.
//
// What it refuses, with the status the server answers (the connection is closed after it):
//   431  request line + header fields over the header limit (empty fields count too: each
//        field costs its name, value and 4 bytes of framing)
//   400  trailer fields or chunk extensions over the same limit; a Transfer-Encoding other
//        than exactly "chunked" (RFC 9112 §6.3: gzip, identity, "chunked, gzip" would leave
//        the body's end unknown, and reading it as empty would smuggle it in as the next
//        request); Transfer-Encoding with Content-Length; HTTP/1.1 without exactly one Host;
//        a chunk line ended by a bare LF
//   417  an Expect other than 100-continue
//   413  a body over the payload limit (Beast's body limit, checked on Content-Length and on
//        each chunk size before the bytes are read)

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace warden::http {

// Why the parser stopped on a request it will not take: the status and message to answer.
struct Refusal {
  int status = 400;
  std::string message;
};

class RequestParser final : public boost::beast::http::basic_parser<true> {
 public:
  using Message = boost::beast::http::request<boost::beast::http::string_body>;

  RequestParser(std::size_t header_limit, std::size_t body_limit);

  // Set when the parser stopped with an error of its own (put() returns bad_value then).
  [[nodiscard]] const std::optional<Refusal>& refusal() const noexcept { return refusal_; }
  // The client asked for 100 Continue before sending its body.
  [[nodiscard]] bool expects_continue() const noexcept { return expect_continue_; }
  // True while the next bytes must be a chunk line (not chunk data): a bare LF there is a
  // framing error that Beast would otherwise wait on until the request timeout.
  [[nodiscard]] bool awaiting_chunk_line() const noexcept { return awaiting_chunk_line_; }

  // The request so far (method, target, version and fields once the header is done; the
  // body once done()).
  [[nodiscard]] const Message& get() const noexcept { return message_; }
  [[nodiscard]] Message release() noexcept { return std::move(message_); }

 private:
  using error_code = boost::beast::error_code;
  using field = boost::beast::http::field;
  using verb = boost::beast::http::verb;
  using string_view = boost::beast::string_view;

  void refuse(int status, std::string message, error_code& ec);
  // Counts `bytes` of head (or, after the header, trailer) against the header limit.
  bool spend(std::size_t bytes, error_code& ec);

  void on_request_impl(verb method, string_view method_str, string_view target, int version,
                       error_code& ec) override;
  void on_response_impl(int, string_view, int, error_code&) override {}
  void on_field_impl(field name, string_view name_string, string_view value, error_code& ec) override;
  void on_header_impl(error_code& ec) override;
  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length, error_code& ec) override;
  std::size_t on_body_impl(string_view body, error_code& ec) override;
  void on_chunk_header_impl(std::uint64_t size, string_view extensions, error_code& ec) override;
  std::size_t on_chunk_body_impl(std::uint64_t remain, string_view body, error_code& ec) override;
  void on_finish_impl(error_code& ec) override;

  Message message_;
  std::size_t header_limit_;
  std::size_t head_bytes_ = 0;     // request line and header fields
  std::size_t trailer_bytes_ = 0;  // trailer fields and chunk extensions
  bool header_done_ = false;
  std::optional<Refusal> refusal_;
  // Field values the header checks need, gathered as the fields arrive.
  std::string transfer_encoding_;
  std::size_t transfer_encodings_ = 0;
  std::size_t hosts_ = 0;
  bool content_length_ = false;
  std::string expect_;
  bool expect_continue_ = false;
  bool awaiting_chunk_line_ = false;
};

}  // namespace warden::http
