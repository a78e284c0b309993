#include "bulk/checkpoint.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/json_writer.hpp"

namespace warden::bulk {

namespace {

[[noreturn]] void io_error(std::string_view what, const std::filesystem::path& path) {
  throw Error(ErrorKind::Io, fmt::format("cannot {} {}: {}", what, path.string(), std::strerror(errno)));
}

[[noreturn]] void corrupt(const std::filesystem::path& path, std::string_view problem) {
  throw Error(ErrorKind::CorruptFile, fmt::format("{}: {}", path.string(), problem));
}

}  // namespace

void add_input_identity(Fingerprint& fingerprint, const std::filesystem::path& input) {
  struct stat st {};
  if (::stat(input.c_str(), &st) != 0) io_error("stat", input);
  fingerprint.emplace_back("input", std::filesystem::absolute(input).lexically_normal().string());
  fingerprint.emplace_back("input_size", std::to_string(st.st_size));
  fingerprint.emplace_back(
      "input_mtime_ns",
      std::to_string(static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec));
}

std::filesystem::path progress_path(const std::filesystem::path& output) {
  auto p = output;
  p += ".progress.json";
  return p;
}

void save_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint) {
  JsonWriter json(JsonWriter::Options{.indent = 2});
  json.begin_object().key("fingerprint").begin_object();
  for (const auto& [name, value] : checkpoint.fingerprint) json.key(name).value(value);
  json.end_object()
      .key("records")
      .value(checkpoint.records)
      .key("input_offset")
      .value(checkpoint.input.offset)
      .key("input_index")
      .value(checkpoint.input.index)
      .key("input_line")
      .value(checkpoint.input.line)
      .key("files")
      .begin_array();
  for (const auto& [file, length] : checkpoint.files) {
    json.begin_object().key("path").value(file.string()).key("length").value(length).end_object();
  }
  json.end_array().end_object();
  std::string text = json.take();
  text.push_back('\n');

  write_file_atomic(path, text);
}

std::optional<Checkpoint> load_checkpoint(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const simdjson::padded_string text(read_file(path));
  simdjson::dom::parser parser;
  simdjson::dom::object root;
  if (parser.parse(text).get(root) != simdjson::SUCCESS) corrupt(path, "not a JSON object");
  Checkpoint c;
  simdjson::dom::object fingerprint;
  if (root["fingerprint"].get(fingerprint) != simdjson::SUCCESS) corrupt(path, "no fingerprint");
  for (const auto field : fingerprint) {
    std::string_view value;
    if (field.value.get_string().get(value) != simdjson::SUCCESS) corrupt(path, "bad fingerprint");
    c.fingerprint.emplace_back(std::string(field.key), std::string(value));
  }
  auto number = [&](const char* key) {
    std::uint64_t v = 0;
    if (root[key].get_uint64().get(v) != simdjson::SUCCESS) corrupt(path, fmt::format("no '{}'", key));
    return v;
  };
  c.records = number("records");
  c.input.offset = number("input_offset");
  c.input.index = number("input_index");
  c.input.line = number("input_line");
  simdjson::dom::array files;
  if (root["files"].get(files) != simdjson::SUCCESS) corrupt(path, "no files");
  for (const auto file : files) {
    std::string_view name;
    std::uint64_t length = 0;
    if (file["path"].get_string().get(name) != simdjson::SUCCESS ||
        file["length"].get_uint64().get(length) != simdjson::SUCCESS) {
      corrupt(path, "bad file entry");
    }
    c.files.emplace_back(std::filesystem::path(name), length);
  }
  return c;
}

void require_same_job(const Fingerprint& saved, const Fingerprint& now, const std::filesystem::path& state) {
  for (const auto& [name, value] : now) {
    std::string_view before = "(none)";
    for (const auto& [saved_name, saved_value] : saved) {
      if (saved_name == name) before = saved_value;
    }
    if (before != value) {
      throw Error(ErrorKind::InvalidArgument,
                  fmt::format("cannot resume: {} describes another job ({} was '{}', now '{}'); pass "
                              "--overwrite to start again",
                              state.string(), name, before, value));
    }
  }
  if (saved.size() != now.size()) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("cannot resume: {} describes another job; pass --overwrite to start again",
                            state.string()));
  }
}

void truncate_to_checkpoint(const Checkpoint& checkpoint) {
  for (const auto& [file, length] : checkpoint.files) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (ec) corrupt(file, "missing: it cannot be resumed (pass --overwrite to start again)");
    if (size < length) {
      corrupt(file,
              fmt::format("{} bytes where the checkpoint recorded {}: it cannot be resumed", size, length));
    }
    std::filesystem::resize_file(file, length, ec);
    if (ec) throw Error(ErrorKind::Io, fmt::format("cannot truncate {}: {}", file.string(), ec.message()));
  }
}

}  // namespace warden::bulk

namespace warden::bulk {

std::optional<Checkpoint> start_job(const std::filesystem::path& state,
                                    const std::vector<std::filesystem::path>& outputs,
                                    const Fingerprint& fingerprint, bool resume, bool overwrite) {
  std::error_code ec;
  if (std::filesystem::exists(state, ec)) {
    if (resume) {
      std::optional<Checkpoint> c = load_checkpoint(state);
      require_same_job(c->fingerprint, fingerprint, state);
      truncate_to_checkpoint(*c);
      return c;
    }
    if (overwrite) {
      std::filesystem::remove(state, ec);
      return std::nullopt;
    }
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{}: unfinished job; pass --resume or --overwrite (its state: {})",
                            outputs.front().string(), state.string()));
  }
  for (const auto& file : outputs) {
    if (!std::filesystem::exists(file, ec) || overwrite) continue;
    if (resume) {
      throw Error(
          ErrorKind::InvalidArgument,
          fmt::format("cannot resume: {} exists but {} does not (a finished job, or not one of ours); "
                      "pass --overwrite to start again",
                      file.string(), state.string()));
    }
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("{} exists; pass --overwrite to replace it", file.string()));
  }
  return std::nullopt;
}

}  // namespace warden::bulk
