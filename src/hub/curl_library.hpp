#pragma once
// Internal: libcurl, opened with dlopen on first use rather than linked, so that a process
// that never downloads a model (every `warden serve` of a local folder, every `warden embed`)
// does not load it and its ~27 shared libraries (TLS, Kerberos, LDAP, IDN...) at start: that
// had been about a third of the dynamic loader's time, itself a quarter of a cold start
// (docs/benchmarks.md, "Cold start").

#include <curl/curl.h>

namespace warden::hub::detail {

// The libcurl functions http_client.cpp calls.
struct CurlLibrary {
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  void (*easy_cleanup)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// libcurl.so.4, opened and globally initialised once per process (thread-safe). Throws
// Error(Unsupported) naming the library when it cannot be opened or lacks a function: then
// downloading is what fails, with a message, not the start of the process.
const CurlLibrary& curl_library();

}  // namespace warden::hub::detail
