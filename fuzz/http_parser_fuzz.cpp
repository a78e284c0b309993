// libFuzzer: any bytes on a connection, fed to the server's request parser in pieces as
// reads would bring them (the first byte picks the piece size), either make requests, ask
// for more, or stop with an error; a refusal carries a client status; and nothing the
// client sends grows the parsed head or body past the limits it was given.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include "http/request_parser.hpp"

namespace {

constexpr std::size_t kHeaderLimit = 1024;
constexpr std::size_t kBodyLimit = 4096;

std::size_t head_bytes(const warden::http::RequestParser::Message& m) {
  std::size_t n = m.method_string().size() + m.target().size();
  for (const auto& f : m) n += f.name_string().size() + f.value().size();
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string pending;  // what a read brought and the parser has not taken yet
  while (!input.empty()) {
    warden::http::RequestParser parser(kHeaderLimit, kBodyLimit);
    boost::beast::error_code ec = boost::beast::http::error::need_more;
    while (!input.empty() || !pending.empty()) {
      if (ec == boost::beast::http::error::need_more) {
        if (input.empty()) break;
        const std::size_t n = std::min(piece, input.size());
        pending.append(input.substr(0, n));
        input.remove_prefix(n);
      }
      const std::size_t used = parser.put(boost::asio::buffer(pending.data(), pending.size()), ec);
      pending.erase(0, used);
      if (!ec && !parser.is_done()) ec = boost::beast::http::error::need_more;
      if (ec != boost::beast::http::error::need_more) break;
    }
    if (head_bytes(parser.get()) > kHeaderLimit) std::abort();
    if (parser.get().body().size() > kBodyLimit) std::abort();
    if (const auto& refusal = parser.refusal()) {
      const int s = refusal->status;
      if (s != 400 && s != 413 && s != 417 && s != 431) std::abort();
      if (refusal->message.empty()) std::abort();
    }
    if (!parser.is_done()) return 0;  // an error or an unfinished request ends the connection
  }
  return 0;
}
