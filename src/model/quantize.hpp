#pragma once
// `warden quantize`: a model folder saved with its encoder already in a reduced precision,
// so that start-up skips the conversion and the file on disk shrinks with the memory.
//
// What is converted is exactly what load_encoder_model converts for that precision — the
// word embeddings and every 2-D weight of the encoder's layers (Q, K, V, attention output,
// FFN in/out); embeddings' other tables, LayerNorms, biases, pooler and classification
// heads are copied as they are — so that loading the saved folder in that precision gives
// bit-identical outputs to loading the original:
//   int8      "X.weight" becomes I8 [n x k] (symmetric per row, kernels::quantize_rows) with
//             "X.weight_scale" F32 [n] beside it. Only Warden reads this form.
//   bfloat16  "X.weight" becomes BF16 (round to nearest even): a standard safetensors file
//             any HF library loads.
// The other files of the folder (config, tokenizer, sentence-transformers settings) are
// copied; other weight formats (pytorch_model.bin, ONNX, ...) are not.

#include <cstddef>
#include <filesystem>

#include "kernels/dense.hpp"

namespace warden::model {

struct QuantizeReport {
  std::size_t converted = 0;  // tensors stored in the new precision
  std::size_t copied = 0;     // tensors kept as they were
  std::size_t bytes_in = 0;   // tensor bytes read
  std::size_t bytes_out = 0;  // tensor bytes written
};

// Reads the HF encoder folder `in` and writes `out` (created; it must not exist or be
// empty). Errors: NotFound (no folder / config / weights), Unsupported (not a BERT, RoBERTa,
// XLM-R or DistilBERT folder — USE-lite converts at load in milliseconds — or float32 asked
// for), InvalidArgument (`out` exists and is not empty), CorruptFile (a bad tensor, named).
QuantizeReport quantize_model_folder(const std::filesystem::path& in, const std::filesystem::path& out,
                                     Precision precision);

}  // namespace warden::model
