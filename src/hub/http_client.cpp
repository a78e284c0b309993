#include "hub/http_client.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hub/curl_library.hpp"

namespace warden::hub::detail {

namespace {

struct EasyDeleter {
  void operator()(CURL* curl) const noexcept { curl_library().easy_cleanup(curl); }
};
struct ListDeleter {
  void operator()(curl_slist* list) const noexcept { curl_library().slist_free_all(list); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using HeaderList = std::unique_ptr<curl_slist, ListDeleter>;

constexpr std::size_t kMaxBufferedBody = 1 << 20;

struct Transfer {
  HttpResponse response;
  const BodySink* sink = nullptr;
  bool sink_refused = false;
};

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// Called once per header line, for every response of a redirect chain: a status line
// starts a new response, so only the last one's headers are kept.
std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {
    t->response.headers.clear();
    const auto space = line.find(' ');
    if (space != std::string_view::npos) {
      long status = 0;
      for (std::size_t i = space + 1; i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]));
           ++i) {
        status = status * 10 + (line[i] - '0');
      }
      t->response.status = status;
    }
    return line.size();
  }
  const auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    t->response.headers[name] = trim(line.substr(colon + 1));
  }
  return line.size();
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view chunk(data, size * count);
  const long status = t->response.status;
  if (t->sink != nullptr && *t->sink && (status == 200 || status == 206)) {
    if (!(*t->sink)(status, chunk)) {
      t->sink_refused = true;
      return 0;  // makes curl stop with CURLE_WRITE_ERROR
    }
    return chunk.size();
  }
  const std::size_t room = kMaxBufferedBody - std::min(kMaxBufferedBody, t->response.body.size());
  t->response.body.append(chunk.substr(0, room));
  return chunk.size();
}

}  // namespace

std::string user_agent() {
  return "warden/" WARDEN_VERSION;
}

HttpResponse http_perform(const HttpRequest& request, const BodySink& sink) {
  const CurlLibrary& lib = curl_library();
  EasyHandle curl(lib.easy_init());
  if (!curl) throw Error(ErrorKind::Internal, "libcurl could not create a handle");
  Transfer transfer;
  transfer.sink = &sink;
  HeaderList headers;
  for (const auto& h : request.headers) {
    curl_slist* grown = lib.slist_append(headers.get(), h.c_str());
    if (grown == nullptr) throw Error(ErrorKind::Internal, "libcurl could not build the headers");
    static_cast<void>(headers.release());  // now owned by `grown`
    headers.reset(grown);
  }
  std::array<char, CURL_ERROR_SIZE> error{};
  CURL* h = curl.get();
  const std::string agent = user_agent();
  const std::string range = fmt::format("{}-", request.resume_from);
  lib.easy_setopt(h, CURLOPT_URL, request.url.c_str());
  lib.easy_setopt(h, CURLOPT_USERAGENT, agent.c_str());
  lib.easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  lib.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  lib.easy_setopt(h, CURLOPT_FAILONERROR, 0L);
  lib.easy_setopt(h, CURLOPT_ERRORBUFFER, error.data());
  lib.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
  // No overall timeout (weights take as long as they take): a stall is what aborts.
  const long stall_s = std::max(1L, static_cast<long>((request.stall_timeout.count() + 999) / 1000));
  lib.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  lib.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, stall_s);
  lib.easy_setopt(h, CURLOPT_FOLLOWLOCATION, request.follow_redirects ? 1L : 0L);
  lib.easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
  lib.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  lib.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  if (request.head) lib.easy_setopt(h, CURLOPT_NOBODY, 1L);
  if (request.resume_from > 0) lib.easy_setopt(h, CURLOPT_RANGE, range.c_str());
  lib.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  lib.easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
  lib.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  lib.easy_setopt(h, CURLOPT_WRITEDATA, &transfer);

  const CURLcode rc = lib.easy_perform(h);
  if (rc != CURLE_OK) {
    transfer.response.transport_error =
        transfer.sink_refused
            ? std::string("writing to the disk failed")
            : (error[0] != '\0' ? std::string(error.data()) : std::string(lib.easy_strerror(rc)));
  }
  return std::move(transfer.response);
}

}  // namespace warden::hub::detail
