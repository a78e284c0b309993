#include "model/yes_no_head.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/formats/safetensors.hpp"

namespace warden::model {

heads::ClassifierHead yes_no_head(const EncoderModel& model, std::uint32_t yes, std::uint32_t no, Isa isa) {
  const std::size_t h = model.encoder.dims().hidden;
  const std::size_t vocab = model.encoder.dims().vocab;
  // Qwen3ForCausalLM's lm_head; with tie_word_embeddings (the 0.6B checkpoints) save_pretrained
  // keeps only the embeddings it is tied to.
  const std::string tied = model.weight_prefix + "embed_tokens.weight";
  const formats::Tensor* table = model.weights->find("lm_head.weight");
  if (table == nullptr) table = model.weights->find(tied);
  if (table == nullptr) {
    throw Error(
        ErrorKind::CorruptFile,
        fmt::format("{}: neither lm_head.weight nor {} (the LM head a yes/no reranker scores with) is "
                    "in the checkpoint",
                    model.weights->source().string(), tied));
  }
  if (table->shape != std::vector<std::size_t>{vocab, h} || table->transposed) {
    throw Error(ErrorKind::CorruptFile, fmt::format("{}: {} is not [{} x {}] (vocab_size x hidden_size)",
                                                    model.weights->source().string(), table->name, vocab, h));
  }
  const auto row = [&](std::uint32_t id, std::string_view token) {
    if (id >= vocab) {
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: the tokenizer's \"{}\" is id {}, outside the {} rows of {}",
                              model.weights->source().string(), token, id, vocab, table->name));
    }
    const std::size_t bytes = h * formats::dtype_size(table->dtype);
    formats::Tensor one{table->name, table->dtype, {1, h}, table->data.subspan(id * bytes, bytes)};
    std::vector<float> out(h);
    formats::to_float32(one, out);
    return out;
  };
  const std::vector<float> w_yes = row(yes, "yes");
  const std::vector<float> w_no = row(no, "no");
  std::vector<float> diff(h);
  for (std::size_t j = 0; j < h; ++j) diff[j] = w_yes[j] - w_no[j];
  heads::ClassifierHead head;
  head.pooling = metadata::PoolingMode::LastToken;
  head.out = kernels::PackedLinear(1, h, isa);
  head.out.set_rows(0, 1, diff, {});
  return head;
}

}  // namespace warden::model
