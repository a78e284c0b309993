#pragma once
// Factories for the pipeline's components, one family per source file.

#include <memory>
#include <string>

#include "tokenizer/internal.hpp"
#include "tokenizer/json.hpp"
#include "tokenizer/regex.hpp"

namespace warden::tokenizer::detail {

// normalizers.cpp / precompiled.cpp
std::unique_ptr<Normalizer> make_normalizer(const json::Value& v);
std::unique_ptr<Normalizer> make_bert_normalizer(bool clean_text, bool chinese, bool strip_accents,
                                                 bool lowercase);
std::unique_ptr<Normalizer> make_precompiled(const json::Value& v);

// pre_tokenizers.cpp
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const json::Value& v);
std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer();

// wordpiece.cpp, unigram.cpp, bpe.cpp
std::unique_ptr<Model> make_model(const json::Value& v);
std::unique_ptr<Model> make_wordpiece(std::vector<std::string> vocab, std::string unk, std::string prefix,
                                      std::size_t max_chars);
std::unique_ptr<Model> make_wordpiece_model(const json::Value& v);
std::unique_ptr<Model> make_unigram_model(const json::Value& v);
std::unique_ptr<Model> make_bpe_model(const json::Value& v);
std::unique_ptr<Model> make_wordlevel_model(const json::Value& v);
// {"token": id, ...} -> an id-indexed table (holes in a sparse vocabulary stay empty).
std::vector<std::string> vocab_from_object(const json::Value& vocab, std::string_view what);

// post_processors.cpp
std::unique_ptr<PostProcessor> make_post_processor(const json::Value& v);
std::unique_ptr<PostProcessor> make_bert_processing(std::string cls, std::uint32_t cls_id, std::string sep,
                                                    std::uint32_t sep_id);

// decoders.cpp
std::unique_ptr<Decoder> make_decoder(const json::Value& v);
std::unique_ptr<Decoder> make_wordpiece_decoder(std::string prefix, bool cleanup);

// The Split pre-tokenizer and the Replace normalizer/decoder take a pattern: a literal
// string or a regex.
std::unique_ptr<Pattern> make_pattern(const json::Value& v, std::string_view what);

}  // namespace warden::tokenizer::detail
