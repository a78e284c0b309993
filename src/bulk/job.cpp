#include "bulk/job.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/thread_pool.hpp"
#include "embed/length_order.hpp"

namespace warden::bulk {

namespace {

class Runner {
 public:
  Runner(RecordReader& reader, const Scorer& scorer, Sink& sink, const JobOptions& options,
         const std::optional<Checkpointing>& checkpointing, Progress* progress, std::uint64_t records_before)
      : reader_(reader),
        scorer_(scorer),
        sink_(sink),
        options_(options),
        checkpointing_(checkpointing),
        progress_(progress),
        units_(std::max<std::size_t>(1, scorer.units_per_record())),
        width_(units_ * scorer.unit_width()),
        records_(records_before),
        position_(reader.position()) {
    if (!options_.clock) {
      options_.clock = [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      };
    }
    if (scorer.variable_outputs() && units_ != 1) {
      throw Error(ErrorKind::Internal, "a scorer of variable outputs takes one model input per record");
    }
    chunk_records_ = std::max<std::size_t>(1, options_.chunk_units / units_);
    options_.batch_size = std::max<std::size_t>(1, options_.batch_size);
    last_checkpoint_ = options_.clock();
  }

  JobResult run() {
    // A state file from the start: a job killed before its first chunk is still resumable.
    checkpoint();
    while (!stopping()) {
      if (!read_chunk()) {
        sink_.finish();
        if (checkpointing_) {
          std::error_code ec;
          std::filesystem::remove(checkpointing_->state, ec);
        }
        if (progress_ != nullptr) progress_->finish(records_, position_.offset, false);
        return {records_, false};
      }
      if (!compute_chunk()) break;
    }
    // Stopped: everything computed and in order is written and checkpointed.
    if (progress_ != nullptr) progress_->finish(records_, position_.offset, true);
    return {records_, true};
  }

 private:
  [[nodiscard]] bool stopping() const noexcept {
    return options_.stop != nullptr && options_.stop->load(std::memory_order_relaxed);
  }

  bool read_chunk() {
    chunk_.resize(chunk_records_);
    std::size_t n = 0;
    while (n < chunk_records_ && reader_.next(chunk_[n])) ++n;
    chunk_.resize(n);
    return n > 0;
  }

  // False when stopped part-way (after checkpointing what was done).
  bool compute_chunk() {
    const std::size_t n = chunk_.size();
    prepare_chunk();
    order_ = embed::length_order(prepared_);
    const bool variable = scorer_.variable_outputs();
    if (variable) {
      outputs_.assign(n, embed::RetrievalVectors{});
    } else {
      raw_.assign(n * width_, 0.0F);
    }
    pending_.assign(n, units_);
    written_ = 0;
    const std::size_t unit_width = scorer_.unit_width();
    for (std::size_t begin = 0; begin < order_.size(); begin += options_.batch_size) {
      const std::size_t end = std::min(order_.size(), begin + options_.batch_size);
      inputs_.clear();
      for (std::size_t k = begin; k < end; ++k) inputs_.push_back(&prepared_[order_[k]]);
      if (variable) {
        std::vector<embed::RetrievalVectors> outs = scorer_.compute_outputs(inputs_);
        for (std::size_t k = begin; k < end; ++k) {
          outputs_[order_[k]] = std::move(outs[k - begin]);
          --pending_[order_[k]];
        }
      } else {
        batch_out_.assign(inputs_.size() * unit_width, 0.0F);
        scorer_.compute(inputs_, batch_out_);
        for (std::size_t k = begin; k < end; ++k) {
          const std::size_t unit = order_[k];
          std::copy_n(batch_out_.begin() + static_cast<std::ptrdiff_t>((k - begin) * unit_width), unit_width,
                      raw_.begin() + static_cast<std::ptrdiff_t>(unit * unit_width));
          --pending_[unit / units_];
        }
      }
      if (stopping()) {
        write_done();
        checkpoint();
        return false;
      }
      if (options_.clock() - last_checkpoint_ >= options_.checkpoint_seconds) {
        write_done();
        checkpoint();
      }
      if (progress_ != nullptr) {
        // records_ already counts the chunk's records written by a timed checkpoint.
        progress_->update(records_ - written_ + end / units_, approximate_offset(end));
      }
    }
    write_done();
    checkpoint();
    return true;
  }

  // Tokenizes the chunk, on the pool when there is one; the first bad record (in input
  // order) is the error, named by file, line and record.
  void prepare_chunk() {
    const std::size_t n = chunk_.size();
    prepared_.assign(n * units_, embed::PreparedInput{});
    failures_.assign(n, nullptr);
    auto one = [&](std::size_t i) {
      try {
        scorer_.prepare(chunk_[i], std::span(prepared_).subspan(i * units_, units_));
      } catch (...) {
        failures_[i] = std::current_exception();
      }
    };
    if (options_.pool != nullptr && n > 1) {
      options_.pool->parallel_for(n, one);
    } else {
      for (std::size_t i = 0; i < n; ++i) one(i);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!failures_[i]) continue;
      try {
        std::rethrow_exception(failures_[i]);
      } catch (const Error& e) {
        throw Error(e.kind(), fmt::format("{}: line {} (record {}): {}", reader_.name(), chunk_[i].line,
                                          chunk_[i].index, e.what()));
      }
    }
  }

  [[nodiscard]] std::uint64_t approximate_offset(std::size_t units_done) const noexcept {
    const std::uint64_t from = chunk_start_offset();
    const std::uint64_t to = chunk_.back().end_offset;
    return from + (to - from) * units_done / std::max<std::size_t>(1, prepared_.size());
  }

  [[nodiscard]] std::uint64_t chunk_start_offset() const noexcept { return chunk_base_; }

  // Writes the records of the chunk that are complete and in order, from written_ on.
  void write_done() {
    while (written_ < chunk_.size() && pending_[written_] == 0) {
      if (scorer_.variable_outputs()) {
        sink_.write_outputs(chunk_[written_], outputs_[written_]);
        outputs_[written_] = {};  // written: its memory goes back now, not with the chunk
      } else {
        const std::span<float> row = std::span(raw_).subspan(written_ * width_, width_);
        scorer_.finish(row);
        sink_.write(chunk_[written_], row);
      }
      const Record& r = chunk_[written_];
      position_ = {r.end_offset, r.index + 1, r.next_line};
      ++records_;
      ++written_;
    }
    if (written_ == chunk_.size()) chunk_base_ = position_.offset;
  }

  void checkpoint() {
    sink_.sync();  // the data first, durably; then the state that describes it
    last_checkpoint_ = options_.clock();
    if (!checkpointing_) return;
    Checkpoint c;
    c.fingerprint = checkpointing_->fingerprint;
    c.records = records_;
    c.input = position_;
    const auto files = sink_.files();
    const auto lengths = sink_.lengths();
    for (std::size_t i = 0; i < files.size(); ++i) c.files.emplace_back(files[i], lengths[i]);
    save_checkpoint(checkpointing_->state, c);
  }

  RecordReader& reader_;
  const Scorer& scorer_;
  Sink& sink_;
  JobOptions options_;
  const std::optional<Checkpointing>& checkpointing_;
  Progress* progress_;
  std::size_t units_;
  std::size_t width_;
  std::size_t chunk_records_ = 1;
  std::uint64_t records_;
  ReaderPosition position_;
  std::uint64_t chunk_base_ = position_.offset;
  double last_checkpoint_ = 0;

  std::vector<Record> chunk_;
  std::vector<embed::PreparedInput> prepared_;
  std::vector<std::exception_ptr> failures_;
  std::vector<std::size_t> order_;
  std::vector<float> raw_;
  std::vector<embed::RetrievalVectors> outputs_;  // a variable-output scorer's, per record of the chunk
  std::vector<std::size_t> pending_;
  std::vector<const embed::PreparedInput*> inputs_;
  std::vector<float> batch_out_;
  std::size_t written_ = 0;
};

}  // namespace

std::vector<embed::RetrievalVectors> Scorer::compute_outputs(
    std::span<const embed::PreparedInput* const>) const {
  throw Error(ErrorKind::Internal, "this scorer gives rows of floats, not retrieval outputs");
}

JobResult run_job(RecordReader& reader, const Scorer& scorer, Sink& sink, const JobOptions& options,
                  const std::optional<Checkpointing>& checkpointing, Progress* progress,
                  std::uint64_t records_before) {
  return Runner(reader, scorer, sink, options, checkpointing, progress, records_before).run();
}

}  // namespace warden::bulk
