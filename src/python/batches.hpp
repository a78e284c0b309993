#pragma once
// How a Python call runs many inputs, the way a bulk job does (bulk/job.hpp): prepared
// (tokenized) in parallel on the model's pool, then computed in batches of similar length
// (embed/length_order.hpp). A row never depends on its batch-mates, so the numbers are the
// server's whatever the batching.

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "embed/embedder.hpp"

namespace warden {
class ThreadPool;
}

namespace warden::python {

// prepare(i) for i in [0, count), on `pool` when there are several. The first input (in order)
// whose prepare threw is the error, its message prefixed with `what` and the index.
std::vector<embed::PreparedInput> prepare_all(
    std::size_t count, ThreadPool& pool, std::string_view what,
    const std::function<embed::PreparedInput(std::size_t)>& prepare);

// run(batch, positions) for each batch of at most batch_size inputs of similar length;
// positions[k] is batch[k]'s index in `inputs`. Called without the GIL; on Python's main thread
// a Ctrl-C between two batches ends the call with KeyboardInterrupt (Interrupted).
using BatchFn =
    std::function<void(std::span<const embed::PreparedInput* const>, std::span<const std::size_t>)>;
void run_batches(std::span<const embed::PreparedInput> inputs, std::size_t batch_size, const BatchFn& run);

// A signal Python's main thread received while a call ran without the GIL: the errors'
// translator raises it as KeyboardInterrupt.
struct Interrupted {};

// Remembers Python's main thread (threading.main_thread()), the one signals reach: a call there
// checks for them between batches; other threads do not take the GIL for it.
void note_main_thread();

}  // namespace warden::python
