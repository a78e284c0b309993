#include "classify/rerank_prompt.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "tokenizer/special_tokens_map.hpp"

namespace warden::classify {

namespace {

std::vector<std::uint32_t> ids_without_specials(const tokenizer::Tokenizer& tokenizer, std::string_view text,
                                                std::optional<tokenizer::TruncationParams> truncation = {}) {
  tokenizer::EncodeOptions options;
  options.add_special_tokens = false;
  return tokenizer.encode(text, options, truncation).ids;
}

// The template with its placeholders filled in one pass, so that a query holding "{document}"
// stays as it is (Python's str.format, which the models' code uses, does the same).
std::string fill(std::string_view pattern, std::string_view instruction, std::string_view query,
                 std::string_view document) {
  const std::array<std::pair<std::string_view, std::string_view>, 3> values{
      {{"{instruction}", instruction}, {"{query}", query}, {"{document}", document}}};
  std::string out;
  out.reserve(pattern.size() + query.size() + document.size() + instruction.size());
  std::size_t i = 0;
  while (i < pattern.size()) {
    bool replaced = false;
    if (pattern[i] == '{') {
      for (const auto& [name, value] : values) {
        if (pattern.substr(i).starts_with(name)) {
          out += value;
          i += name.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += pattern[i++];
  }
  return out;
}

// `text` cut to at most `n` tokens from `direction`'s side, no special tokens.
std::vector<std::uint32_t> cut(const tokenizer::Tokenizer& tokenizer, std::string_view text, std::size_t n,
                               tokenizer::Direction direction) {
  if (n == 0) return {};
  tokenizer::TruncationParams t;
  t.max_length = n;
  t.direction = direction;
  return ids_without_specials(tokenizer, text, t);
}

void append(std::vector<std::uint32_t>& to, const std::vector<std::uint32_t>& ids) {
  to.insert(to.end(), ids.begin(), ids.end());
}

}  // namespace

RerankPrompt::RerankPrompt(RerankTemplate spec, const tokenizer::Tokenizer& tokenizer,
                           const std::filesystem::path& dir)
    : spec_(std::move(spec)),
      prefix_(ids_without_specials(tokenizer, spec_.prefix)),
      separator_(ids_without_specials(tokenizer, spec_.separator)) {
  for (const std::string& piece : spec_.suffix) append(suffix_, ids_without_specials(tokenizer, piece));
  if (spec_.bos) {
    // FlagEmbedding puts tokenizer.bos_token_id first when there is one that is not the pad.
    const tokenizer::SpecialTokensMap map = tokenizer::read_special_tokens_map(dir);
    if (map.bos && map.bos != map.pad) {
      bos_ = tokenizer.token_to_id(*map.bos);
      if (!bos_) {
        throw Error(ErrorKind::CorruptFile,
                    fmt::format("{}: the bos token \"{}\" is not in the tokenizer's vocabulary", dir.string(),
                                *map.bos));
      }
    }
  }
  for (const std::string& token : spec_.score_tokens) {
    std::optional<std::uint32_t> id;
    if (spec_.token_ids_by_text) {
      const std::vector<std::uint32_t> ids = ids_without_specials(tokenizer, token);
      if (!ids.empty()) id = ids.front();
    } else {
      id = tokenizer.token_to_id(token);
    }
    if (!id) {
      throw Error(
          ErrorKind::CorruptFile,
          fmt::format("{}: the tokenizer has no \"{}\" token, which the {} reranker template scores with",
                      dir.string(), token, spec_.name));
    }
    score_ids_.push_back(*id);
  }
}

std::vector<std::uint32_t> RerankPrompt::encode(const tokenizer::Tokenizer& tokenizer,
                                                std::string_view instruction, std::string_view query,
                                                std::string_view document,
                                                const tokenizer::EncodeOptions& options,
                                                std::optional<tokenizer::TruncationParams> truncation) const {
  if (instruction.empty()) instruction = spec_.default_instruction;
  return spec_.layout == RerankTemplate::Layout::Joint
             ? encode_joint(tokenizer, instruction, query, document, options, truncation)
             : encode_pair(tokenizer, instruction, query, document, truncation);
}

std::vector<std::uint32_t> RerankPrompt::encode_joint(
    const tokenizer::Tokenizer& tokenizer, std::string_view instruction, std::string_view query,
    std::string_view document, const tokenizer::EncodeOptions& options,
    std::optional<tokenizer::TruncationParams> truncation) const {
  // Qwen3's card: the body tokenized as any input, cut longest_first to the maximum less the
  // prefix and suffix.
  const std::size_t frame = prefix_.size() + suffix_.size();
  if (truncation) {
    if (truncation->max_length <= frame) {
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("the reranker's prompt alone takes {} tokens, more than the {} allowed", frame,
                              truncation->max_length));
    }
    truncation->max_length -= frame;
  }
  const tokenizer::Encoding body =
      tokenizer.encode(fill(spec_.body, instruction, query, document), options, truncation);
  std::vector<std::uint32_t> ids;
  ids.reserve(frame + body.ids.size());
  append(ids, prefix_);
  append(ids, body.ids);
  append(ids, suffix_);
  return ids;
}

std::vector<std::uint32_t> RerankPrompt::encode_pair(
    const tokenizer::Tokenizer& tokenizer, std::string_view instruction, std::string_view query,
    std::string_view document, std::optional<tokenizer::TruncationParams> truncation) const {
  const std::string query_text =
      fill(!instruction.empty() && !spec_.query_with_instruction.empty() ? spec_.query_with_instruction
                                                                         : spec_.query,
           instruction, query, document);
  const std::string document_text = fill(spec_.document, instruction, query, document);
  const std::size_t fixed = prefix_.size() + suffix_.size();
  std::vector<std::uint32_t> q, d;
  if (bos_) q.push_back(*bos_);
  if (!truncation) {
    append(q, ids_without_specials(tokenizer, query_text));
    d = ids_without_specials(tokenizer, document_text);
  } else {
    const std::size_t limit = truncation->max_length;
    if (limit <= fixed + q.size() + separator_.size()) {
      throw Error(ErrorKind::InvalidInput,
                  fmt::format("the reranker's prompt alone takes {} tokens, more than the {} allowed",
                              fixed + q.size() + separator_.size(), limit));
    }
    // The models' code: max_length shrunk to what the model's limit leaves beside the fixed
    // pieces (mxbai), the query cut to 3/4 of it and the document to all of it, then the pair
    // (query, separator + document) cut only_second to the pair budget.
    const std::size_t max_length = std::min(spec_.max_length == 0 ? limit : spec_.max_length, limit - fixed);
    append(q, cut(tokenizer, query_text, max_length * 3 / 4, truncation->direction));
    d = cut(tokenizer, document_text, max_length, truncation->direction);
    const std::size_t budget =
        std::min(max_length + (spec_.pair_budget_adds_suffix ? suffix_.size() : 0), limit - fixed);
    const std::size_t used = q.size() + separator_.size();
    if (used >= budget) {
      throw Error(
          ErrorKind::InvalidInput,
          fmt::format("the reranker's query takes {} of the {} tokens its pair may have", used, budget));
    }
    if (used + d.size() > budget) {
      const std::size_t keep = budget - used;
      if (truncation->direction == tokenizer::Direction::Right) {
        d.resize(keep);
      } else {
        d.erase(d.begin(), d.end() - static_cast<std::ptrdiff_t>(keep));
      }
    }
  }
  std::vector<std::uint32_t> ids;
  ids.reserve(fixed + q.size() + separator_.size() + d.size());
  append(ids, prefix_);
  append(ids, q);
  append(ids, separator_);
  append(ids, d);
  append(ids, suffix_);
  return ids;
}

}  // namespace warden::classify
