#include "embed/use_lite_embedder.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "embed/text_input.hpp"
#include "embed/token_rows.hpp"
#include "model/use_lite/use_lite_format.hpp"

// Where a package installs the converted model (cmake/WardenPackaging.cmake); empty in developer
// builds.
#ifndef WARDEN_USE_LITE_INSTALLED_DIR
#define WARDEN_USE_LITE_INSTALLED_DIR ""
#endif

namespace warden::embed {

namespace fs = std::filesystem;

namespace {

fs::path env_path(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? fs::path(v) : fs::path();
}

tokenizer::UseLiteTokenizer load_tokenizer(const fs::path& dir) {
  if (!fs::exists(dir / model::use_lite::kConfigFile)) {
    throw Error(ErrorKind::NotFound,
                fmt::format("no converted USE-lite model in {} (run scripts/fetch-use-lite --convert "
                            "build/release/bin/warden, or set WARDEN_USE_LITE_DIR)",
                            dir.string()));
  }
  return tokenizer::UseLiteTokenizer::from_file(dir / model::use_lite::kVocabFile);
}

}  // namespace

fs::path use_lite_cache_dir() {
  if (auto p = env_path("WARDEN_USE_LITE_CACHE"); !p.empty()) return p;
  fs::path base = env_path("XDG_CACHE_HOME");
  if (base.empty()) base = env_path("HOME") / ".cache";
  return base / "warden" / "use-lite";
}

fs::path use_lite_user_model_dir() {
  if (auto p = env_path("WARDEN_USE_LITE_DIR"); !p.empty()) return p;
  return use_lite_cache_dir() / "model";
}

fs::path use_lite_model_dir() {
  fs::path dir = use_lite_user_model_dir();
  // A packaged build (WARDEN_PACKAGE) also knows where the package installed the model, so
  // the installed binary needs no environment. The user's own folder still comes first, as a
  // user's XDG data comes before the system's.
  const fs::path installed = WARDEN_USE_LITE_INSTALLED_DIR;
  if (!installed.empty() && env_path("WARDEN_USE_LITE_DIR").empty() && !is_use_lite_model(dir) &&
      is_use_lite_model(installed)) {
    return installed;
  }
  return dir;
}

bool is_use_lite_model(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / model::use_lite::kConfigFile, ec);
}

UseLiteEmbedder::UseLiteEmbedder(const fs::path& dir, ThreadPool* pool, Precision precision)
    : tokenizer_(load_tokenizer(dir)), pool_(pool) {
  model_ = model::use_lite::UseLiteModel::load(dir, pool, precision);
  if (tokenizer_.vocab_size() > model_->config().vocab) {
    throw Error(ErrorKind::CorruptFile, fmt::format("{}: {} pieces but only {} embedding rows", dir.string(),
                                                    tokenizer_.vocab_size(), model_->config().vocab));
  }
}

UseLiteEmbedder::~UseLiteEmbedder() = default;

std::vector<std::uint32_t> UseLiteEmbedder::truncated(std::vector<std::uint32_t> ids,
                                                      const InputOptions& options) const {
  const std::size_t max = max_input_tokens();
  if (ids.size() <= max) return ids;
  if (!options.truncate) {
    throw Error(ErrorKind::InvalidInput,
                fmt::format("input has {} tokens, more than the model's maximum of {}", ids.size(), max));
  }
  if (options.side == TruncationSide::Left) {
    ids.erase(ids.begin(), ids.end() - static_cast<std::ptrdiff_t>(max));
  } else {
    ids.resize(max);  // what the graph's ClipToMaxLength does
  }
  return ids;
}

PreparedInput UseLiteEmbedder::prepare(std::string_view text, const InputOptions& options) const {
  std::string joined;
  const std::string_view input = with_prompt(text, options.prompt, joined);
  PreparedInput p;
  // Truncating, only what can be kept is tokenized (a long text in a window).
  const tokenizer::Direction side =
      options.side == TruncationSide::Left ? tokenizer::Direction::Left : tokenizer::Direction::Right;
  bool windowed = false;
  std::vector<std::uint32_t> ids = options.truncate
                                       ? tokenizer_.encode_kept(input, max_input_tokens(), side, &windowed)
                                       : tokenizer_.encode(input);
  const std::size_t full = ids.size();
  p.ids = truncated(std::move(ids), options);
  p.tokens = p.ids.size();
  if (!options.prompt.empty()) {
    // The prompt's pieces (as it tokenizes alone) left at the front: a left truncation may
    // have cut some of them (all, when the window read starts past them).
    const std::size_t prompt_pieces = tokenizer_.encode(options.prompt).size();
    const std::size_t cut_front = options.truncate && options.side == TruncationSide::Left
                                      ? (windowed ? prompt_pieces : full - p.ids.size())
                                      : 0;
    p.prompt_tokens = std::min(prompt_pieces > cut_front ? prompt_pieces - cut_front : 0, p.ids.size());
  }
  return p;
}

PreparedInput UseLiteEmbedder::prepare_ids(std::span<const std::uint32_t> ids,
                                           const InputOptions& options) const {
  if (!options.prompt.empty()) {
    throw Error(ErrorKind::InvalidInput,
                "a prompt cannot be prepended to token ids: include the prompt's tokens in the ids");
  }
  const std::size_t vocab = model_->config().vocab;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= vocab) {
      throw Error(
          ErrorKind::InvalidInput,
          fmt::format("token id {} (position {}) is outside the vocabulary of {} tokens", ids[i], i, vocab));
    }
  }
  PreparedInput p;
  p.ids = truncated({ids.begin(), ids.end()}, options);
  p.tokens = p.ids.size();
  return p;
}

void UseLiteEmbedder::embed_prepared(std::span<const PreparedInput* const> inputs,
                                     std::span<float> out) const {
  if (out.size() != inputs.size() * dim()) {
    throw Error(ErrorKind::Internal, fmt::format("embed_prepared: {} floats for {} inputs of {}", out.size(),
                                                 inputs.size(), dim()));
  }
  if (inputs.empty()) return;
  model::engine::TokenBatch batch;
  for (const PreparedInput* p : inputs) batch.add(p->ids);
  model_->validate(batch);
  thread_local model::use_lite::UseLiteWorkspace workspace;
  model_->embed(batch, workspace, pool_, out);
}

std::vector<Embeddings> UseLiteEmbedder::embed_tokens(std::span<const PreparedInput* const> inputs) const {
  if (inputs.empty()) return {};
  model::engine::TokenBatch batch;
  for (const PreparedInput* p : inputs) batch.add(p->ids);
  model_->validate(batch);
  const std::size_t h = dim();
  std::vector<float> states(batch.tokens() * h);
  thread_local model::use_lite::UseLiteWorkspace workspace;
  model_->token_states(batch, workspace, pool_, states);
  return detail::split_token_rows(states, batch, h);
}

std::vector<TokenInfo> UseLiteEmbedder::tokenize(std::string_view text, const InputOptions& options) const {
  std::string joined;
  const std::string_view input = with_prompt(text, options.prompt, joined);
  std::vector<tokenizer::UseLiteTokenizer::Token> tokens = tokenizer_.encode_with_offsets(input);
  const std::size_t max = max_input_tokens();
  if (tokens.size() > max) {
    if (!options.truncate) {
      throw Error(
          ErrorKind::InvalidInput,
          fmt::format("input has {} tokens, more than the model's maximum of {}", tokens.size(), max));
    }
    if (options.side == TruncationSide::Left) {
      tokens.erase(tokens.begin(), tokens.end() - static_cast<std::ptrdiff_t>(max));
    } else {
      tokens.resize(max);
    }
  }
  std::vector<TokenInfo> out;
  out.reserve(tokens.size());
  for (const auto& t : tokens) {
    out.push_back(TokenInfo{t.id, tokenizer_.piece(t.id), false, t.begin, t.end});
  }
  return out;
}

std::string UseLiteEmbedder::decode(std::span<const std::uint32_t> ids, bool skip_special_tokens) const {
  std::string out;
  for (const std::uint32_t id : ids) {
    if (id >= tokenizer_.vocab_size()) {
      throw Error(ErrorKind::InvalidInput, fmt::format("token id {} is outside the vocabulary of {} pieces",
                                                       id, tokenizer_.vocab_size()));
    }
    // <s>, </s> and the extra ids are control pieces the tokenizer never produces.
    if (skip_special_tokens && id != tokenizer::UseLiteTokenizer::kUnknownId &&
        id < tokenizer::UseLiteTokenizer::kFirstSearchableId) {
      continue;
    }
    out += tokenizer_.piece(id);
  }
  // "▁" marks a space; the tokenizer adds one at the front, which decoding drops.
  constexpr std::string_view kSpaceMark = "\u2581";
  std::string text;
  text.reserve(out.size());
  for (std::size_t pos = 0; pos < out.size();) {
    if (out.compare(pos, kSpaceMark.size(), kSpaceMark) == 0) {
      text.push_back(' ');
      pos += kSpaceMark.size();
    } else {
      text.push_back(out[pos++]);
    }
  }
  if (!text.empty() && text.front() == ' ') text.erase(0, 1);
  return text;
}

}  // namespace warden::embed
