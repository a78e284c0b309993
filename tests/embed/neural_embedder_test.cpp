// End to end through the tokenizer, the encoder and the folder's pooling: the embedding of
// each golden text must equal the reference's normalised embedding for the pooling the
// fixture declares.

#include "embed/neural_embedder.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "support/golden_fixture.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;

void make_fixture(const std::string& golden_name, const fs::path& out) {
  simdjson::dom::parser parser;
  const std::string text = read_file(fs::path(WARDEN_TEST_DATA) / "goldens" / (golden_name + ".json"));
  const simdjson::dom::element golden = parser.parse(text);
  testing::run_fixture_command(std::string_view(golden["fixture"]["command"]), out);
}

TEST(NeuralEmbedder, EmbedsLikeTheReferenceForEveryEmbeddingFixture) {
  ThreadPool pool(2);
  for (const std::string name :
       {"bert-none", "xlm-roberta-none", "distilbert-none", "deberta-v2-none", "jina-bert-none", "mpnet-none",
        "nomic-bert-none", "gte-none", "modernbert-none", "qwen3-none"}) {
    SCOPED_TRACE(name);
    const fs::path dir = fs::temp_directory_path() / ("warden-embedder-" + std::to_string(::getpid()) + name);
    make_fixture(name, dir);
    const embed::NeuralEmbedder embedder(dir, &pool);
    EXPECT_TRUE(embedder.semantic());

    simdjson::dom::parser parser;
    const std::string text = read_file(fs::path(WARDEN_TEST_DATA) / "goldens" / (name + ".json"));
    const simdjson::dom::element golden = parser.parse(text);
    EXPECT_EQ(embedder.dim(), static_cast<std::size_t>(int64_t(golden["reference"]["hidden_size"])));
    const std::string pooling{std::string_view(golden["fixture"]["declared_pooling"])};
    const std::string key = pooling == "lasttoken" ? "last" : pooling;
    std::vector<std::string> inputs;
    std::vector<std::vector<float>> want;
    for (const auto c : golden["cases"].get_array()) {
      inputs.emplace_back(std::string_view(c["input"]));
      std::vector<float> v;
      for (const auto x : c["normalized"][key].get_array()) v.push_back(static_cast<float>(double(x)));
      want.push_back(std::move(v));
    }
    const std::vector<std::string_view> views(inputs.begin(), inputs.end());
    const Embeddings got = embedder.embed(views);
    ASSERT_EQ(got.rows(), inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      for (std::size_t d = 0; d < got.dim(); ++d) {
        ASSERT_NEAR(got.row(i)[d], want[i][d], 1e-4) << "input '" << inputs[i] << "' dim " << d;
      }
    }
    fs::remove_all(dir);
  }
}

TEST(NeuralEmbedder, InputsAreCutWhereSentenceTransformersCutsThem) {
  // sentence_bert_config.json's max_seq_length, as sentence-transformers and TEI; without the
  // file, the tokenizer.json's own truncation (512 in the BERT fixture).
  ThreadPool pool(1);
  const fs::path dir = fs::temp_directory_path() / ("warden-embedder-maxlen-" + std::to_string(::getpid()));
  make_fixture("bert-none", dir);
  write_file_atomic(dir / "sentence_bert_config.json", R"({"max_seq_length": 16, "do_lower_case": false})");
  EXPECT_EQ(embed::NeuralEmbedder(dir, &pool).max_input_tokens(), 16U);
  write_file_atomic(dir / "sentence_bert_config.json",
                    R"({"max_seq_length": 100000})");  // past the positions
  EXPECT_EQ(embed::NeuralEmbedder(dir, &pool).max_input_tokens(), 512U);
  fs::remove(dir / "sentence_bert_config.json");
  EXPECT_EQ(embed::NeuralEmbedder(dir, &pool).max_input_tokens(), 512U);
  fs::remove_all(dir);
}

TEST(NeuralEmbedder, MissingFolderAndInvalidUtf8AreClearErrors) {
  ThreadPool pool(1);
  try {
    const embed::NeuralEmbedder e("/nonexistent/model", &pool);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotFound);
  }
  const fs::path dir = fs::temp_directory_path() / ("warden-embedder-utf8-" + std::to_string(::getpid()));
  make_fixture("bert-none", dir);
  const embed::NeuralEmbedder embedder(dir, &pool);
  const std::string_view bad[] = {"fine", "bad \xFF"};
  EXPECT_THROW((void)embedder.embed(bad), Error);
  const std::string_view none[] = {""};
  EXPECT_EQ(embedder.embed(none).rows(), 1U);  // empty text is [CLS] [SEP], still a vector
  fs::remove_all(dir);
}

}  // namespace
}  // namespace warden
