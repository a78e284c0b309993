#include "model/engine/token_batch.hpp"

#include "core/error.hpp"

namespace warden::model::engine {

void TokenBatch::add(std::span<const std::uint32_t> seq_ids, std::span<const std::uint32_t> seq_type_ids,
                     std::size_t seq_visible_keys, std::int32_t adapter) {
  if (!seq_type_ids.empty() && seq_type_ids.size() != seq_ids.size()) {
    throw Error(ErrorKind::InvalidInput, "token type ids and token ids differ in length");
  }
  ids.insert(ids.end(), seq_ids.begin(), seq_ids.end());
  if (seq_type_ids.empty()) {
    type_ids.insert(type_ids.end(), seq_ids.size(), 0);
  } else {
    type_ids.insert(type_ids.end(), seq_type_ids.begin(), seq_type_ids.end());
  }
  if (seq_visible_keys != 0 || !visible_keys.empty()) {
    visible_keys.resize(sequences(), 0);  // the sequences before the first limited one see all
    visible_keys.push_back(seq_visible_keys);
  }
  if (adapter != kNoAdapter || !adapters.empty()) {
    adapters.resize(sequences(), kNoAdapter);
    adapters.push_back(adapter);
  }
  offsets.push_back(ids.size());
}

void TokenBatch::clear() {
  ids.clear();
  type_ids.clear();
  offsets.assign(1, 0);
  visible_keys.clear();
  adapters.clear();
}

}  // namespace warden::model::engine
