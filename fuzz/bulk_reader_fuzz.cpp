// libFuzzer: any bytes given to the bulk record reader, in every input format, either read
// as records or throw warden::Error. The records' offsets only grow and stay inside the
// input, and resuming at any record's position reads exactly the records that followed it.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "bulk/record_reader.hpp"
#include "core/error.hpp"

namespace {

struct Read {
  std::vector<warden::bulk::Record> records;
  bool failed = false;
};

Read read_all(std::string_view data, const warden::bulk::ReaderOptions& options,
              warden::bulk::ReaderPosition start = {}) {
  Read r;
  try {
    warden::bulk::RecordReader reader(data, "fuzz", options, start);
    warden::bulk::Record record;
    while (reader.next(record)) r.records.push_back(record);
  } catch (const warden::Error&) {
    r.failed = true;
  }
  return r;
}

bool same(const warden::bulk::Record& a, const warden::bulk::Record& b) {
  return a.index == b.index && a.line == b.line && a.id == b.id && a.text == b.text && a.pair == b.pair &&
         a.pair_id == b.pair_id && a.end_offset == b.end_offset && a.next_line == b.next_line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = bytes[0];
  const std::string_view data(reinterpret_cast<const char*>(bytes) + 1, size - 1);
  warden::bulk::ReaderOptions options;
  options.format = static_cast<warden::bulk::InputFormat>(selector % 4);
  if ((selector & 4U) != 0) options.max_record_bytes = 16;
  if ((selector & 8U) != 0) {
    options.pair_field = "query";
    options.pair_id_field = "qid";
  }
  if ((selector & 16U) != 0) options.id_required = true;

  const Read all = read_all(data, options);
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < all.records.size(); ++i) {
    const auto& r = all.records[i];
    if (r.index != i || r.end_offset <= last || r.end_offset > data.size() || r.next_line < r.line)
      std::abort();
    last = r.end_offset;
  }
  // Resuming after a record reads the rest the same way (checked from a few positions).
  for (std::size_t i = 0; i < all.records.size() && i < 4; ++i) {
    const auto& r = all.records[i];
    const Read rest = read_all(data, options, {r.end_offset, r.index + 1, r.next_line});
    if (rest.failed != all.failed) std::abort();
    if (rest.records.size() != all.records.size() - i - 1) std::abort();
    for (std::size_t k = 0; k < rest.records.size(); ++k) {
      if (!same(rest.records[k], all.records[i + 1 + k])) std::abort();
    }
  }
  return 0;
}
