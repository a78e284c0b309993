#include "hub/curl_library.hpp"

#include <dlfcn.h>

#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace warden::hub::detail {

namespace {

constexpr const char* kLibrary = "libcurl.so.4";

template <typename Fn>
void resolve(void* handle, const char* name, Fn& out) {
  void* symbol = ::dlsym(handle, name);
  if (symbol == nullptr) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{} has no {}: downloading models needs libcurl 7.85 or newer", kLibrary, name));
  }
  out = reinterpret_cast<Fn>(symbol);
}

CurlLibrary open_library() {
  // Never closed: curl keeps global state (and its TLS library's) for the process.
  void* handle = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw Error(ErrorKind::Unsupported,
                fmt::format("downloading models needs {} (Debian: apt-get install libcurl4): {}", kLibrary,
                            why != nullptr ? why : "not found"));
  }
  CurlLibrary lib{};
  CURLcode (*global_init)(long) = nullptr;
  resolve(handle, "curl_global_init", global_init);
  resolve(handle, "curl_easy_init", lib.easy_init);
  resolve(handle, "curl_easy_setopt", lib.easy_setopt);
  resolve(handle, "curl_easy_perform", lib.easy_perform);
  resolve(handle, "curl_easy_cleanup", lib.easy_cleanup);
  resolve(handle, "curl_easy_strerror", lib.easy_strerror);
  resolve(handle, "curl_slist_append", lib.slist_append);
  resolve(handle, "curl_slist_free_all", lib.slist_free_all);
  // curl_global_init is not thread-safe and must run once per process: the static below.
  if (global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    throw Error(ErrorKind::Internal, "libcurl could not be initialised");
  }
  return lib;
}

}  // namespace

const CurlLibrary& curl_library() {
  static const CurlLibrary library = open_library();
  return library;
}

}  // namespace warden::hub::detail
