#include "guard/probe_file.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/fnv1a.hpp"
#include "core/utf8.hpp"

namespace warden::guard {

namespace {

constexpr std::string_view kMagic = "warden-guard-probe 3";
constexpr std::size_t kMaxDim = 1 << 16;
constexpr std::size_t kMaxFeatures = 64;

std::string hex_double(double v) {
  return fmt::format("{:016x}", std::bit_cast<std::uint64_t>(v));
}

void append_hex(std::string& out, std::string_view bytes) {
  constexpr char kDigits[] = "0123456789abcdef";
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kDigits[b >> 4U];
    out += kDigits[b & 15U];
  }
}

// The lines of the body, each checked and read in order.
class Lines {
 public:
  Lines(std::string_view body, std::string_view source) : rest_(body), source_(source) {}

  [[noreturn]] void fail(std::string_view what) const {
    throw Error(ErrorKind::InvalidInput, fmt::format("{}: line {}: {}", source_, line_, what));
  }
  std::string_view next() {
    if (rest_.empty()) fail("the file ends early");
    const std::size_t end = rest_.find('\n');
    if (end == std::string_view::npos) fail("the file ends without a newline");
    const std::string_view line = rest_.substr(0, end);
    rest_.remove_prefix(end + 1);
    ++line_;
    return line;
  }
  // The value of a "name value" line.
  std::string_view field(std::string_view name) {
    const std::string_view line = next();
    if (line.size() <= name.size() || line.substr(0, name.size()) != name || line[name.size()] != ' ') {
      fail(fmt::format("expected \"{} ...\"", name));
    }
    return line.substr(name.size() + 1);
  }
  std::uint64_t hex64(std::string_view s, std::string_view what) const {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc{} || end != s.data() + s.size() || s.size() != 16)
      fail(fmt::format("malformed {}", what));
    return v;
  }
  double finite(std::string_view s, std::string_view what) const {
    const double v = std::bit_cast<double>(hex64(s, what));
    if (!std::isfinite(v)) fail(fmt::format("{} is not a finite number", what));
    return v;
  }
  std::size_t count(std::string_view s, std::size_t max, std::string_view what) const {
    std::size_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || v > max) {
      fail(fmt::format("{} must be a count of at most {}", what, max));
    }
    return v;
  }
  [[nodiscard]] std::size_t remaining() const { return rest_.size(); }

 private:
  std::string_view rest_;
  std::string_view source_;
  std::size_t line_ = 1;  // the magic was line 1
};

// Lowercase hex digits' values, -1 for every other byte: one load per digit (a start with a
// cached fit decodes eight million of them).
constexpr std::array<std::int8_t, 256> kHexValues = [] {
  std::array<std::int8_t, 256> t{};
  t.fill(-1);
  for (int c = '0'; c <= '9'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::int8_t>(c - 'a' + 10);
  return t;
}();

int hex_value(char c) {
  return kHexValues[static_cast<unsigned char>(c)];
}

// Lowercase hex to bytes; false on an odd length or another character.
bool from_hex(std::string_view hex, std::string& out) {
  if (hex.size() % 2 != 0) return false;
  out.resize(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = hex_value(hex[2 * i]);
    const int lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<char>((hi << 4) | lo);
  }
  return true;
}

}  // namespace

std::string serialise_probe(const FittedProbe& p) {
  std::string s =
      fmt::format("{}\nembedder {}\ndim {}\nfeatures {}\nbank {:016x}\nl2 {}\nthreshold {}\nbias {}\nweights",
                  kMagic, p.embedder, p.dim, p.features, p.bank_key, hex_double(p.l2),
                  hex_double(static_cast<double>(p.threshold)), hex_double(p.model.bias));
  for (const double w : p.model.weights) s += ' ' + hex_double(w);
  s += fmt::format("\ncv {} {} {} {} {}\nexemplars {}\n", p.cv.texts, p.cv.attacks,
                   hex_double(p.cv.auc.value_or(-1.0)), hex_double(p.cv.recall),
                   hex_double(p.cv.false_positive_rate), p.texts.size());
  for (std::size_t i = 0; i < p.texts.size(); ++i) {
    s += p.attack[i] ? "A " : "B ";
    for (std::size_t j = 0; j < p.dim; ++j) {
      s += fmt::format("{:08x}", std::bit_cast<std::uint32_t>(p.rows[i * p.dim + j]));
    }
    s += ' ';
    append_hex(s, p.texts[i]);
    s += '\n';
  }
  s += fmt::format("checksum {:016x}\n", fnv1a(s));
  return s;
}

FittedProbe parse_probe(std::string_view bytes, std::string_view source) {
  const auto bad = [&](std::string_view what) {
    throw Error(ErrorKind::InvalidInput, fmt::format("{}: {}", source, what));
  };
  if (bytes.substr(0, kMagic.size() + 1) != fmt::format("{}\n", kMagic)) {
    bad(fmt::format("not a guard probe file (the first line is not \"{}\")", kMagic));
  }
  const std::size_t tail = bytes.rfind("\nchecksum ");
  if (tail == std::string_view::npos) bad("no checksum line: the file is truncated");
  if (bytes.substr(tail + 1) != fmt::format("checksum {:016x}\n", fnv1a(bytes.substr(0, tail + 1)))) {
    bad("the checksum does not match: the file is truncated or was changed");
  }
  Lines in(bytes.substr(kMagic.size() + 1, tail + 1 - (kMagic.size() + 1)), source);
  FittedProbe p;
  p.embedder = std::string(in.field("embedder"));
  p.dim = in.count(in.field("dim"), kMaxDim, "dim");
  if (p.dim == 0) in.fail("dim must be positive");
  p.features = in.count(in.field("features"), kMaxFeatures, "features");
  p.bank_key = in.hex64(in.field("bank"), "bank key");
  p.l2 = in.finite(in.field("l2"), "l2");
  const double threshold = in.finite(in.field("threshold"), "threshold");
  if (!(threshold >= 0.0 && threshold <= 1.0)) in.fail("the threshold must lie in [0, 1]");
  p.threshold = static_cast<float>(threshold);
  p.model.bias = in.finite(in.field("bias"), "bias");
  std::string_view weights = in.field("weights");
  const std::size_t n_weights = p.dim + p.features;
  if (weights.size() != n_weights * 17 - 1) in.fail(fmt::format("expected {} weights", n_weights));
  p.model.weights.reserve(n_weights);
  for (std::size_t j = 0; j < n_weights; ++j) {
    if (j > 0 && weights[17 * j - 1] != ' ') in.fail("malformed weights");
    p.model.weights.push_back(in.finite(weights.substr(17 * j, 16), "a weight"));
  }
  {
    const std::string_view cv = in.field("cv");
    std::vector<std::string_view> parts;
    for (std::size_t a = 0; a <= cv.size();) {
      const std::size_t b = std::min(cv.find(' ', a), cv.size());
      parts.push_back(cv.substr(a, b - a));
      a = b + 1;
    }
    if (parts.size() != 5) in.fail("expected \"cv TEXTS ATTACKS AUC RECALL FPR\"");
    p.cv.texts = in.count(parts[0], SIZE_MAX, "cv texts");
    p.cv.attacks = in.count(parts[1], p.cv.texts, "cv attacks");
    const double auc = in.finite(parts[2], "cv auc");
    if (auc >= 0.0) p.cv.auc = auc;
    p.cv.recall = in.finite(parts[3], "cv recall");
    p.cv.false_positive_rate = in.finite(parts[4], "cv false-positive rate");
  }
  // Each exemplar line holds at least its label and vector: the count cannot exceed what
  // the remaining bytes could hold.
  const std::size_t row_hex = p.dim * 8;
  const std::size_t n = in.count(in.field("exemplars"), in.remaining() / (row_hex + 4), "exemplars");
  p.texts.reserve(n);
  p.attack.reserve(n);
  p.rows.reserve(n * p.dim);
  std::string text;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view line = in.next();
    if (line.size() < 2 + row_hex + 1 || (line[0] != 'A' && line[0] != 'B') || line[1] != ' ' ||
        line[2 + row_hex] != ' ') {
      in.fail("expected \"A|B VECTOR TEXT\"");
    }
    for (std::size_t j = 0; j < p.dim; ++j) {
      // Eight lowercase hex digits, as serialise_probe writes them, decoded by hand: a server
      // start with a cached fit reads a million of them (std::from_chars took 20 ms).
      std::uint32_t bits = 0;
      int bad_digit = 0;
      for (std::size_t d = 0; d < 8; ++d) {
        const int v = hex_value(line[2 + 8 * j + d]);
        bad_digit |= v;  // any -1 sets the sign bit
        bits = (bits << 4) | static_cast<std::uint32_t>(v & 0xF);
      }
      const auto v = std::bit_cast<float>(bits);
      if (bad_digit < 0 || !std::isfinite(v)) in.fail("malformed vector");
      p.rows.push_back(v);
    }
    if (!from_hex(line.substr(3 + row_hex), text) || text.empty()) in.fail("malformed text");
    if (utf8::find_invalid(text)) in.fail("the text is not valid UTF-8");
    p.texts.push_back(text);
    p.attack.push_back(line[0] == 'A');
  }
  if (in.remaining() != 0) in.fail("unexpected lines after the exemplars");
  return p;
}

FittedProbe load_probe(const std::filesystem::path& path) {
  std::filesystem::path file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) file /= kProbeFileName;
  return parse_probe(read_file(file, kMaxProbeFileBytes), file.string());
}

}  // namespace warden::guard
