#include "model/lm_score_head.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/formats/safetensors.hpp"

namespace warden::model {

heads::ClassifierHead lm_score_head(const EncoderModel& model, std::uint32_t positive,
                                    std::optional<std::uint32_t> negative, Isa isa) {
  const std::size_t h = model.encoder.dims().hidden;
  const std::size_t vocab = model.encoder.dims().vocab;
  // The *ForCausalLM's lm_head; with tie_word_embeddings (Qwen3-Reranker-0.6B, Gemma)
  // save_pretrained keeps only the embeddings it is tied to.
  const std::string tied = model.weight_prefix + "embed_tokens.weight";
  const formats::Tensor* table = model.weights->find("lm_head.weight");
  if (table == nullptr) table = model.weights->find(tied);
  if (table == nullptr) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: neither lm_head.weight nor {} (the LM head an LLM reranker scores with) is "
                            "in the checkpoint",
                            model.weights->source().string(), tied));
  }
  if (table->shape != std::vector<std::size_t>{vocab, h} || table->transposed) {
    throw Error(ErrorKind::CorruptFile, fmt::format("{}: {} is not [{} x {}] (vocab_size x hidden_size)",
                                                    model.weights->source().string(), table->name, vocab, h));
  }
  const auto row = [&](std::uint32_t id) {
    if (id >= vocab) {
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: the score token's id {} is outside the {} rows of {}",
                              model.weights->source().string(), id, vocab, table->name));
    }
    const std::size_t bytes = h * formats::dtype_size(table->dtype);
    formats::Tensor one{table->name, table->dtype, {1, h}, table->data.subspan(id * bytes, bytes)};
    std::vector<float> out(h);
    formats::to_float32(one, out);
    return out;
  };
  std::vector<float> w = row(positive);
  if (negative) {
    const std::vector<float> w_negative = row(*negative);
    for (std::size_t j = 0; j < h; ++j) w[j] -= w_negative[j];
  }
  heads::ClassifierHead head;
  head.pooling = metadata::PoolingMode::LastToken;
  head.out = kernels::PackedLinear(1, h, isa);
  head.out.set_rows(0, 1, w, {});
  return head;
}

}  // namespace warden::model
