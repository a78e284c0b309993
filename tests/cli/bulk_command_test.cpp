// `warden embed --input` and `warden rerank`: the bulk jobs end to end (docs/bulk.md).

#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <thread>

#include "bulk/vector_writer.hpp"
#include "cli/run_warden.hpp"
#include "core/file.hpp"
#include "core/json_writer.hpp"
#include "embed/neural_embedder.hpp"
#include "support/classifier_goldens.hpp"
#include "support/golden_fixture.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;
using testing::run_warden;

class BulkCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("warden-cli-bulk-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  [[nodiscard]] std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The embeddings of a JSON lines output, in order, with their ids.
  static std::vector<std::pair<std::string, std::vector<double>>> rows(const std::string& jsonl) {
    std::vector<std::pair<std::string, std::vector<double>>> out;
    simdjson::dom::parser parser;
    std::size_t start = 0;
    while (start < jsonl.size()) {
      const std::size_t end = jsonl.find('\n', start);
      const simdjson::dom::element doc = parser.parse(jsonl.substr(start, end - start));
      std::vector<double> v;
      for (const auto x : doc["embedding"].get_array()) v.push_back(double(x));
      simdjson::dom::element id;
      const bool has_id = doc["id"].get(id) == simdjson::SUCCESS;
      out.emplace_back(has_id ? simdjson::to_string(id) : std::string(), std::move(v));
      start = end + 1;
    }
    return out;
  }

  fs::path dir_;
};

TEST_F(BulkCommand, EmbedsACsvToNpyAndRefusesToOverwrite) {
  write_file_atomic(path("in.csv"), "id,text\na1,hello world\na2,\"second, text\"\n");
  const std::string args = "embed --model hashing-ngram-256 --input " + path("in.csv") + " --output " +
                           path("out.npy") + " --progress none";
  const auto r = run_warden(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string npy = read_file(path("out.npy"));
  EXPECT_NE(npy.find("'shape': (2, 256)"), std::string::npos);
  EXPECT_EQ(npy.size(), 128U + 2 * 256 * 4);
  EXPECT_EQ(read_file(path("out.npy.ids.jsonl")), "\"a1\"\n\"a2\"\n");
  EXPECT_FALSE(fs::exists(path("out.npy.progress.json")));

  const auto again = run_warden(args);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("exists; pass --overwrite"), std::string::npos) << again.err;
  const auto resume = run_warden(args + " --resume");
  EXPECT_EQ(resume.exit_code, 2);
  EXPECT_NE(resume.err.find("a finished job"), std::string::npos) << resume.err;
  EXPECT_EQ(run_warden(args + " --overwrite").exit_code, 0);
}

TEST_F(BulkCommand, BulkRowsEqualPlainEmbedRows) {
  write_file_atomic(path("in.txt"), "one\r\ntwo words\nthree little words\n");
  const auto bulk =
      run_warden("embed --model hashing-ngram-256 --input " + path("in.txt") + " --progress none");
  ASSERT_EQ(bulk.exit_code, 0) << bulk.err;
  const auto plain = run_warden("embed --model hashing-ngram-256 one 'two words' 'three little words'");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto b = rows(bulk.out), p = rows(plain.out);
  ASSERT_EQ(b.size(), 3U);
  EXPECT_EQ(b[0].first, "0");
  EXPECT_EQ(b[2].first, "2");
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(b[i].second, p[i].second);
}

TEST_F(BulkCommand, UsageAndDataErrors) {
  write_file_atomic(path("in.jsonl"), "{\"text\": \"a\"}\n{\"text\": 3}\n");
  // Binary formats need a file.
  EXPECT_EQ(
      run_warden("embed --model hashing-ngram-256 --input " + path("in.jsonl") + " --format npy").exit_code,
      2);
  // Texts and --input do not mix; float16 needs --input.
  EXPECT_EQ(run_warden("embed --model hashing-ngram-256 --input " + path("in.jsonl") + " hi").exit_code, 2);
  EXPECT_EQ(run_warden("embed --model hashing-ngram-256 --format float16 hi").exit_code, 2);
  // Bad data: exit 1, naming the file and the line.
  const auto bad = run_warden("embed --model hashing-ngram-256 --input " + path("in.jsonl") + " --output " +
                              path("o.jsonl") + " --progress none");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("in.jsonl: line 2: \"text\" is not a string"), std::string::npos) << bad.err;
  // The failed job stays resumable: the state file is there.
  EXPECT_TRUE(fs::exists(path("o.jsonl.progress.json")));
  const auto unfinished = run_warden("embed --model hashing-ngram-256 --input " + path("in.jsonl") +
                                     " --output " + path("o.jsonl"));
  EXPECT_EQ(unfinished.exit_code, 2);
  EXPECT_NE(unfinished.err.find("unfinished job; pass --resume or --overwrite"), std::string::npos);
  // Another job's state is refused.
  const auto other = run_warden("embed --model hashing-ngram-256 --format jsonl --text-field body --input " +
                                path("in.jsonl") + " --output " + path("o.jsonl") + " --resume");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("describes another job (text_field was 'text', now 'body')"), std::string::npos)
      << other.err;
}

TEST_F(BulkCommand, StdinInputStreamsButCannotResume) {
  const auto r = run_warden("embed --model hashing-ngram-256 --input - --input-format csv --progress none",
                            "text,id\nhello,h1\nworld,w2\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto b = rows(r.out);
  ASSERT_EQ(b.size(), 2U);
  EXPECT_EQ(b[1].first, "\"w2\"");
  const auto resume =
      run_warden("embed --model hashing-ngram-256 --input - --output " + path("o.npy") + " --resume", "a\n");
  EXPECT_EQ(resume.exit_code, 2);
  EXPECT_NE(resume.err.find("--resume cannot read stdin"), std::string::npos) << resume.err;
  // To a file: written whole, but no state is kept (nothing to resume from).
  const auto to_file = run_warden(
      "embed --model hashing-ngram-256 --input - --output " + path("o.npy") + " --progress none", "a\nb\n");
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_NE(read_file(path("o.npy")).find("'shape': (2, 256)"), std::string::npos);
  EXPECT_FALSE(fs::exists(path("o.npy.progress.json")));
}

TEST_F(BulkCommand, ProgressLinesWhenNotATerminal) {
  write_file_atomic(path("in.txt"), "a\nb\n");
  const auto r =
      run_warden("embed --model hashing-ngram-256 --input " + path("in.txt") + " --output " + path("o.f32"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warden: done: 2 records in"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(path("o.f32")).size(), 2U * 256 * 4);
  EXPECT_NE(read_file(path("o.f32.json")).find("\"rows\": 2"), std::string::npos);
}

TEST_F(BulkCommand, ModelDirBulkEqualsPlainEmbed) {
  const std::string model = path("bert");
  testing::run_fixture_command("warden-fixture --arch bert --preset tiny --seed 3 --out DIR", model);
  std::string jsonl;
  std::vector<std::string> texts;
  for (int i = 0; i < 40; ++i) {
    texts.push_back("text number " + std::to_string(i) + std::string(static_cast<std::size_t>(i % 7), '!'));
    jsonl += "{\"id\": " + std::to_string(100 + i) + ", \"text\": \"" + texts.back() + "\"}\n";
  }
  write_file_atomic(path("in.jsonl"), jsonl);
  const auto bulk = run_warden("embed --model-dir " + model + " --threads 1 --batch-size 4 --input " +
                               path("in.jsonl") + " --output " + path("out.jsonl") + " --progress none");
  ASSERT_EQ(bulk.exit_code, 0) << bulk.err;
  const auto b = rows(read_file(path("out.jsonl")));
  ASSERT_EQ(b.size(), 40U);
  std::string args = "embed --model-dir " + model + " --threads 1";
  for (const auto& t : texts) args += " '" + t + "'";
  const auto plain = run_warden(args);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto p = rows(plain.out);
  ASSERT_EQ(p.size(), 40U);
  for (std::size_t i = 0; i < 40; ++i) {
    EXPECT_EQ(b[i].first, std::to_string(100 + i));
    EXPECT_EQ(b[i].second, p[i].second) << i;
  }
}

// A causal LM's folder is an LLM reranker when --rerank-template names its template (mxbai's
// Qwen2 here, an embedder without it); the scores are the golden's.
TEST_F(BulkCommand, RerankTemplateMakesACausalLmAReranker) {
  const testing::ClassifierGolden golden = testing::read_classifier_golden("qwen2-mxbai-reranker");
  const std::filesystem::path model = testing::make_classifier_fixture("qwen2-mxbai-reranker");
  const testing::ClassifierCase& k = golden.cases.front();
  ASSERT_TRUE(k.pair.has_value() && k.instruction.empty());
  JsonWriter line;
  line.begin_object().key("id").value("p").key("query").value(k.text).key("text").value(*k.pair).end_object();
  write_file_atomic(path("pair.jsonl"), line.take() + "\n");
  const auto scored = run_warden("rerank --rerank-template mxbai-rerank-v2 --model-dir " + model.string() +
                                 " --input " + path("pair.jsonl") + " --progress none");
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  simdjson::dom::parser parser;
  EXPECT_NEAR(double(parser.parse(scored.out)["score"]), k.scores[0], 1e-4) << scored.out;
  const auto plain = run_warden("rerank --model-dir " + model.string() + " --input " + path("pair.jsonl") +
                                " --progress none");
  EXPECT_NE(plain.exit_code, 0) << plain.out;
  const auto unknown = run_warden("rerank --rerank-template nosuch --model-dir " + model.string() +
                                  " --input " + path("pair.jsonl") + " --progress none");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("nosuch"), std::string::npos) << unknown.err;
  std::filesystem::remove_all(model);
}

TEST_F(BulkCommand, RerankPairsQueryAndQueries) {
  const std::string model = path("reranker");
  testing::run_fixture_command("warden-fixture --arch bert --head reranker --preset tiny --seed 1 --out DIR",
                               model);
  write_file_atomic(path("pairs.jsonl"),
                    "{\"id\": \"p1\", \"query\": \"what is it\", \"query_id\": 7, \"text\": \"a thing\"}\n"
                    "{\"id\": \"p2\", \"query\": \"who\", \"text\": \"a person\"}\n");
  const auto pairs =
      run_warden("rerank --model-dir " + model + " --input " + path("pairs.jsonl") + " --progress none");
  ASSERT_EQ(pairs.exit_code, 0) << pairs.err;
  simdjson::dom::parser parser;
  const std::string first = pairs.out.substr(0, pairs.out.find('\n'));
  EXPECT_EQ(first.rfind("{\"id\":\"p1\",\"query_id\":7,\"score\":", 0), 0U) << first;
  const std::string second = pairs.out.substr(pairs.out.find('\n') + 1);
  EXPECT_EQ(second.rfind("{\"id\":\"p2\",\"score\":", 0), 0U) << second;

  // Raw logits: the score is their sigmoid.
  const auto raw = run_warden("rerank --raw-scores --model-dir " + model + " --input " + path("pairs.jsonl") +
                              " --progress none");
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  const double score = double(parser.parse(first)["score"]);
  const double logit = double(parser.parse(raw.out.substr(0, raw.out.find('\n')))["score"]);
  EXPECT_NEAR(score, 1.0 / (1.0 + std::exp(-logit)), 1e-6);

  // One --query: the same score as the pair with that query.
  write_file_atomic(path("passages.txt"), "a thing\na person\n");
  const auto one = run_warden("rerank --model-dir " + model + " --query 'what is it' --input " +
                              path("passages.txt") + " --output " + path("one.jsonl") + " --progress none");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const std::string one_out = read_file(path("one.jsonl"));
  EXPECT_EQ(one_out.rfind("{\"id\":0,\"score\":", 0), 0U) << one_out;
  EXPECT_EQ(double(parser.parse(one_out.substr(0, one_out.find('\n')))["score"]), score);

  // --queries: every query against every passage, with the queries' ids.
  write_file_atomic(path("queries.csv"), "id,text\nq1,what is it\nq2,who\n");
  const auto many = run_warden("rerank --model-dir " + model + " --queries " + path("queries.csv") +
                               " --input " + path("passages.txt") + " --progress none");
  ASSERT_EQ(many.exit_code, 0) << many.err;
  EXPECT_EQ(std::count(many.out.begin(), many.out.end(), '\n'), 4);
  EXPECT_EQ(many.out.rfind("{\"id\":0,\"query_id\":\"q1\",\"score\":", 0), 0U) << many.out;
  EXPECT_NE(many.out.find("{\"id\":1,\"query_id\":\"q2\",\"score\":"), std::string::npos) << many.out;

  // Scores are JSON lines only.
  const auto npy = run_warden("rerank --model-dir " + model + " --query q --input " + path("passages.txt") +
                              " --output " + path("scores.npy"));
  EXPECT_EQ(npy.exit_code, 2);
  EXPECT_NE(npy.err.find("rerank writes JSON lines"), std::string::npos) << npy.err;
  // A pairs input without queries is a data error naming the line.
  const auto missing = run_warden("rerank --model-dir " + model + " --input " + path("passages.txt") +
                                  " --input-format jsonl --progress none");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("passages.txt: line 1: invalid JSON"), std::string::npos) << missing.err;
}

TEST_F(BulkCommand, RerankRefusesTooManyQueriesAndBothQueryFlags) {
  std::string queries;
  for (int i = 0; i <= 10000; ++i) queries += "query " + std::to_string(i) + "\n";
  write_file_atomic(path("queries.txt"), queries);
  write_file_atomic(path("passages.txt"), "p\n");
  // The queries are read before the model is loaded, so no model is needed to see it.
  const auto many = run_warden("rerank --model-dir /nonexistent --queries " + path("queries.txt") +
                               " --input " + path("passages.txt"));
  EXPECT_EQ(many.exit_code, 2);
  EXPECT_NE(many.err.find("more than 10000 queries"), std::string::npos) << many.err;
  const auto both = run_warden("rerank --model-dir /nonexistent --query q --queries " + path("queries.txt") +
                               " --input " + path("passages.txt"));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("give --query or --queries, not both"), std::string::npos) << both.err;
}

// SIGINT: the job finishes its batch, checkpoints, says how to resume and exits 130; the
// resumed output is byte-identical to an uninterrupted run.
// --output-kind multi / sparse: each record's token vectors (.npy rows + CSR offsets) and sparse
// vector (JSON lines), equal to what the embedder gives for the record in-process.
TEST_F(BulkCommand, RetrievalOutputKindsWriteWhatTheEmbedderGives) {
  const std::string colbert = path("colbert");
  testing::run_fixture_command("warden-fixture --arch bert --preset tiny --seed 2 --colbert --out DIR",
                               colbert);
  const std::vector<std::string> texts = {"the quick brown fox!", "hello, world", "a"};
  std::string corpus;
  for (const auto& t : texts) corpus += t + "\n";
  write_file_atomic(path("in.txt"), corpus);
  const embed::NeuralEmbedder embedder(colbert, nullptr);
  for (const bool query : {false, true}) {
    const std::string out = path(query ? "q.npy" : "d.npy");
    const auto r = run_warden("embed --model-dir " + colbert + " --input " + path("in.txt") +
                              " --output-kind multi --output " + out + " --progress none" +
                              (query ? " --input-type query" : ""));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<embed::PreparedInput> prepared;
    embed::InputOptions o;
    o.query = query;
    for (const auto& t : texts) prepared.push_back(embedder.prepare(t, o));
    std::vector<const embed::PreparedInput*> ptrs;
    for (const auto& p : prepared) ptrs.push_back(&p);
    const auto want = embedder.embed_retrieval(ptrs);
    std::vector<float> rows;
    std::vector<std::int64_t> offsets{0};
    for (const auto& w : want) {
      rows.insert(rows.end(), w.multi.values().begin(), w.multi.values().end());
      offsets.push_back(offsets.back() + static_cast<std::int64_t>(w.multi.rows()));
    }
    const std::string data = read_file(out);
    ASSERT_EQ(data.size(), bulk::kNpyHeaderBytes + rows.size() * 4);
    EXPECT_EQ(data.substr(0, bulk::kNpyHeaderBytes), bulk::npy_header(rows.size() / 24, 24));
    EXPECT_EQ(std::memcmp(data.data() + bulk::kNpyHeaderBytes, rows.data(), rows.size() * 4), 0);
    const std::string offs = read_file(path(query ? "q.offsets.npy" : "d.offsets.npy"));
    ASSERT_EQ(offs.size(), bulk::kNpyHeaderBytes + offsets.size() * 8);
    EXPECT_EQ(std::memcmp(offs.data() + bulk::kNpyHeaderBytes, offsets.data(), offsets.size() * 8), 0);
    if (query) {
      EXPECT_EQ(offsets.back(), 3 * 32);  // queries expanded to 32 tokens
    }
  }
  // The sparse kind on a bge-m3-shaped model.
  const std::string m3 = path("m3");
  testing::run_fixture_command(
      "warden-fixture --arch xlm-roberta --preset tiny --seed 2 --m3-heads --out DIR", m3);
  const auto s = run_warden("embed --model-dir " + m3 + " --input " + path("in.txt") +
                            " --output-kind sparse --progress none");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const embed::NeuralEmbedder m3_embedder(m3, nullptr);
  simdjson::dom::parser parser;
  std::size_t start = 0;
  for (const auto& t : texts) {
    const embed::PreparedInput p = m3_embedder.prepare(t, {});
    const embed::PreparedInput* one = &p;
    const SparseVector want = m3_embedder.embed_retrieval({&one, 1})[0].sparse;
    const std::size_t end = s.out.find('\n', start);
    const simdjson::dom::element line = parser.parse(s.out.substr(start, end - start));
    start = end + 1;
    std::vector<std::uint32_t> indices;
    for (const auto i : line["indices"].get_array()) indices.push_back(std::uint32_t(std::uint64_t(i)));
    EXPECT_EQ(indices, want.indices) << t;
    std::size_t k = 0;
    for (const auto v : line["values"].get_array()) EXPECT_EQ(float(double(v)), want.values.at(k++)) << t;
  }
  // What a model or a format cannot give is a usage error naming it.
  for (const std::string& bad : {"--model-dir " + colbert + " --output-kind sparse",
                                 "--model-dir " + m3 + " --output-kind multi --output " + path("x.jsonl"),
                                 "--model-dir " + colbert + " --output " + path("y.jsonl")}) {
    const auto r = run_warden("embed --input " + path("in.txt") + " --progress none " + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_NE(r.err.find("output"), std::string::npos) << r.err;
  }
  EXPECT_NE(run_warden("embed --model-dir " + colbert + " --output-kind multi hello").exit_code, 0);
}

// --pooling splade: a masked-LM folder without sentence-transformers' modules gives the sparse
// vectors its SparseEncoder folder gives.
TEST_F(BulkCommand, PoolingSpladeMakesAMaskedLmFolderSparse) {
  const std::string model = path("splade");
  testing::run_fixture_command("warden-fixture --arch bert --preset tiny --seed 4 --splade --out DIR", model);
  write_file_atomic(path("in.txt"), "the quick brown fox\na\n");
  const std::string args = " --input " + path("in.txt") + " --output-kind sparse --progress none";
  const auto with_modules = run_warden("embed --model-dir " + model + args);
  ASSERT_EQ(with_modules.exit_code, 0) << with_modules.err;
  fs::remove(fs::path(model) / "modules.json");
  EXPECT_NE(run_warden("embed --model-dir " + model + args).exit_code, 0);  // a dense encoder now
  const auto flagged = run_warden("embed --model-dir " + model + " --pooling splade" + args);
  ASSERT_EQ(flagged.exit_code, 0) << flagged.err;
  EXPECT_EQ(flagged.out, with_modules.out);
  EXPECT_NE(run_warden("embed --model-dir " + model + " --pooling weighted" + args).exit_code, 0);
}

TEST_F(BulkCommand, SigintStopsResumablyAndResumeIsByteIdentical) {
  std::string corpus;
  for (int i = 0; i < 100000; ++i) corpus += "line " + std::to_string(i * 7919 % 100003) + " of the corpus\n";
  write_file_atomic(path("in.txt"), corpus);
  const std::string out = path("out.npy");
  const std::string state = out + ".progress.json";
  const std::string err = path("err");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string in = path("in.txt");
    (void)std::freopen(err.c_str(), "w", stderr);
    ::execl(testing::warden_binary().c_str(), "warden", "embed", "--model", "hashing-ngram-256", "--input",
            in.c_str(), "--output", out.c_str(), "--progress", "none", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // The state file appears before the first chunk is read: interrupt then.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!fs::exists(state) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  const std::string message = read_file(err);
  ASSERT_EQ(WEXITSTATUS(status), 130) << message;
  EXPECT_NE(message.find("interrupted after"), std::string::npos) << message;
  EXPECT_NE(message.find("rerun with --resume to continue"), std::string::npos) << message;
  EXPECT_TRUE(fs::exists(state));

  const auto resumed = run_warden("embed --model hashing-ngram-256 --input " + path("in.txt") + " --output " +
                                  out + " --progress none --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming after"), std::string::npos) << resumed.err;
  const auto reference = run_warden("embed --model hashing-ngram-256 --input " + path("in.txt") +
                                    " --output " + path("ref.npy") + " --progress none");
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  // A corpus output, past read_file's default bound for configs.
  constexpr std::size_t kAny = std::numeric_limits<std::size_t>::max();
  EXPECT_TRUE(read_file(out, kAny) == read_file(path("ref.npy"), kAny));
  EXPECT_TRUE(read_file(out + ".ids.jsonl") == read_file(path("ref.npy.ids.jsonl")));
  EXPECT_FALSE(fs::exists(state));
}

}  // namespace
}  // namespace warden
