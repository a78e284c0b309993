// Loading: tokenizer.json, and the legacy BERT vocab.txt + tokenizer_config.json.

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/utf8.hpp"
#include "tokenizer/components.hpp"
#include "tokenizer/tokenizer.hpp"

namespace warden::tokenizer {

using namespace detail;

namespace detail {

void Pipeline::finish_added_tokens() {
  // Normalized added tokens are matched in normalized text, so their content is
  // normalized the same way first (as HF does).
  added_normalized.clear();
  added_normalized.reserve(added.size());
  Workspace ws;
  for (const auto& t : added) {
    AddedToken n = t;
    if (t.normalized && normalizer) {
      NormText text;
      text.bytes = t.content;
      text.align.assign(t.content.size(), Align{});
      normalizer->normalize(text, ws);
      n.content = text.bytes;
    }
    added_normalized.push_back(std::move(n));
  }
  raw_matcher.build(added, false);
  norm_matcher.build(added_normalized, true);
  added_vocab = VocabMap{};
  for (std::size_t i = 0; i < added.size(); ++i)
    added_vocab.insert(added[i].content, static_cast<std::uint32_t>(i));
  added_index_sorted.resize(added.size());
  std::iota(added_index_sorted.begin(), added_index_sorted.end(), 0U);
  std::stable_sort(added_index_sorted.begin(), added_index_sorted.end(),
                   [&](std::uint32_t x, std::uint32_t y) { return added[x].id < added[y].id; });
  added_ids_sorted.clear();
  for (const auto i : added_index_sorted) added_ids_sorted.push_back(added[i].id);
}

std::unique_ptr<Model> make_model(const json::Value& v) {
  std::string type;
  if (v.has("type")) {
    type = v.type_name("model");
  } else if (v.has("merges")) {
    type = "BPE";
  } else if (v.has("continuing_subword_prefix") || v.has("max_input_chars_per_word")) {
    type = "WordPiece";
  } else if (v.has("unk_id")) {
    type = "Unigram";
  }
  if (type == "WordPiece") return make_wordpiece_model(v);
  if (type == "Unigram") return make_unigram_model(v);
  if (type == "BPE") return make_bpe_model(v);
  if (type == "WordLevel") return make_wordlevel_model(v);
  throw Error(ErrorKind::Unsupported, fmt::format("tokenizer.json: unsupported model type '{}'", type));
}

std::unique_ptr<Pattern> make_pattern(const json::Value& v, std::string_view what) {
  if (auto s = v.find("String")) return make_string_pattern(std::string(s->as_string(what)));
  if (auto r = v.find("Regex")) return make_regex_pattern(r->as_string(what));
  throw Error(ErrorKind::Unsupported, fmt::format("tokenizer.json: {} has an unsupported pattern", what));
}

}  // namespace detail

namespace {

Direction parse_direction(std::string_view s) {
  if (s == "Right") return Direction::Right;
  if (s == "Left") return Direction::Left;
  throw Error(ErrorKind::CorruptFile, fmt::format("tokenizer.json: unknown direction '{}'", s));
}

}  // namespace

Tokenizer Tokenizer::from_json(std::string_view text) {
  simdjson::dom::parser parser;
  const json::Value root = json::parse(parser, text, "tokenizer.json");
  auto p = std::make_unique<Pipeline>();
  p->model = make_model(root.at("model"));
  if (auto n = root.find("normalizer")) p->normalizer = make_normalizer(*n);
  if (auto n = root.find("pre_tokenizer")) p->pre_tokenizer = make_pre_tokenizer(*n);
  if (auto n = root.find("post_processor")) p->post_processor = make_post_processor(*n);
  if (auto n = root.find("decoder")) p->decoder = make_decoder(*n);
  if (auto list = root.find("added_tokens")) {
    for (const auto& t : list->items()) {
      AddedToken a;
      const auto id = t.get_int("id");
      if (id < 0 || id > 0x7FFFFFFF)
        throw Error(ErrorKind::CorruptFile, "tokenizer.json: added token id out of range");
      a.id = static_cast<std::uint32_t>(id);
      a.content = t.get_string("content");
      utf8::require_valid(a.content, "tokenizer.json added token");
      a.single_word = t.get_bool("single_word", false);
      a.lstrip = t.get_bool("lstrip", false);
      a.rstrip = t.get_bool("rstrip", false);
      a.special = t.get_bool("special", false);
      a.normalized = t.get_bool("normalized", !a.special);
      p->added.push_back(std::move(a));
    }
  }
  p->finish_added_tokens();
  if (auto t = root.find("truncation")) {
    TruncationParams tp;
    tp.max_length = static_cast<std::size_t>(std::max<std::int64_t>(0, t->get_int("max_length")));
    const std::string strategy = t->get_string_or("strategy", "LongestFirst");
    if (strategy == "LongestFirst") {
      tp.strategy = TruncationStrategy::LongestFirst;
    } else if (strategy == "OnlyFirst") {
      tp.strategy = TruncationStrategy::OnlyFirst;
    } else if (strategy == "OnlySecond") {
      tp.strategy = TruncationStrategy::OnlySecond;
    } else {
      throw Error(ErrorKind::Unsupported,
                  fmt::format("tokenizer.json: unsupported truncation strategy '{}'", strategy));
    }
    tp.direction = parse_direction(t->get_string_or("direction", "Right"));
    p->truncation = tp;
  }
  if (auto pad = root.find("padding")) {
    PaddingParams pp;
    if (auto s = pad->find("strategy")) {
      if (s->is_object()) {
        if (auto f = s->find("Fixed"))
          pp.fixed_length = static_cast<std::size_t>(std::max<std::int64_t>(0, f->as_int("Fixed")));
      } else if (s->as_string("strategy") != "BatchLongest") {
        throw Error(ErrorKind::Unsupported, "tokenizer.json: unsupported padding strategy");
      }
    }
    pp.direction = parse_direction(pad->get_string_or("direction", "Right"));
    pp.pad_to_multiple_of = static_cast<std::size_t>(
        std::max<std::int64_t>(0, pad->get_optional_int("pad_to_multiple_of").value_or(0)));
    pp.pad_id = static_cast<std::uint32_t>(pad->get_optional_int("pad_id").value_or(0));
    pp.pad_type_id = static_cast<std::uint32_t>(pad->get_optional_int("pad_type_id").value_or(0));
    pp.pad_token = pad->get_string_or("pad_token", "[PAD]");
    p->padding = pp;
  }
  return Tokenizer(std::move(p));
}

Tokenizer Tokenizer::from_file(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  try {
    return from_json(text);
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("{}: {}", path.string(), e.what()));
  }
}

Tokenizer Tokenizer::from_bert_vocab(const std::filesystem::path& vocab_txt,
                                     const std::filesystem::path& config) {
  const std::string text = read_file(vocab_txt);
  utf8::require_valid(text, vocab_txt.string());
  std::vector<std::string> vocab;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    vocab.push_back(std::move(line));
    pos = nl + 1;
  }
  bool lower = true;
  std::optional<bool> strip;
  bool chinese = true;
  std::string unk = "[UNK]", cls = "[CLS]", sep = "[SEP]", pad = "[PAD]", mask = "[MASK]";
  std::optional<std::size_t> max_len;
  if (!config.empty() && std::filesystem::exists(config)) {
    const std::string cfg_text = read_file(config);
    simdjson::dom::parser parser;
    const json::Value cfg = json::parse(parser, cfg_text, config.string());
    lower = cfg.get_bool("do_lower_case", true);
    strip = cfg.get_optional_bool("strip_accents");
    chinese = cfg.get_bool("tokenize_chinese_chars", true);
    auto special = [&](std::string_view key, std::string& out) {
      if (auto v = cfg.find(key)) {
        if (v->is_string())
          out = std::string(v->as_string(key));
        else if (auto c = v->find("content"))
          out = std::string(c->as_string(key));
      }
    };
    special("unk_token", unk);
    special("cls_token", cls);
    special("sep_token", sep);
    special("pad_token", pad);
    special("mask_token", mask);
    if (auto m = cfg.find("model_max_length")) {
      const double d = m->as_double("model_max_length");
      if (d > 0 && d < 1e6) max_len = static_cast<std::size_t>(d);
    }
  }
  auto p = std::make_unique<Pipeline>();
  p->normalizer = make_bert_normalizer(true, chinese, strip.value_or(lower), lower);
  p->pre_tokenizer = make_bert_pre_tokenizer();
  p->model = make_wordpiece(std::move(vocab), unk, "##", 100);
  auto id_of = [&](const std::string& tok) {
    const auto id = p->model->token_to_id(tok);
    if (!id)
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: special token '{}' is not in the vocabulary", vocab_txt.string(), tok));
    return *id;
  };
  p->post_processor = make_bert_processing(cls, id_of(cls), sep, id_of(sep));
  for (const auto* tok : {&pad, &unk, &cls, &sep, &mask}) {
    if (auto id = p->model->token_to_id(*tok)) {
      AddedToken a;
      a.id = *id;
      a.content = *tok;
      a.special = true;
      p->added.push_back(std::move(a));
    }
  }
  p->finish_added_tokens();
  p->decoder = make_wordpiece_decoder("##", true);
  if (max_len) p->truncation = TruncationParams{*max_len};
  return Tokenizer(std::move(p));
}

Tokenizer Tokenizer::from_directory(const std::filesystem::path& dir) {
  if (std::filesystem::exists(dir / "tokenizer.json")) return from_file(dir / "tokenizer.json");
  if (std::filesystem::exists(dir / "vocab.txt"))
    return from_bert_vocab(dir / "vocab.txt", dir / "tokenizer_config.json");
  throw Error(ErrorKind::NotFound, missing_tokenizer_message(dir));
}

std::string Tokenizer::missing_tokenizer_message(const std::filesystem::path& dir) {
  for (const char* spm : {"spm.model", "sentencepiece.bpe.model", "tokenizer.model"}) {
    if (std::filesystem::exists(dir / spm)) {
      return fmt::format(
          "{} has no tokenizer.json (nor vocab.txt), only the SentencePiece model {}, which Warden does not "
          "read: save the fast tokenizer once with transformers (AutoTokenizer.from_pretrained(DIR)"
          ".save_pretrained(DIR) writes tokenizer.json) or use a revision of the repo that ships "
          "tokenizer.json",
          dir.string(), spm);
    }
  }
  return fmt::format("{} has no tokenizer (tokenizer.json or vocab.txt)", dir.string());
}

}  // namespace warden::tokenizer
