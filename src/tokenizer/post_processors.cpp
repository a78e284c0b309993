// Post-processors: TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel
// (offset trimming) and Sequence, with HF's process_encodings semantics: each rewrites the
// list of per-input encodings; a template merges them into one.

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "tokenizer/byte_level.hpp"
#include "tokenizer/components.hpp"
#include "tokenizer/unicode.hpp"

namespace warden::tokenizer::detail {

void Enc::append(const Enc& o) {
  ids.insert(ids.end(), o.ids.begin(), o.ids.end());
  type_ids.insert(type_ids.end(), o.type_ids.begin(), o.type_ids.end());
  offsets.insert(offsets.end(), o.offsets.begin(), o.offsets.end());
  char_offsets.insert(char_offsets.end(), o.char_offsets.begin(), o.char_offsets.end());
  special.insert(special.end(), o.special.begin(), o.special.end());
  seq.insert(seq.end(), o.seq.begin(), o.seq.end());
  if (with_tokens) tokens.insert(tokens.end(), o.tokens.begin(), o.tokens.end());
}

void Enc::truncate(std::size_t n, Direction dir) {
  if (n >= size()) return;
  auto cut = [&](auto& v) {
    if (v.empty()) return;
    if (dir == Direction::Right) {
      v.resize(n);
    } else {
      v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(n));
    }
  };
  cut(ids);
  cut(type_ids);
  cut(offsets);
  cut(char_offsets);
  cut(special);
  cut(seq);
  cut(tokens);
}

void Enc::shift_offsets(std::uint32_t bytes, std::uint32_t chars) {
  for (Offset& o : offsets) o = {o.begin + bytes, o.end + bytes};
  for (Offset& o : char_offsets) o = {o.begin + chars, o.end + chars};
}

namespace {

thread_local Enc t_out;  // the merged encoding a template builds, reused across calls

struct SpecialTok {
  std::vector<std::uint32_t> ids;
  std::vector<std::string> tokens;
};

void push_special(Enc& out, const SpecialTok& t, std::uint32_t type_id) {
  for (std::size_t i = 0; i < t.ids.size(); ++i) {
    out.push(t.ids[i], type_id, Offset{0, 0}, true, -1,
             i < t.tokens.size() ? t.tokens[i] : std::string_view{});
  }
}

void push_sequence(Enc& out, Enc& e, std::uint32_t type_id, std::int8_t seq) {
  std::fill(e.type_ids.begin(), e.type_ids.end(), type_id);
  std::fill(e.seq.begin(), e.seq.end(), seq);
  out.append(e);
}

class TemplateProcessing final : public PostProcessor {
 public:
  struct Item {
    bool is_special;
    std::string special;  // SpecialToken id
    int sequence;         // 0 = A, 1 = B
    std::uint32_t type_id;
  };
  TemplateProcessing(std::vector<Item> single, std::vector<Item> pair,
                     std::map<std::string, SpecialTok> specials)
      : single_(std::move(single)), pair_(std::move(pair)), specials_(std::move(specials)) {
    for (const auto* tpl : {&single_, &pair_}) {
      for (const auto& it : *tpl) {
        if (it.is_special && specials_.find(it.special) == specials_.end()) {
          throw Error(ErrorKind::CorruptFile,
                      fmt::format("tokenizer.json: TemplateProcessing uses undefined special token '{}'",
                                  it.special));
        }
      }
    }
  }
  [[nodiscard]] std::size_t added_tokens(bool is_pair) const override {
    std::size_t n = 0;
    for (const auto& it : is_pair ? pair_ : single_) {
      if (it.is_special) n += specials_.at(it.special).ids.size();
    }
    return n;
  }
  void process(std::vector<Enc*>& encs, bool add_special, const Pipeline& /*p*/) const override {
    const auto& tpl = encs.size() == 2 ? pair_ : single_;
    Enc& out = t_out;
    out.clear();
    out.with_tokens = encs[0]->with_tokens;
    for (const auto& it : tpl) {
      if (it.is_special) {
        if (add_special) push_special(out, specials_.at(it.special), it.type_id);
      } else {
        const auto idx = static_cast<std::size_t>(it.sequence);
        if (idx < encs.size()) push_sequence(out, *encs[idx], it.type_id, static_cast<std::int8_t>(idx));
      }
    }
    // Keep both buffers alive for the next call: the merged result takes encs[0]'s place.
    std::swap(*encs[0], out);
    encs.resize(1);
  }

 private:
  std::vector<Item> single_, pair_;
  std::map<std::string, SpecialTok> specials_;
};

// ByteLevel's trim_offsets: drop the offsets of leading/trailing spaces ('Ġ') in a token.
void trim_offsets(Enc& e, bool add_prefix_space, const Pipeline& p) {
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e.special[i] == 1) continue;
    // The token's string: an added token's is the text it matched (lstrip/rstrip spaces
    // included), a model token's is its vocabulary entry.
    std::optional<std::string_view> tok;
    if (e.special[i] == 2) {
      const Offset o = e.offsets[i];
      if (o.end <= e.text.size() && o.begin <= o.end) tok = e.text.substr(o.begin, o.end - o.begin);
    } else {
      tok = p.id_to_token(e.ids[i]);
    }
    if (!tok) continue;
    auto is_space = [](char32_t c) { return c == 0x120 || uni::is_whitespace(c); };
    std::size_t leading = 0;
    std::size_t trailing = 0;
    std::size_t nchars = 0;
    bool in_lead = true;
    std::size_t run = 0;
    for (std::size_t pos = 0; pos < tok->size();) {
      const char32_t c = utf8::next(*tok, pos);
      ++nchars;
      if (is_space(c)) {
        if (in_lead) ++leading;
        ++run;
      } else {
        in_lead = false;
        run = 0;
      }
    }
    trailing = run;
    if (leading == 0 && trailing == 0) continue;
    // The same arithmetic on byte offsets (HF's Rust encode) and on code-point offsets (what
    // its Python/Node bindings trim, since they convert before post-processing).
    auto trim = [&](Offset& off) {
      std::size_t lead = leading;
      if (lead > 0) {
        const bool is_first = i == 0 || off.begin == 0;
        if (is_first && add_prefix_space && lead == 1) lead = 0;
        off.begin = std::min<std::uint32_t>(off.begin + static_cast<std::uint32_t>(lead), off.end);
      }
      if (trailing > 0 && off.end >= trailing) {
        off.end = std::max<std::uint32_t>(off.end - static_cast<std::uint32_t>(trailing), off.begin);
      }
    };
    trim(e.offsets[i]);
    trim(e.char_offsets[i]);
  }
}

class ByteLevelPost final : public PostProcessor {
 public:
  ByteLevelPost(bool trim, bool add_prefix_space) : trim_(trim), add_prefix_space_(add_prefix_space) {}
  [[nodiscard]] std::size_t added_tokens(bool /*is_pair*/) const override { return 0; }
  void process(std::vector<Enc*>& encs, bool /*add_special*/, const Pipeline& p) const override {
    if (!trim_) return;
    for (Enc* e : encs) trim_offsets(*e, add_prefix_space_, p);
  }

 private:
  bool trim_, add_prefix_space_;
};

class BertLikeProcessing final : public PostProcessor {
 public:
  BertLikeProcessing(bool roberta, SpecialTok cls, SpecialTok sep, bool trim, bool add_prefix_space)
      : roberta_(roberta),
        cls_(std::move(cls)),
        sep_(std::move(sep)),
        trim_(trim),
        add_prefix_space_(add_prefix_space) {}
  [[nodiscard]] std::size_t added_tokens(bool is_pair) const override {
    if (roberta_) return is_pair ? 4 : 2;
    return is_pair ? 3 : 2;
  }
  void process(std::vector<Enc*>& encs, bool add_special, const Pipeline& p) const override {
    if (roberta_ && trim_) {
      for (Enc* e : encs) trim_offsets(*e, add_prefix_space_, p);
    }
    if (roberta_) {
      for (Enc* e : encs) std::fill(e->type_ids.begin(), e->type_ids.end(), 0U);  // RoBERTa has one type
    }
    if (!add_special) return;
    Enc& out = t_out;
    out.clear();
    out.with_tokens = encs[0]->with_tokens;
    push_special(out, cls_, 0);
    push_sequence(out, *encs[0], 0, 0);
    push_special(out, sep_, 0);
    if (encs.size() == 2) {
      const std::uint32_t t = roberta_ ? 0 : 1;
      if (roberta_) push_special(out, sep_, 0);
      push_sequence(out, *encs[1], t, 1);
      push_special(out, sep_, t);
    }
    // Keep both buffers alive for the next call: the merged result takes encs[0]'s place.
    std::swap(*encs[0], out);
    encs.resize(1);
  }

 private:
  bool roberta_;
  SpecialTok cls_, sep_;
  bool trim_, add_prefix_space_;
};

class SequencePost final : public PostProcessor {
 public:
  explicit SequencePost(std::vector<std::unique_ptr<PostProcessor>> parts) : parts_(std::move(parts)) {}
  [[nodiscard]] std::size_t added_tokens(bool is_pair) const override {
    std::size_t n = 0;
    for (const auto& p : parts_) n += p->added_tokens(is_pair);
    return n;
  }
  void process(std::vector<Enc*>& encs, bool add_special, const Pipeline& p) const override {
    for (const auto& part : parts_) part->process(encs, add_special, p);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> parts_;
};

SpecialTok token_pair(const json::Value& v, std::string_view what) {
  const auto items = v.items();
  if (items.size() != 2) {
    throw Error(ErrorKind::CorruptFile, fmt::format("tokenizer.json: {} must be [token, id]", what));
  }
  SpecialTok t;
  t.tokens.emplace_back(items[0].as_string(what));
  t.ids.push_back(static_cast<std::uint32_t>(items[1].as_int(what)));
  return t;
}

std::vector<TemplateProcessing::Item> parse_template(const json::Value& v) {
  std::vector<TemplateProcessing::Item> out;
  for (const auto& item : v.items()) {
    if (auto sp = item.find("SpecialToken")) {
      out.push_back({true, sp->get_string("id"), 0,
                     static_cast<std::uint32_t>(sp->get_optional_int("type_id").value_or(0))});
    } else if (auto sq = item.find("Sequence")) {
      const std::string id = sq->get_string("id");
      if (id != "A" && id != "B") {
        throw Error(ErrorKind::CorruptFile, fmt::format("tokenizer.json: template sequence id '{}'", id));
      }
      out.push_back({false,
                     {},
                     id == "A" ? 0 : 1,
                     static_cast<std::uint32_t>(sq->get_optional_int("type_id").value_or(0))});
    } else {
      throw Error(ErrorKind::Unsupported, "tokenizer.json: unsupported TemplateProcessing piece");
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<PostProcessor> make_bert_processing(std::string cls, std::uint32_t cls_id, std::string sep,
                                                    std::uint32_t sep_id) {
  return std::make_unique<BertLikeProcessing>(false, SpecialTok{{cls_id}, {std::move(cls)}},
                                              SpecialTok{{sep_id}, {std::move(sep)}}, false, false);
}

std::unique_ptr<PostProcessor> make_post_processor(const json::Value& v) {
  const std::string type = v.type_name("post_processor");
  if (type == "TemplateProcessing") {
    std::map<std::string, SpecialTok> specials;
    if (auto st = v.find("special_tokens")) {
      for (const auto& [key, tok] : st->members()) {
        SpecialTok t;
        for (const auto& id : tok.at("ids").items())
          t.ids.push_back(static_cast<std::uint32_t>(id.as_int("ids")));
        for (const auto& s : tok.at("tokens").items()) t.tokens.emplace_back(s.as_string("tokens"));
        specials.emplace(std::string(key), std::move(t));
      }
    }
    return std::make_unique<TemplateProcessing>(parse_template(v.at("single")), parse_template(v.at("pair")),
                                                std::move(specials));
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    const bool roberta = type == "RobertaProcessing";
    return std::make_unique<BertLikeProcessing>(
        roberta, token_pair(v.at("cls"), "cls"), token_pair(v.at("sep"), "sep"),
        v.get_bool("trim_offsets", true), v.get_bool("add_prefix_space", true));
  }
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPost>(v.get_bool("trim_offsets", true),
                                           v.get_bool("add_prefix_space", true));
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PostProcessor>> parts;
    for (const auto& item : v.at("processors").items()) parts.push_back(make_post_processor(item));
    return std::make_unique<SequencePost>(std::move(parts));
  }
  throw Error(ErrorKind::Unsupported,
              fmt::format("tokenizer.json: unsupported post_processor type '{}'", type));
}

}  // namespace warden::tokenizer::detail
