#pragma once
// How a ColBERT model encodes queries and documents, as its folder saves it (PyLate's
// ColBERT.__init__ and preprocess, which follow Stanford's ColBERT):
//  * PyLate folders: config_sentence_transformers.json's query_prefix, document_prefix,
//    query_length, document_length, do_query_expansion, attend_to_expansion_tokens,
//    skiplist_words;
//  * Stanford ColBERT checkpoints (config.json's HF_ColBERT): artifact.metadata's
//    query_token_id, doc_token_id, query_maxlen, doc_maxlen, attend_to_mask_tokens.
// A key a file leaves out takes PyLate's default, as PyLate does when it loads the folder.
// Errors are Error(CorruptFile) naming the file and the key.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace warden::model::heads {

struct ColbertConfig {
  // The marker token inserted after the first token ("" inserts none).
  std::string query_prefix = "[Q] ";
  std::string document_prefix = "[D] ";
  std::size_t query_length = 32;      // queries: cut to this many tokens (marker included), and
  std::size_t document_length = 180;  // padded to it with [MASK] under query expansion
  bool do_query_expansion = true;
  bool attend_to_expansion_tokens = false;  // false: the [MASK] padding attends but is not attended
  // Tokens whose vectors a document leaves out (they are encoded, then dropped); default:
  // Python's string.punctuation, one character each.
  std::vector<std::string> skiplist_words;
};

// True when config_sentence_transformers.json is a PyLate ColBERT's (it saves query_prefix).
[[nodiscard]] bool is_pylate_config(std::string_view json, std::string_view source);
ColbertConfig parse_pylate_config(std::string_view json, std::string_view source);
// artifact.metadata; without the file (`json` empty) Stanford's own markers and PyLate's lengths.
ColbertConfig parse_colbert_metadata(std::string_view json, std::string_view source);

}  // namespace warden::model::heads
