#pragma once
// Output sinks of a retrieval bulk job (`warden embed --input ... --output-kind sparse|multi`,
// docs/bulk.md): the outputs /embed_hybrid gives, per record, whatever their size.
//   sparse  JSON lines {"id": ..., "indices": [...], "values": [...]}, ids ascending (the
//           shape Qdrant's, Milvus's and Pinecone's sparse vectors take)
//   multi   OUTPUT.npy: float32 (rows, dim), every record's token vectors one after another;
//           OUTPUT.offsets.npy: int64 (records + 1,), record i's rows are
//           [offsets[i], offsets[i + 1]) (CSR's indptr); OUTPUT.ids.jsonl, one id per line.
// Both resume from files cut back to a checkpoint's lengths, as the row sinks do.

#include <filesystem>
#include <memory>
#include <vector>

#include "bulk/vector_writer.hpp"

namespace warden::bulk {

std::filesystem::path offsets_path(const std::filesystem::path& output);
// Every file a multi-vector sink writes (data, offsets, ids), for the overwrite checks.
std::vector<std::filesystem::path> multi_vector_files(const std::filesystem::path& output);

// options.path "-" is stdout (sparse only); options.dim is the token vectors' width (multi).
std::unique_ptr<Sink> make_sparse_sink(const SinkOptions& options);
std::unique_ptr<Sink> make_multi_vector_sink(const SinkOptions& options);

}  // namespace warden::bulk
