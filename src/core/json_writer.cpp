#include "core/json_writer.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace warden {

void append_json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto u_escape = [&out](unsigned unit) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(unit >> shift) & 0xFU]);
  };
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80U && ensure_ascii) {
      const char32_t cp = utf8::next(s, i);
      if (cp >= 0x10000U) {  // UTF-16 surrogate pair, as Python writes it
        const auto v = static_cast<unsigned>(cp - 0x10000U);
        u_escape(0xD800U + (v >> 10));
        u_escape(0xDC00U + (v & 0x3FFU));
      } else {
        u_escape(static_cast<unsigned>(cp));
      }
      continue;
    }
    // U+0085, U+2028 and U+2029 are valid raw in JSON strings but are line breaks to
    // JavaScript and to line-based readers (JSON lines, log shippers): always escaped.
    if (c == 0xC2U && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85U) {
      u_escape(0x85U);
      i += 2;
      continue;
    }
    if (c == 0xE2U && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80U &&
        (static_cast<unsigned char>(s[i + 2]) == 0xA8U || static_cast<unsigned char>(s[i + 2]) == 0xA9U)) {
      u_escape(0x2000U + static_cast<unsigned char>(s[i + 2]) - 0x80U);
      i += 3;
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20U) {
          u_escape(c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

void JsonWriter::newline_and_indent() {
  out_.push_back('\n');
  out_.append(stack_.size() * static_cast<std::size_t>(options_.indent), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  Level& level = stack_.back();
  if (level.is_object) throw Error(ErrorKind::Internal, "JsonWriter: value inside an object needs a key");
  if (!level.empty) out_.push_back(',');
  level.empty = false;
  if (options_.indent >= 0) newline_and_indent();
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (stack_.empty() || !stack_.back().is_object || after_key_) {
    throw Error(ErrorKind::Internal, "JsonWriter: key outside an object");
  }
  Level& level = stack_.back();
  if (!level.empty) out_.push_back(',');
  level.empty = false;
  if (options_.indent >= 0) newline_and_indent();
  write_string(name);
  out_ += options_.indent >= 0 ? ": " : ":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_.push_back('{');
  stack_.push_back({true, true});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_.push_back('[');
  stack_.push_back({false, true});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  if (stack_.empty() || !stack_.back().is_object || after_key_) {
    throw Error(ErrorKind::Internal, "JsonWriter: unbalanced end_object");
  }
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty && options_.indent >= 0) newline_and_indent();
  out_.push_back('}');
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  if (stack_.empty() || stack_.back().is_object) {
    throw Error(ErrorKind::Internal, "JsonWriter: unbalanced end_array");
  }
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty && options_.indent >= 0) newline_and_indent();
  out_.push_back(']');
  return *this;
}

void JsonWriter::write_string(std::string_view s) {
  append_json_string(out_, s, options_.ensure_ascii);
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  write_string(s);
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(std::nullptr_t) {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t v) {
  before_value();
  fmt::format_to(std::back_inserter(out_), "{}", v);
  return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t v) {
  before_value();
  fmt::format_to(std::back_inserter(out_), "{}", v);
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) {
    out_ += "null";
  } else if (v == std::floor(v) && std::fabs(v) < 1e16) {
    // Integral doubles keep a ".0" so they read back as floats, as Python writes them.
    fmt::format_to(std::back_inserter(out_), "{:.1f}", v);
  } else {
    fmt::format_to(std::back_inserter(out_), "{}", v);
  }
  return *this;
}

JsonWriter& JsonWriter::value(float v) {
  before_value();
  if (!std::isfinite(v)) {
    out_ += "null";
  } else if (v == std::floor(v) && std::fabs(v) < 1e7F) {
    fmt::format_to(std::back_inserter(out_), "{:.1f}", v);
  } else {
    fmt::format_to(std::back_inserter(out_), "{}", v);
  }
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

}  // namespace warden
