#include "model/formats/torch_checkpoint.hpp"

#include <limits>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "model/formats/torch_pickle.hpp"
#include "model/formats/zip_archive.hpp"

namespace warden::model::formats {

namespace {

constexpr std::string_view kPickleName = "data.pkl";

// Whether `stride` is the C-order stride of `shape` (dimensions of size 1 may have any).
bool contiguous(const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& stride) {
  std::uint64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && stride[i] != static_cast<std::int64_t>(expected)) return false;
    expected *= shape[i];
  }
  return true;
}

}  // namespace

std::vector<Tensor> parse_torch_checkpoint(std::span<const std::byte> bytes, std::string_view file_name) {
  // torch.save before 1.6 (and _use_new_zipfile_serialization=False) writes a bare pickle stream
  // that starts with a pickled magic number; a ZIP archive starts with a local header ("PK").
  if (bytes.size() >= 2 && bytes[0] == std::byte{0x80} && bytes[1] == std::byte{0x02}) {
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: a PyTorch checkpoint in the pre-1.6 (non-ZIP) format; re-save it with "
                            "torch.save from torch >= 1.6, or convert it to model.safetensors",
                            file_name));
  }
  const std::vector<ZipEntry> entries = read_zip_entries(bytes, file_name);
  const ZipEntry* pickle = nullptr;
  for (const ZipEntry& e : entries) {
    const std::string_view n = e.name;
    // "<archive>/data.pkl" at the top level of the archive's one folder.
    if (n.ends_with(kPickleName) && n.size() > kPickleName.size() &&
        n[n.size() - kPickleName.size() - 1] == '/' && n.find('/') == n.size() - kPickleName.size() - 1) {
      if (pickle != nullptr) {
        throw Error(ErrorKind::CorruptFile, fmt::format("{}: more than one data.pkl", file_name));
      }
      pickle = &e;
    }
  }
  if (pickle == nullptr) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: no <name>/data.pkl entry: not a torch.save checkpoint", file_name));
  }
  const std::string prefix = pickle->name.substr(0, pickle->name.size() - kPickleName.size()) + "data/";
  std::map<std::string_view, const ZipEntry*, std::less<>> storages;
  for (const ZipEntry& e : entries) {
    if (e.name.starts_with(prefix)) storages.emplace(std::string_view(e.name).substr(prefix.size()), &e);
  }

  std::vector<Tensor> out;
  std::set<std::string, std::less<>> names;
  for (PickledTensor& p : read_state_dict_pickle(pickle->data, file_name)) {
    auto fail = [&](std::string_view what) {
      return Error(ErrorKind::CorruptFile, fmt::format("{}: tensor {}: {}", file_name, p.name, what));
    };
    if (!names.insert(p.name).second) throw fail("appears twice in the state dict");
    const auto it = storages.find(p.storage_key);
    if (it == storages.end())
      throw fail(fmt::format("its storage {}{} is not in the archive", prefix, p.storage_key));
    const std::size_t element = dtype_size(p.dtype);
    const std::span<const std::byte> storage = it->second->data;
    if (p.storage_elements > storage.size() / element || p.storage_elements * element != storage.size()) {
      throw fail(fmt::format("its storage holds {} bytes, not {} elements of {}", storage.size(),
                             p.storage_elements, dtype_name(p.dtype)));
    }
    std::uint64_t count = 1;
    for (const std::size_t d : p.shape) {
      if (d != 0 && count > std::numeric_limits<std::uint64_t>::max() / d) throw fail("its size overflows");
      count *= d;
    }
    if (p.offset > p.storage_elements || count > p.storage_elements - p.offset) {
      throw fail(fmt::format("its view (offset {}, {} elements) runs past its storage of {}", p.offset, count,
                             p.storage_elements));
    }
    if (!contiguous(p.shape, p.stride)) {
      throw Error(ErrorKind::Unsupported,
                  fmt::format("{}: tensor {} is not contiguous (strides {}); save its .contiguous() copy",
                              file_name, p.name, fmt::join(p.stride, ",")));
    }
    Tensor t;
    t.name = std::move(p.name);
    t.dtype = p.dtype;
    t.shape = std::move(p.shape);
    t.data = storage.subspan(static_cast<std::size_t>(p.offset * element),
                             static_cast<std::size_t>(count * element));
    out.push_back(std::move(t));
  }
  return out;
}

TorchCheckpoint::TorchCheckpoint(const std::filesystem::path& path) : path_(path), file_(path) {
  tensors_ = parse_torch_checkpoint(file_.bytes(), path_.string());
  for (std::size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
}

const Tensor* TorchCheckpoint::find(std::string_view name) const noexcept {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace warden::model::formats
