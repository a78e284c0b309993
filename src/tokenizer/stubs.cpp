// Components still to come: they fail loudly at load time, never silently.
#include "core/error.hpp"
#include "tokenizer/components.hpp"

namespace warden::tokenizer_detail {

std::unique_ptr<Model> make_bpe_model(const json::Value&) {
  throw Error(ErrorKind::Unsupported, "tokenizer.json: model type 'BPE' is not implemented yet");
}
std::unique_ptr<Normalizer> make_precompiled(const json::Value&) {
  throw Error(ErrorKind::Unsupported, "tokenizer.json: normalizer type 'Precompiled' is not implemented yet");
}
std::unique_ptr<Pattern> make_string_pattern(std::string) {
  throw Error(ErrorKind::Unsupported, "tokenizer.json: string patterns are not implemented yet");
}
std::unique_ptr<Pattern> make_regex_pattern(std::string_view) {
  throw Error(ErrorKind::Unsupported, "tokenizer.json: regex patterns are not implemented yet");
}

}  // namespace warden::tokenizer_detail
