// The Tokenizer: runs the pipeline (added tokens -> normalizer -> pre-tokenizer -> model),
// then truncation, the post-processor and padding, and converts offsets to code points.

#include "tokenizer/tokenizer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "tokenizer/internal.hpp"
#include "tokenizer/text_window.hpp"

namespace warden::tokenizer {

using namespace detail;

namespace detail {

const AddedToken* Pipeline::added_by_id(std::uint32_t id) const {
  const auto it = std::lower_bound(added_ids_sorted.begin(), added_ids_sorted.end(), id);
  if (it == added_ids_sorted.end() || *it != id) return nullptr;
  return &added[added_index_sorted[static_cast<std::size_t>(it - added_ids_sorted.begin())]];
}

std::optional<std::string_view> Pipeline::id_to_token(std::uint32_t id) const {
  if (const AddedToken* t = added_by_id(id)) return std::string_view(t->content);
  return model->id_to_token(id);
}

std::optional<std::uint32_t> Pipeline::token_to_id(std::string_view token) const {
  if (auto i = added_vocab.find(token)) return added[*i].id;
  return model->token_to_id(token);
}

namespace {

// Identity NormText for text[b, e): every byte maps to its whole character.
void identity(std::string_view text, std::size_t b, std::size_t e, NormText& out) {
  out.clear();
  out.bytes.assign(text.data() + b, e - b);
  out.align.resize(e - b);
  for (std::size_t pos = b; pos < e;) {
    const auto c = static_cast<unsigned char>(text[pos]);
    const std::size_t n = c < 0x80 ? 1 : (c < 0xE0 ? 2 : (c < 0xF0 ? 3 : 4));
    const Align a{static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(pos + n)};
    for (std::size_t k = 0; k < n; ++k) out.align[pos - b + k] = a;
    pos += n;
  }
}

// Byte offsets -> code point offsets for the tokens of one input, with HF's
// BytesToCharOffsetConverter semantics: a byte maps to the index of the character that
// contains it (an offset inside a character rounds down), the end of the text maps to the
// character count.
void to_char_offsets(std::string_view text, Enc& e, std::vector<std::uint32_t>& table) {
  bool ascii = true;
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    std::copy(e.offsets.begin(), e.offsets.end(), e.char_offsets.begin());
    return;
  }
  table.resize(text.size() + 1);
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0U) != 0x80U) ++count;
    table[i] = count - 1;
  }
  table[text.size()] = count;
  for (std::size_t i = 0; i < e.offsets.size(); ++i) {
    e.char_offsets[i] = Offset{table[std::min<std::size_t>(e.offsets[i].begin, text.size())],
                               table[std::min<std::size_t>(e.offsets[i].end, text.size())]};
  }
}

}  // namespace

void Pipeline::encode_one(std::string_view text, std::int8_t seq, Enc& out, Workspace& ws) const {
  ws.text.clear();
  ws.pieces.clear();
  auto& raw = ws.pieces_tmp;
  raw.clear();
  if (raw_matcher.empty()) {
    if (!text.empty()) raw.push_back(Piece{0, static_cast<std::uint32_t>(text.size()), -1, {}});
  } else {
    raw_matcher.split(text, raw);
  }
  // pieces_tmp is reused by the pre-tokenizers, so walk a copy of the raw split.
  auto& raw_pieces = t_raw;
  raw_pieces.assign(raw.begin(), raw.end());
  for (const Piece& r : raw_pieces) {
    const auto at = static_cast<std::uint32_t>(ws.text.size());
    if (r.added_id >= 0) {
      ws.pieces.push_back(Piece{at, at, r.added_id, Align{r.begin, r.end}});
      continue;
    }
    NormText& seg = ws.segment;
    identity(text, r.begin, r.end, seg);
    if (normalizer) normalizer->normalize(seg, ws);
    if (norm_matcher.empty()) {
      ws.text.append_range(seg, 0, seg.size());
      if (seg.size() > 0) ws.pieces.push_back(Piece{at, static_cast<std::uint32_t>(ws.text.size()), -1, {}});
      continue;
    }
    auto& sub = t_sub;
    sub.clear();
    norm_matcher.split(seg.bytes, sub);
    for (const Piece& q : sub) {
      const auto base = static_cast<std::uint32_t>(ws.text.size());
      if (q.added_id >= 0) {
        ws.pieces.push_back(
            Piece{base, base, q.added_id, Align{seg.align[q.begin].start, seg.align[q.end - 1].end}});
      } else {
        ws.text.append_range(seg, q.begin, q.end);
        ws.pieces.push_back(Piece{base, static_cast<std::uint32_t>(ws.text.size()), -1, {}});
      }
    }
  }
  if (pre_tokenizer) pre_tokenizer->pre_tokenize(ws);
  for (const Piece& p : ws.pieces) {
    if (p.added_id >= 0) {
      const auto id = static_cast<std::uint32_t>(p.added_id);
      const AddedToken* t = added_by_id(id);
      // HF reports the matched text (with any lstrip/rstrip spaces) as the token.
      const std::string_view value = (t != nullptr && t->normalized)
                                         ? std::string_view(t->content)
                                         : text.substr(p.orig.start, p.orig.end - p.orig.start);
      out.push(id, static_cast<std::uint32_t>(seq), Offset{p.orig.start, p.orig.end}, false, seq, value);
      out.special.back() = 2;  // not in HF's special_tokens_mask, but trimmed by its text
      continue;
    }
    if (p.begin == p.end) continue;
    ws.tokens.clear();
    model->tokenize(ws.text, p.begin, p.end, ws.tokens, ws);
    for (const Token& t : ws.tokens) {
      // A token is never empty; the guard keeps a hostile model file from reading out of range.
      const Offset off = t.end > t.begin && t.end <= ws.text.size()
                             ? Offset{ws.text.align[t.begin].start, ws.text.align[t.end - 1].end}
                             : Offset{};
      out.push(t.id, static_cast<std::uint32_t>(seq), off, false, seq,
               out.with_tokens ? model->token_string(t, ws.text) : std::string_view{});
    }
  }
  to_char_offsets(text, out, ws.u32a);
}

thread_local std::vector<Piece> Pipeline::t_raw;
thread_local std::vector<Piece> Pipeline::t_sub;

}  // namespace detail

namespace {

thread_local Workspace t_ws;
thread_local std::vector<Enc> t_encs;
thread_local std::vector<Enc*> t_enc_ptrs;

void truncate_encodings(std::vector<Enc*>& encs, TruncationParams params) {
  if (params.max_length == 0) {
    for (Enc* e : encs) e->truncate(0, params.direction);
    return;
  }
  std::size_t total = 0;
  for (const Enc* e : encs) total += e->size();
  if (total <= params.max_length) return;
  const std::size_t to_remove = total - params.max_length;
  auto longest_first = [&] {
    if (encs.size() == 1) {
      encs[0]->truncate(params.max_length, params.direction);
      return;
    }
    std::size_t n1 = encs[0]->size();
    std::size_t n2 = encs[1]->size();
    const bool swap = n1 > n2;
    if (swap) std::swap(n1, n2);
    if (n1 > params.max_length) {
      n2 = n1;
    } else {
      n2 = std::max(n1, params.max_length - n1);
    }
    if (n1 + n2 > params.max_length) {
      n1 = params.max_length / 2;
      n2 = n1 + params.max_length % 2;
    }
    if (swap) std::swap(n1, n2);
    encs[0]->truncate(n1, params.direction);
    encs[1]->truncate(n2, params.direction);
  };
  switch (params.strategy) {
    case TruncationStrategy::LongestFirst:
      longest_first();
      return;
    case TruncationStrategy::OnlyFirst:
    case TruncationStrategy::OnlySecond: {
      const std::size_t idx = params.strategy == TruncationStrategy::OnlyFirst ? 0 : 1;
      if (idx >= encs.size()) {
        if (params.fallback_to_longest_first) {
          longest_first();
          return;
        }
        throw Error(ErrorKind::InvalidArgument, "truncation only_second needs a text pair");
      }
      Enc& target = *encs[idx];
      if (target.size() > to_remove) {
        target.truncate(target.size() - to_remove, params.direction);
      } else if (params.fallback_to_longest_first) {
        longest_first();
      } else {
        throw Error(ErrorKind::InvalidInput,
                    "truncation error: the sequence to truncate is too short to respect max_length");
      }
      return;
    }
  }
}

// Byte offsets -> code point offsets, per input text.
void pad_one(Encoding& e, std::size_t target, const PaddingParams& p) {
  if (e.size() >= target) return;
  const std::size_t n = target - e.size();
  const bool with_tokens = e.tokens.size() == e.ids.size();
  auto pad = [&](auto& v, auto value) {
    using V = typename std::decay_t<decltype(v)>::value_type;
    if (p.direction == Direction::Right) {
      v.insert(v.end(), n, static_cast<V>(value));
    } else {
      v.insert(v.begin(), n, static_cast<V>(value));
    }
  };
  pad(e.ids, p.pad_id);
  pad(e.type_ids, p.pad_type_id);
  pad(e.attention_mask, 0);
  pad(e.special_tokens_mask, 1);
  pad(e.sequence_ids, -1);
  if (p.direction == Direction::Right) {
    e.offsets.insert(e.offsets.end(), n, Offset{});
    e.char_offsets.insert(e.char_offsets.end(), n, Offset{});
  } else {
    e.offsets.insert(e.offsets.begin(), n, Offset{});
    e.char_offsets.insert(e.char_offsets.begin(), n, Offset{});
  }
  if (with_tokens) {
    if (p.direction == Direction::Right) {
      e.tokens.insert(e.tokens.end(), n, p.pad_token);
    } else {
      e.tokens.insert(e.tokens.begin(), n, p.pad_token);
    }
  }
}

std::size_t padded_length(std::size_t longest, const PaddingParams& p) {
  std::size_t target = p.fixed_length.value_or(longest);
  if (p.pad_to_multiple_of > 0 && target % p.pad_to_multiple_of != 0) {
    target += p.pad_to_multiple_of - target % p.pad_to_multiple_of;
  }
  return target;
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Pipeline> pipeline) : p_(std::move(pipeline)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

namespace {

Encoding run(const Pipeline& p, std::string_view a, const std::string_view* b, EncodeOptions options,
             const std::optional<TruncationParams>& truncation) {
  utf8::require_valid(a, b != nullptr ? "text a" : "text");
  if (b != nullptr) utf8::require_valid(*b, "text b");
  Workspace& ws = t_ws;
  // The per-input encodings live in the thread's workspace and keep their capacity, so
  // the only allocations of a call are the exact-size vectors of the returned Encoding.
  auto& pool = t_encs;
  pool.resize(2);
  auto& encs = t_enc_ptrs;
  encs.clear();
  encs.push_back(&pool[0]);
  if (b != nullptr) encs.push_back(&pool[1]);
  std::optional<TruncationParams> t = truncation;
  if (t) {
    const std::size_t added =
        (options.add_special_tokens && p.post_processor) ? p.post_processor->added_tokens(b != nullptr) : 0;
    t->max_length = t->max_length > added ? t->max_length - added : 0;
  }
  for (std::size_t i = 0; i < encs.size(); ++i) {
    Enc& enc = *encs[i];
    const std::string_view text = i == 0 ? a : *b;
    const auto seq = static_cast<std::int8_t>(i);
    enc.clear();
    enc.with_tokens = options.with_tokens;
    enc.text = text;
    if (!t) {
      p.encode_one(text, seq, enc, ws);
      continue;
    }
    // No input keeps more than max_length tokens, whatever the strategy, and the strategies
    // decide the same on any count at or above it: tokenize only what can be kept.
    const TextWindow w = encode_enough(text, t->max_length, t->direction, [&](TextWindow window) {
      enc.clear();
      p.encode_one(text.substr(window.begin, window.end - window.begin), seq, enc, ws);
      return enc.size();
    });
    if (w.begin > 0) {
      enc.shift_offsets(static_cast<std::uint32_t>(w.begin),
                        static_cast<std::uint32_t>(utf8::code_points(text.substr(0, w.begin))));
    }
  }
  if (t) truncate_encodings(encs, *t);
  if (p.post_processor) p.post_processor->process(encs, options.add_special_tokens, p);
  for (std::size_t i = 1; i < encs.size(); ++i) encs[0]->append(*encs[i]);
  const Enc& m = *encs[0];

  Encoding e;
  const std::size_t n = m.size();
  e.ids.assign(m.ids.begin(), m.ids.end());
  e.type_ids.assign(m.type_ids.begin(), m.type_ids.end());
  e.offsets.assign(m.offsets.begin(), m.offsets.end());
  e.special_tokens_mask.resize(n);
  for (std::size_t i = 0; i < n; ++i) e.special_tokens_mask[i] = m.special[i] == 1 ? 1 : 0;
  e.sequence_ids.assign(m.seq.begin(), m.seq.end());
  if (options.with_tokens) e.tokens.assign(m.tokens.begin(), m.tokens.end());
  e.attention_mask.assign(n, 1);
  e.char_offsets.assign(m.char_offsets.begin(), m.char_offsets.end());
  if (p.padding) pad_one(e, padded_length(n, *p.padding), *p.padding);
  return e;
}

}  // namespace

Encoding Tokenizer::encode(std::string_view text, EncodeOptions options) const {
  return run(*p_, text, nullptr, options, p_->truncation);
}

Encoding Tokenizer::encode(std::string_view text, EncodeOptions options,
                           const std::optional<TruncationParams>& truncation) const {
  return run(*p_, text, nullptr, options, truncation);
}

Encoding Tokenizer::encode_pair(std::string_view a, std::string_view b, EncodeOptions options) const {
  return run(*p_, a, &b, options, p_->truncation);
}

Encoding Tokenizer::encode_pair(std::string_view a, std::string_view b, EncodeOptions options,
                                const std::optional<TruncationParams>& truncation) const {
  return run(*p_, a, &b, options, truncation);
}

std::vector<Encoding> Tokenizer::encode_batch(std::span<const std::string_view> texts,
                                              EncodeOptions options) const {
  std::vector<Encoding> out;
  out.reserve(texts.size());
  for (const auto t : texts) out.push_back(encode(t, options));
  pad(out);
  return out;
}

std::vector<Encoding> Tokenizer::encode_pair_batch(
    std::span<const std::pair<std::string_view, std::string_view>> pairs, EncodeOptions options) const {
  std::vector<Encoding> out;
  out.reserve(pairs.size());
  for (const auto& [a, b] : pairs) out.push_back(encode_pair(a, b, options));
  pad(out);
  return out;
}

void Tokenizer::pad(std::span<Encoding> batch) const {
  if (!p_->padding) return;
  std::size_t longest = 0;
  for (const auto& e : batch) longest = std::max(longest, e.size());
  const std::size_t target = padded_length(longest, *p_->padding);
  for (auto& e : batch) pad_one(e, target, *p_->padding);
}

std::string Tokenizer::decode(std::span<const std::uint32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const auto id : ids) {
    const AddedToken* added = p_->added_by_id(id);
    if (added != nullptr) {
      if (skip_special_tokens && added->special) continue;
      tokens.push_back(added->content);
      continue;
    }
    const auto t = p_->model->id_to_token(id);
    if (!t) throw Error(ErrorKind::InvalidInput, fmt::format("token id {} is not in the vocabulary", id));
    tokens.emplace_back(*t);
  }
  if (p_->decoder) {
    p_->decoder->decode_chain(tokens);
    std::string out;
    for (const auto& t : tokens) out += t;
    return out;
  }
  std::string out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) out += ' ';
    out += tokens[i];
  }
  return out;
}

std::optional<std::uint32_t> Tokenizer::token_to_id(std::string_view token) const {
  return p_->token_to_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(std::uint32_t id) const {
  auto t = p_->id_to_token(id);
  if (!t) return std::nullopt;
  return std::string(*t);
}

std::size_t Tokenizer::vocab_size() const {
  std::size_t n = p_->model->vocab_size();
  for (const auto& t : p_->added) {
    if (!p_->model->token_to_id(t.content)) ++n;
  }
  return n;
}

std::vector<std::string> Tokenizer::vocabulary() const {
  std::vector<std::pair<std::uint32_t, std::string>> by_id;
  const std::size_t n = p_->model->vocab_size();
  by_id.reserve(n + p_->added.size());
  for (std::size_t id = 0; id < n; ++id) {
    if (const auto t = p_->model->id_to_token(static_cast<std::uint32_t>(id)); t && !t->empty()) {
      by_id.emplace_back(static_cast<std::uint32_t>(id), std::string(*t));
    }
  }
  for (const auto& t : p_->added) {
    if (!p_->model->token_to_id(t.content)) by_id.emplace_back(t.id, t.content);
  }
  std::stable_sort(by_id.begin(), by_id.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  out.reserve(by_id.size());
  for (auto& [id, token] : by_id) out.push_back(std::move(token));
  return out;
}

std::optional<std::uint32_t> Tokenizer::model_unk_id() const {
  return p_->model->unk_id();
}

const std::optional<TruncationParams>& Tokenizer::truncation() const noexcept {
  return p_->truncation;
}
void Tokenizer::set_truncation(std::optional<TruncationParams> params) {
  p_->truncation = std::move(params);
}
const std::optional<PaddingParams>& Tokenizer::padding() const noexcept {
  return p_->padding;
}
void Tokenizer::set_padding(std::optional<PaddingParams> params) {
  p_->padding = std::move(params);
}

}  // namespace warden::tokenizer
