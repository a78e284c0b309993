#include "tokenizer/use_lite_tokenizer.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/utf8.hpp"
#include "tokenizer/internal.hpp"
#include "tokenizer/text_window.hpp"
#include "tokenizer/unicode.hpp"

namespace warden::tokenizer {

namespace {

constexpr char32_t kSpaceMark = U'\u2581';  // "▁"
// Far more than the 8,000 pieces the model has; bounds what a hostile file can make us hold.
constexpr std::size_t kMaxPieces = 1 << 20;
constexpr std::size_t kMaxPieceCodePoints = 1024;

std::uint64_t edge_key(std::uint32_t node, char32_t cp) noexcept {
  return (static_cast<std::uint64_t>(node) << 21) | static_cast<std::uint64_t>(cp);
}

}  // namespace

std::uint32_t UseLiteTokenizer::child(std::uint32_t node, char32_t cp) const noexcept {
  const auto it = edges_.find(edge_key(node, cp));
  return it == edges_.end() ? 0 : it->second;
}

void UseLiteTokenizer::insert(std::u32string_view piece, std::uint32_t id, double score) {
  std::uint32_t node = 0;
  for (const char32_t cp : piece) {
    std::uint32_t next = child(node, cp);
    if (next == 0) {
      next = static_cast<std::uint32_t>(nodes_.size());
      nodes_.emplace_back();
      edges_.emplace(edge_key(node, cp), next);
    }
    node = next;
  }
  // A later insert of the same piece overwrites the earlier one, as in the reference trie
  // ("”5" is listed three times; the last id wins).
  nodes_[node].id = static_cast<std::int32_t>(id);
  nodes_[node].score = score;
}

UseLiteTokenizer UseLiteTokenizer::from_json(std::string_view json, std::string_view source) {
  auto corrupt = [&](const std::string& what) {
    return Error(ErrorKind::CorruptFile, fmt::format("{}: {}", source, what));
  };
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (const auto err = parser.parse(json.data(), json.size()).get(root); err != simdjson::SUCCESS) {
    throw corrupt(fmt::format("not valid JSON ({})", simdjson::error_message(err)));
  }
  simdjson::dom::array entries;
  if (root.get_array().get(entries) != simdjson::SUCCESS) throw corrupt("the top level is not a JSON array");
  if (entries.size() <= kFirstSearchableId || entries.size() > kMaxPieces) {
    throw corrupt(fmt::format("{} pieces; expected more than {} and at most {}", entries.size(),
                              kFirstSearchableId, kMaxPieces));
  }
  UseLiteTokenizer t;
  t.pieces_.reserve(entries.size());
  t.piece_len_.reserve(entries.size());
  std::uint32_t id = 0;
  for (const simdjson::dom::element entry : entries) {
    simdjson::dom::array pair;
    if (entry.get_array().get(pair) != simdjson::SUCCESS || pair.size() != 2) {
      throw corrupt(fmt::format("entry {} is not a [piece, score] pair", id));
    }
    std::string_view piece;
    if (pair.at(0).get_string().get(piece) != simdjson::SUCCESS) {
      throw corrupt(fmt::format("entry {}: the piece is not a string", id));
    }
    utf8::require_valid(piece, fmt::format("{} entry {}", source, id));
    const simdjson::dom::element score_value = pair.at(1);
    // The reference does its arithmetic in JS, where a null score behaves as 0. Scores are
    // compared as doubles there, so they are kept as doubles here.
    double score = 0.0;
    if (!score_value.is_null()) {
      if (!score_value.is_number()) throw corrupt(fmt::format("entry {}: the score is not a number", id));
      double d = 0.0;
      std::int64_t i = 0;
      std::uint64_t u = 0;
      if (score_value.get_double().get(d) == simdjson::SUCCESS) {
        score = d;
      } else if (score_value.get_int64().get(i) == simdjson::SUCCESS) {
        score = static_cast<double>(i);
      } else if (score_value.get_uint64().get(u) == simdjson::SUCCESS) {
        score = static_cast<double>(u);
      }
    }
    const std::u32string cps = utf8::decode(piece);
    if (cps.size() > kMaxPieceCodePoints) throw corrupt(fmt::format("entry {}: the piece is too long", id));
    if (id >= kFirstSearchableId) {
      if (cps.empty()) throw corrupt(fmt::format("entry {}: empty piece", id));
      t.insert(cps, id, score);
    }
    t.pieces_.emplace_back(piece);
    // The reference steps back by the piece's UTF-16 length; with pieces inside the BMP
    // (all of this vocabulary's) that is its code-point count, and the lattice counts code
    // points. Pieces outside the BMP would break that equivalence, so they are refused.
    if (std::any_of(cps.begin(), cps.end(), [](char32_t c) { return c > 0xFFFF; })) {
      throw corrupt(fmt::format("entry {}: piece outside the Basic Multilingual Plane", id));
    }
    t.piece_len_.push_back(id == kUnknownId ? 1 : static_cast<std::uint32_t>(cps.size()));
    ++id;
  }
  return t;
}

UseLiteTokenizer UseLiteTokenizer::from_file(const std::filesystem::path& path) {
  return from_json(read_file(path), path.string());
}

std::vector<std::uint32_t> UseLiteTokenizer::encode(std::string_view text) const {
  return encode_impl(text, nullptr);
}

std::vector<std::uint32_t> UseLiteTokenizer::encode_kept(std::string_view text, std::size_t keep,
                                                         Direction side, bool* windowed) const {
  utf8::require_valid(text);  // the whole text, not only the window read
  std::vector<std::uint32_t> ids;
  const detail::TextWindow w = detail::encode_enough(text, keep, side, [&](detail::TextWindow window) {
    ids = encode_impl(text.substr(window.begin, window.end - window.begin), nullptr);
    return ids.size();
  });
  if (windowed != nullptr) *windowed = w.begin > 0;
  return ids;
}

std::vector<UseLiteTokenizer::Token> UseLiteTokenizer::encode_with_offsets(std::string_view text) const {
  std::vector<Token> tokens;
  (void)encode_impl(text, &tokens);
  return tokens;
}

std::vector<std::uint32_t> UseLiteTokenizer::encode_impl(std::string_view text,
                                                         std::vector<Token>* tokens) const {
  utf8::require_valid(text);
  // 1. NFKC, nothing else (no lowercasing, stripping or whitespace collapsing).
  detail::NormText norm;
  norm.bytes.assign(text);
  norm.align.assign(text.size(), detail::Align{});
  if (tokens != nullptr) {  // every byte maps to its whole character, for the offsets
    for (std::size_t pos = 0; pos < text.size();) {
      const std::size_t start = pos;
      (void)utf8::next(text, pos);
      for (std::size_t k = start; k < pos; ++k) {
        norm.align[k] = {static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(pos)};
      }
    }
  }
  detail::Workspace ws;
  detail::uni::normalize(norm, detail::uni::Form::NFKC, ws);
  // 2. An empty text has no tokens.
  if (norm.bytes.empty()) return {};
  // 3-4. One leading "▁", every U+0020 becomes "▁"; symbols are code points.
  std::u32string symbols = utf8::decode(norm.bytes);
  std::replace(symbols.begin(), symbols.end(), U' ', kSpaceMark);
  symbols.insert(symbols.begin(), kSpaceMark);
  const std::size_t n = symbols.size();

  // 5. The lattice, grouped by end position. Starts are visited in increasing order, so
  // each end's edges come out sorted by increasing start (longest piece first), the order
  // the reference's forward pass visits them in.
  struct Edge {
    std::uint32_t start;
    std::uint32_t id;
    double score;
  };
  std::vector<std::vector<Edge>> ending(n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    bool matched = false;
    std::uint32_t node = 0;
    for (std::size_t j = i; j < n; ++j) {
      node = child(node, symbols[j]);
      if (node == 0) break;
      if (nodes_[node].id >= 0) {
        ending[j + 1].push_back(
            {static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(nodes_[node].id), nodes_[node].score});
        matched = true;
      }
    }
    // Only when nothing at all matches here: one unknown symbol.
    if (!matched) ending[i + 1].push_back({static_cast<std::uint32_t>(i), kUnknownId, 0.0});
  }

  // 6. Forward pass. best == 0 means "unset" (so an exact 0 is overwritten by anything),
  // and ties go to the later edge, i.e. the shorter piece: both quirks of the reference.
  std::vector<double> best(n + 1, 0.0);
  std::vector<std::uint32_t> word(n + 1, kUnknownId);
  for (std::size_t e = 1; e <= n; ++e) {
    for (const Edge& edge : ending[e]) {
      const double s = edge.score + best[edge.start];
      if (best[e] == 0.0 || s >= best[e]) {
        best[e] = s;
        word[e] = edge.id;
      }
    }
  }

  // 7-8. Backtrack, merging runs of unknowns into one; 9. reverse. spans[k] is the symbol
  // range [first, second) of ids[k] (a merged run of unknowns covers all its symbols).
  std::vector<std::uint32_t> ids;
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  for (std::size_t it = n; it > 0;) {
    const std::uint32_t id = word[it];
    const std::size_t start = it - std::min<std::size_t>(it, piece_len_[id]);
    if (!(id == kUnknownId && !ids.empty() && ids.back() == kUnknownId)) {
      ids.push_back(id);
      if (tokens != nullptr) spans.emplace_back(start, it);
    } else if (tokens != nullptr) {
      spans.back().first = start;
    }
    it = start;
  }
  std::reverse(ids.begin(), ids.end());
  if (tokens == nullptr) return ids;

  // Symbol k >= 1 is code point k - 1 of the normalised text; symbol 0 is the added "▁".
  // Normalised bytes map back to the text's bytes through the alignment.
  std::reverse(spans.begin(), spans.end());
  std::vector<std::size_t> cp_byte(n);  // normalised byte where symbol k's code point starts; [n-1] = end
  for (std::size_t pos = 0, k = 0; pos < norm.bytes.size(); ++k) {
    cp_byte[k] = pos;
    (void)utf8::next(norm.bytes, pos);
  }
  cp_byte[n - 1] = norm.bytes.size();
  tokens->reserve(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) {
    Token t{ids[k], 0, 0};
    const std::size_t first = std::max<std::size_t>(spans[k].first, 1);
    const std::size_t last = spans[k].second;
    if (first < last) {
      t.begin = norm.align[cp_byte[first - 1]].start;
      t.end = norm.align[cp_byte[last - 1] - 1].end;
    }
    tokens->push_back(t);
  }
  return ids;
}

}  // namespace warden::tokenizer
