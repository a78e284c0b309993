#pragma once
// The spans of one answered request (--otlp-endpoint): the server span, and for a request
// that computed, its stages as children — tokenization, the queue wait, inference, and the
// response (formatting up to the hand-over to the connection). Internal to src/http/.

#include <vector>

#include "http/call.hpp"
#include "trace/span.hpp"

namespace warden::http {

// `method` is the request's; `end` when the answer was handed over; `status` its status.
std::vector<trace::Span> request_spans(const Call& call, std::string_view method, int status,
                                       Clock::time_point end);

}  // namespace warden::http
