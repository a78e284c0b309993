// The hub protocol, as huggingface_hub speaks it: ask the API which commit a revision
// names and which files it holds, then HEAD each wanted file for its etag (the blob's
// name; the sha256 for LFS files) and GET it into blobs/, resuming and verifying.

#include "hub/hub.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "core/file.hpp"
#include "hub/cache.hpp"
#include "hub/http_client.hpp"
#include "hub/repo_info.hpp"
#include "hub/sha256.hpp"

namespace warden::hub {

namespace {

namespace fs = std::filesystem;
using detail::http_perform;
using detail::HttpRequest;
using detail::HttpResponse;
using detail::RepoInfo;

constexpr std::uint64_t kProgressStep = 256 * 1024;

struct Context {
  const ModelId& id;
  const HubOptions& options;
  const ProgressFn& progress;
};

HttpRequest request_for(const Context& ctx, std::string url) {
  HttpRequest r;
  r.url = std::move(url);
  if (!ctx.options.token.empty()) r.headers.push_back("Authorization: Bearer " + ctx.options.token);
  r.connect_timeout = ctx.options.connect_timeout;
  r.stall_timeout = ctx.options.stall_timeout;
  return r;
}

[[noreturn]] void throw_auth(const Context& ctx, long status) {
  if (ctx.options.token.empty()) {
    throw Error(ErrorKind::InvalidArgument,
                fmt::format("model {} on {} needs a token (HTTP {}): set HF_TOKEN to a HuggingFace access "
                            "token that can read it",
                            ctx.id.repo, ctx.options.endpoint, status));
  }
  throw Error(ErrorKind::InvalidArgument,
              fmt::format("{} refused the token for model {} (HTTP {}): check HF_TOKEN and that it can read "
                          "this repo",
                          ctx.options.endpoint, ctx.id.repo, status));
}

RepoInfo ask_api(const Context& ctx) {
  const auto url =
      fmt::format("{}/api/models/{}/revision/{}", ctx.options.endpoint, ctx.id.repo, ctx.id.revision);
  const HttpResponse r = http_perform(request_for(ctx, url));
  if (!r.transport_error.empty()) {
    throw Error(ErrorKind::Io, fmt::format("cannot reach {}: {}", ctx.options.endpoint, r.transport_error));
  }
  if (r.status == 401 || r.status == 403) throw_auth(ctx, r.status);
  if (r.status == 404) {
    throw Error(ErrorKind::NotFound, fmt::format("model {} (revision {}) not found on {}", ctx.id.repo,
                                                 ctx.id.revision, ctx.options.endpoint));
  }
  if (r.status != 200) {
    throw Error(ErrorKind::Io,
                fmt::format("{} answered HTTP {} for model {}", ctx.options.endpoint, r.status, ctx.id.repo));
  }
  try {
    return detail::parse_repo_info(r.body);
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("the answer of {} about model {} is not usable: {}",
                                      ctx.options.endpoint, ctx.id.repo, e.what()));
  }
}

struct FileMeta {
  std::string etag;
  std::uint64_t size = 0;  // 0: unknown
};

std::string header(const HttpResponse& r, const std::string& name) {
  const auto it = r.headers.find(name);
  return it == r.headers.end() ? std::string() : it->second;
}

// ETag: W/"abc" -> abc.
std::string clean_etag(std::string etag) {
  if (etag.starts_with("W/")) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return etag;
}

std::uint64_t parse_size(const std::string& text) {
  std::uint64_t v = 0;
  if (text.empty() || text.size() > 19) return 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

std::string resolve_url(const Context& ctx, const std::string& commit, const std::string& file) {
  return fmt::format("{}/{}/resolve/{}/{}", ctx.options.endpoint, ctx.id.repo, commit, file);
}

void check_file_status(const Context& ctx, const std::string& file, long status, const std::string& commit) {
  if (status == 401 || status == 403) throw_auth(ctx, status);
  if (status == 404) {
    throw Error(ErrorKind::NotFound, fmt::format("{} of model {} (commit {}) not found on {}", file,
                                                 ctx.id.repo, commit, ctx.options.endpoint));
  }
}

// HEAD without following redirects: the hub answers for LFS files with a redirect to
// its CDN carrying X-Linked-Etag (the sha256) and X-Linked-Size.
FileMeta head_file(const Context& ctx, const std::string& commit, const std::string& file) {
  HttpRequest req = request_for(ctx, resolve_url(ctx, commit, file));
  req.head = true;
  const HttpResponse r = http_perform(req);
  if (!r.transport_error.empty()) {
    throw Error(ErrorKind::Io,
                fmt::format("cannot reach {} for {}: {}", ctx.options.endpoint, file, r.transport_error));
  }
  check_file_status(ctx, file, r.status, commit);
  if (r.status < 200 || r.status >= 400) {
    throw Error(ErrorKind::Io,
                fmt::format("{} answered HTTP {} for {}", ctx.options.endpoint, r.status, file));
  }
  FileMeta meta;
  meta.etag = clean_etag(header(r, "x-linked-etag"));
  if (meta.etag.empty()) meta.etag = clean_etag(header(r, "etag"));
  meta.size = parse_size(header(r, "x-linked-size"));
  if (meta.size == 0 && r.status == 200) meta.size = parse_size(header(r, "content-length"));
  // The etag becomes a file name in blobs/: only plain tokens are accepted.
  const bool plain = !meta.etag.empty() && meta.etag.size() <= 128 && meta.etag.front() != '.' &&
                     std::all_of(meta.etag.begin(), meta.etag.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
                     });
  if (!plain) {
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{} gave {} no usable ETag (\"{}\")", ctx.options.endpoint, file, meta.etag));
  }
  return meta;
}

std::uint64_t file_size_or_zero(const fs::path& p) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  return ec ? 0 : size;
}

// Downloads blobs/{etag} through blobs/{etag}.incomplete, resuming what a previous run
// left, and renames it into place only once its size and sha256 are right.
void download_blob(const Context& ctx, const fs::path& blobs, const std::string& commit,
                   const std::string& file, const FileMeta& meta) {
  const fs::path blob = blobs / meta.etag;
  const fs::path partial = blobs / (meta.etag + ".incomplete");
  detail::FileLock lock(blobs / (meta.etag + ".lock"));
  std::error_code ec;
  if (fs::is_regular_file(blob, ec)) {  // another process (or another file's link) has it
    if (ctx.progress) {
      const auto size = file_size_or_zero(blob);
      ctx.progress(Progress{file, size, size, true});
    }
    return;
  }

  std::uint64_t have = file_size_or_zero(partial);
  if (meta.size > 0 && have > meta.size) {
    fs::remove(partial, ec);
    have = 0;
  }
  std::ofstream out;
  std::uint64_t done = have, last_report = 0;
  bool opened = false;
  const auto report = [&] {
    if (ctx.progress && done - last_report >= kProgressStep) {
      last_report = done;
      ctx.progress(Progress{file, done, meta.size, false});
    }
  };
  const auto sink = [&](long status, std::string_view chunk) {
    if (!opened) {
      // A 200 to a Range request sends the whole file again: start over.
      const bool append = status == 206 && have > 0;
      out.open(partial, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
      opened = true;
      done = append ? have : 0;
    }
    out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    done += chunk.size();
    report();
    return static_cast<bool>(out);
  };

  HttpRequest req = request_for(ctx, resolve_url(ctx, commit, file));
  req.follow_redirects = true;
  req.resume_from = have;
  HttpResponse r = http_perform(req, sink);
  if (r.status == 416 && r.transport_error.empty()) {
    // The range is past the end: what we had is not a prefix of this file. Start over.
    fs::remove(partial, ec);
    req.resume_from = 0;
    have = 0;
    r = http_perform(req, sink);
  }
  if (opened) out.close();
  if (!r.transport_error.empty()) {
    throw Error(
        ErrorKind::Io,
        fmt::format("download of {} interrupted after {} of {} bytes: {}; run again to resume", file, done,
                    meta.size > 0 ? fmt::to_string(meta.size) : std::string("?"), r.transport_error));
  }
  check_file_status(ctx, file, r.status, commit);
  if (r.status != 200 && r.status != 206) {
    throw Error(ErrorKind::Io,
                fmt::format("{} answered HTTP {} for {}", ctx.options.endpoint, r.status, file));
  }
  if (!opened) write_file_atomic(partial, "");  // an empty file has no body to open it
  if (out.fail()) throw Error(ErrorKind::Io, fmt::format("cannot write {}", partial.string()));

  const std::uint64_t size = file_size_or_zero(partial);
  if (meta.size > 0 && size != meta.size) {
    if (size < meta.size) {
      throw Error(ErrorKind::Io,
                  fmt::format("download of {} interrupted after {} of {} bytes: the connection "
                              "ended early; run again to resume",
                              file, size, meta.size));
    }
    fs::remove(partial, ec);
    throw Error(ErrorKind::CorruptFile,
                fmt::format("{}: size mismatch (expected {} bytes, got {})", file, meta.size, size));
  }
  if (detail::is_hex(meta.etag, 64)) {  // LFS: the etag is the sha256 of the content
    const std::string got = sha256_file(partial);
    if (got != meta.etag) {
      fs::remove(partial, ec);
      throw Error(ErrorKind::CorruptFile,
                  fmt::format("{}: sha256 mismatch (expected {}, got {})", file, meta.etag, got));
    }
  }
  fs::rename(partial, blob, ec);
  if (ec)
    throw Error(ErrorKind::Io, fmt::format("cannot move {} into place: {}", blob.string(), ec.message()));
  // The last report says the file is whole, even when its size was not announced.
  if (ctx.progress) ctx.progress(Progress{file, size, size, false});
}

Snapshot offline_snapshot(const Context& ctx, const fs::path& repo_dir) {
  std::string commit = ctx.id.revision;
  if (!detail::is_hex(commit, 40)) {
    const auto ref = try_read_file(repo_dir / "refs" / ctx.id.revision);
    commit.clear();
    if (ref) {
      commit = *ref;
      while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back()))) commit.pop_back();
    }
  }
  const fs::path dir = repo_dir / "snapshots" / commit;
  if (!detail::is_hex(commit, 40) || !detail::snapshot_has_model(dir)) {
    throw Error(
        ErrorKind::NotFound,
        fmt::format("model {} (revision {}) is not in the cache {} and HF_HUB_OFFLINE=1 forbids downloading",
                    ctx.id.repo, ctx.id.revision, ctx.options.cache_dir.string()));
  }
  return Snapshot{dir, commit, detail::snapshot_files(dir), {}};
}

}  // namespace

Snapshot fetch_model(const ModelId& id, const HubOptions& options, const ProgressFn& progress) {
  const Context ctx{id, options, progress};
  if (options.cache_dir.empty())
    throw Error(ErrorKind::InvalidArgument, "no HuggingFace cache folder was given");
  const fs::path repo_dir = detail::repo_folder(options.cache_dir, id.repo);
  if (options.offline) return offline_snapshot(ctx, repo_dir);

  RepoInfo info;
  try {
    info = ask_api(ctx);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Io) throw;
    // An unreachable hub must not stop a server whose model is already cached: use the
    // cache, as huggingface_hub does, and say so. Without a cached copy, the network error
    // is the one to report.
    try {
      Snapshot cached = offline_snapshot(ctx, repo_dir);
      cached.offline_reason = e.what();
      return cached;
    } catch (const Error&) {
      throw e;
    }
  }
  const std::vector<std::string> wanted = wanted_files(info.files, options.format);
  if (!has_weights(wanted)) {
    const std::string_view what =
        options.format == WeightFormat::Onnx ? "an ONNX graph (model.onnx, onnx/model.onnx, "
                                               "model_optimized.onnx, model_quantized.onnx, ...)"
        : options.format == WeightFormat::Safetensors
            ? "safetensors or pytorch_model.bin weights at the top of the repo"
            : "weights Warden reads (model.safetensors or pytorch_model.bin at the top of "
              "the repo, or an ONNX graph: model.onnx, onnx/model.onnx, ...; TensorFlow "
              "and Flax files are not read)";
    throw Error(ErrorKind::Unsupported,
                fmt::format("model {} (revision {}) has no {}", id.repo, id.revision, what));
  }

  const fs::path blobs = repo_dir / "blobs";
  const fs::path snapshot = repo_dir / "snapshots" / info.commit;
  std::error_code ec;
  fs::create_directories(blobs, ec);
  if (ec) throw Error(ErrorKind::Io, fmt::format("cannot create {}: {}", blobs.string(), ec.message()));
  for (const auto& file : wanted) {
    const fs::path entry = snapshot / file;
    if (fs::is_regular_file(entry, ec)) {  // follows the link: its blob is there
      if (progress) {
        const auto size = file_size_or_zero(entry);
        progress(Progress{file, size, size, true});
      }
      continue;
    }
    const FileMeta meta = head_file(ctx, info.commit, file);
    download_blob(ctx, blobs, info.commit, file, meta);
    detail::link_into_snapshot(repo_dir, info.commit, file, meta.etag);
  }
  if (id.revision != info.commit) detail::write_ref(repo_dir, id.revision, info.commit);
  return Snapshot{snapshot, info.commit, wanted, {}};
}

}  // namespace warden::hub
