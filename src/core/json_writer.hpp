#pragma once
// A small streaming JSON writer. Compact by default; with an indent it lays out exactly as
// Python's json.dumps(indent=N) and serde_json's pretty printer do, which is how the
// HuggingFace files we generate (config.json, tokenizer.json) look on disk.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace warden {

class JsonWriter {
 public:
  struct Options {
    int indent = -1;            // < 0: compact
    bool ensure_ascii = false;  // escape non-ASCII as \uXXXX (Python's default)
  };
  JsonWriter() = default;
  explicit JsonWriter(Options options) : options_(options) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b);
  JsonWriter& value(std::nullptr_t);
  JsonWriter& value(std::int64_t v);
  JsonWriter& value(std::uint64_t v);
  JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& value(unsigned v) { return value(static_cast<std::uint64_t>(v)); }
  // Shortest text that reads back to the same double; non-finite values become null.
  JsonWriter& value(double v);
  // Shortest text that reads back to the same float (so 0.1f prints as 0.1).
  JsonWriter& value(float v);
  // Raw, already-serialised JSON (the caller vouches for it).
  JsonWriter& raw(std::string_view json);

  [[nodiscard]] const std::string& str() const noexcept { return out_; }
  [[nodiscard]] std::string take() noexcept { return std::move(out_); }

 private:
  void before_value();
  void newline_and_indent();
  void write_string(std::string_view s);

  struct Level {
    bool is_object;
    bool empty;
  };
  Options options_{};
  std::string out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
};

// Appends s to out as a JSON string literal (quotes included).
void append_json_string(std::string& out, std::string_view s, bool ensure_ascii = false);

}  // namespace warden
