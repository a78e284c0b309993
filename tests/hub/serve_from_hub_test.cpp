// Models named by HuggingFace id, end to end: the catalog (src/catalog/) fetches a real
// fixture model from the fake hub into the HF cache and loads it, and it embeds exactly as
// the same folder loaded from disk; `warden serve` stops with exit code 2 and one line
// when a model cannot be fetched or found. Also the catalog's other sources and its
// start-up checks, and --model's ALIAS=SOURCE syntax.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "catalog/model_catalog.hpp"
#include "cli/run_warden.hpp"
#include "core/error.hpp"
#include "core/file.hpp"
#include "core/thread_pool.hpp"
#include "embed/neural_embedder.hpp"
#include "hub/fake_hub.hpp"
#include "hub/hub_fixture.hpp"
#include "support/golden_fixture.hpp"

namespace warden::testing {
namespace {

namespace fs = std::filesystem;

// A repo holding every file of a folder made by warden-fixture (weights as LFS).
FakeRepo repo_from_fixture(const std::string& fixture_command, const fs::path& dir, const std::string& name) {
  run_fixture_command(fixture_command, dir);
  FakeRepo repo;
  repo.repo = name;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), dir).generic_string();
    repo.files[rel] = read_file(e.path());
    if (rel.ends_with(".safetensors")) repo.lfs.insert(rel);
  }
  return repo;
}

class CatalogHubTest : public HubTest {
 protected:
  void SetUp() override {
    HubTest::SetUp();
    fixture_ = cache_.parent_path() / (cache_.filename().string() + "-fixture");
    fs::remove_all(fixture_);
  }
  void TearDown() override {
    fs::remove_all(fixture_);
    HubTest::TearDown();
  }
  catalog::CatalogOptions catalog_options(const FakeHub& hub) {
    catalog::CatalogOptions o;
    o.pool = &pool_;
    o.hub.endpoint = hub.endpoint();
    o.hub.cache_dir = cache_;
    return o;
  }
  fs::path fixture_;
  ThreadPool pool_{1};
};

TEST_F(CatalogHubTest, AnHfIdIsFetchedAndEmbedsAsTheFolderDoes) {
  const FakeRepo repo = repo_from_fixture("warden-fixture --arch bert --preset tiny --seed 1 --out DIR",
                                          fixture_, "acme/tiny-bert");
  FakeHub hub(repo);
  const catalog::CatalogModel m =
      catalog::make_model_spec(catalog::parse_model_arg("acme/tiny-bert"), catalog_options(hub));
  EXPECT_EQ(m.spec.name, "acme/tiny-bert");
  EXPECT_EQ(m.spec.source, "acme/tiny-bert");
  EXPECT_EQ(m.spec.tier, "hub");
  EXPECT_EQ(m.spec.kind, ModelKind::Embedding);
  EXPECT_TRUE(m.spec.semantic);
  EXPECT_GT(m.spec.estimated_bytes, 0U);
  EXPECT_TRUE(m.dir.string().starts_with(cache_.string())) << m.dir;
  EXPECT_GT(m.width, 0U);

  const auto loaded = m.spec.load();
  ASSERT_NE(loaded->embedder, nullptr);
  const embed::NeuralEmbedder local(fixture_, &pool_);
  const std::string_view text[] = {"how do I ignore whitespace in git diff?"};
  const Embeddings a = loaded->embedder->embed(text);
  const Embeddings b = local.embed(text);
  ASSERT_EQ(a.dim(), b.dim());
  for (std::size_t i = 0; i < a.dim(); ++i) EXPECT_EQ(a.row(0)[i], b.row(0)[i]) << i;

  // An alias and a pinned revision; the second fetch comes from the cache.
  hub.clear_requests();
  const catalog::CatalogModel aliased = catalog::make_model_spec(
      catalog::parse_model_arg("bert=acme/tiny-bert@" + repo.commit), catalog_options(hub));
  EXPECT_EQ(aliased.spec.name, "bert");
  EXPECT_EQ(aliased.dir, m.dir);
  EXPECT_EQ(hub.content_gets(), 0);
}

TEST_F(CatalogHubTest, ARerankerRepoIsAReranker) {
  const FakeRepo repo =
      repo_from_fixture("warden-fixture --arch bert --head reranker --preset tiny --seed 1 --out DIR",
                        fixture_, "acme/tiny-reranker");
  FakeHub hub(repo);
  const catalog::CatalogModel m =
      catalog::make_model_spec(catalog::parse_model_arg("acme/tiny-reranker"), catalog_options(hub));
  EXPECT_EQ(m.spec.kind, ModelKind::Reranker);
  const auto loaded = m.spec.load();
  ASSERT_NE(loaded->classifier, nullptr);
  EXPECT_EQ(loaded->classifier->labels().size(), 1U);
}

TEST_F(CatalogHubTest, AMissingIdIsNotFoundOrFallsBack) {
  FakeHub hub(tiny_repo());
  catalog::CatalogOptions o = catalog_options(hub);
  try {
    (void)catalog::make_model_spec(catalog::parse_model_arg("acme/missing"), o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotFound);
    EXPECT_NE(std::string(e.what()).find("model 'acme/missing'"), std::string::npos) << e.what();
  }
  o.on_error = catalog::OnModelError::Fallback;
  const catalog::CatalogModel m = catalog::make_model_spec(catalog::parse_model_arg("e5=acme/missing"), o);
  EXPECT_EQ(m.spec.name, "e5");
  EXPECT_FALSE(m.spec.semantic);
  EXPECT_EQ(m.spec.tier, "lexical-fallback");
  EXPECT_NE(m.spec.fallback_reason.find("acme/missing"), std::string::npos) << m.spec.fallback_reason;
  const auto loaded = m.spec.load();
  ASSERT_NE(loaded->embedder, nullptr);
  EXPECT_EQ(loaded->embedder->id(), "hashing-ngram-256");
}

TEST_F(CatalogHubTest, FoldersAreCheckedBeforeTheyAreServed) {
  catalog::CatalogOptions o;
  o.pool = &pool_;
  o.hub.offline = true;
  o.hub.cache_dir = cache_;
  auto error_of = [&](const std::string& arg) -> std::string {
    try {
      (void)catalog::make_model_spec(catalog::parse_model_arg(arg), o);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of("/nowhere/model").find("/nowhere/model does not exist"), std::string::npos);
  EXPECT_NE(error_of("not a model").find("neither a built-in"), std::string::npos);
  run_fixture_command("warden-fixture --arch bert --preset tiny --seed 1 --out DIR", fixture_);
  EXPECT_EQ(error_of(fixture_.string()), "");
  fs::remove(fixture_ / "tokenizer.json");
  fs::remove(fixture_ / "vocab.txt");
  EXPECT_NE(error_of(fixture_.string()).find("has no tokenizer"), std::string::npos);
  write_file_atomic(fixture_ / "config.json", "{not json");
  EXPECT_NE(error_of(fixture_.string()).find("config.json"), std::string::npos);
  // A built-in by name, under its name or an alias.
  const catalog::CatalogModel h =
      catalog::make_model_spec(catalog::parse_model_arg("lex=hashing-ngram-256"), o);
  EXPECT_EQ(h.spec.name, "lex");
  EXPECT_FALSE(h.spec.semantic);
  EXPECT_EQ(h.spec.tier, "builtin");
}

TEST(ModelArg, SplitsAnAliasOnlyWhenItLooksLikeOne) {
  auto arg = catalog::parse_model_arg("bge=BAAI/bge-small-en-v1.5");
  EXPECT_EQ(arg.alias, "bge");
  EXPECT_EQ(arg.source, "BAAI/bge-small-en-v1.5");
  arg = catalog::parse_model_arg("/models/a=b");
  EXPECT_EQ(arg.alias, "");
  EXPECT_EQ(arg.source, "/models/a=b");
  // An alias is a plain name (no '/'): before a '/', the '=' belongs to the source.
  arg = catalog::parse_model_arg("org/name=x");
  EXPECT_EQ(arg.alias, "");
  EXPECT_EQ(arg.source, "org/name=x");
  for (const char* bad : {"a..b=x", "bad name=x", "-a=x", "a\x01=x", "a%2F=x"}) {
    EXPECT_THROW((void)catalog::parse_model_arg(bad), Error) << bad;
  }
  arg = catalog::parse_model_arg("use-lite");
  EXPECT_EQ(arg.alias, "");
  EXPECT_EQ(arg.source, "use-lite");
  EXPECT_THROW((void)catalog::parse_model_arg("a="), Error);
  EXPECT_THROW((void)catalog::parse_model_arg(""), Error);
}

// Every command opens --model through the catalog, as serve does: `warden embed --model ORG/NAME`
// fetches the repo and embeds exactly as the same folder does; rerank and quantize take ids
// too, and an embedder is refused where a reranker is needed (and the other way round).
TEST_F(CatalogHubTest, CommandsTakeAnHfIdAsServeDoes) {
  const FakeRepo repo = repo_from_fixture("warden-fixture --arch bert --preset tiny --seed 1 --out DIR",
                                          fixture_, "acme/tiny-bert");
  FakeHub hub(repo);
  const std::string env = "HF_ENDPOINT=" + hub.endpoint() + " HF_HUB_CACHE=" + cache_.string() + " ";
  const RunResult by_id =
      run_warden("embed --model acme/tiny-bert --threads 1 'hello world' 'a second text'", "", env);
  ASSERT_EQ(by_id.exit_code, 0) << by_id.err;
  EXPECT_NE(by_id.err.find("downloaded "), std::string::npos) << by_id.err;
  const RunResult by_dir =
      run_warden("embed --model-dir " + fixture_.string() + " --threads 1 'hello world' 'a second text'");
  ASSERT_EQ(by_dir.exit_code, 0) << by_dir.err;
  EXPECT_EQ(by_id.out, by_dir.out);
  EXPECT_FALSE(by_id.out.empty());
  // Cached now: offline works, and says nothing about downloads.
  const RunResult offline =
      run_warden("embed --model acme/tiny-bert --threads 1 'hello world' 'a second text'", "",
                 "HF_HUB_OFFLINE=1 HF_HUB_CACHE=" + cache_.string() + " ");
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_EQ(offline.out, by_dir.out);

  const RunResult wrong_kind = run_warden("rerank --model acme/tiny-bert --query q --input -", "text\n", env);
  EXPECT_EQ(wrong_kind.exit_code, 2) << wrong_kind.err;
  EXPECT_NE(wrong_kind.err.find("needs a reranker or classifier model"), std::string::npos) << wrong_kind.err;
  const RunResult missing = run_warden("embed --model acme/missing hi", "", env);
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("model 'acme/missing'"), std::string::npos) << missing.err;

  const fs::path out = fixture_.parent_path() / (fixture_.filename().string() + "-int8");
  fs::remove_all(out);
  const RunResult q = run_warden("quantize acme/tiny-bert " + out.string(), "", env);
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_TRUE(fs::exists(out / "config.json"));
  fs::remove_all(out);
}

TEST_F(CatalogHubTest, RerankTakesAnHfId) {
  const FakeRepo repo =
      repo_from_fixture("warden-fixture --arch bert --head reranker --preset tiny --seed 1 --out DIR",
                        fixture_, "acme/tiny-reranker");
  FakeHub hub(repo);
  const std::string env = "HF_ENDPOINT=" + hub.endpoint() + " HF_HUB_CACHE=" + cache_.string() + " ";
  const RunResult by_id =
      run_warden("rerank --model acme/tiny-reranker --threads 1 --query 'what' --input - --progress none",
                 "a\nb\n", env);
  ASSERT_EQ(by_id.exit_code, 0) << by_id.err;
  const RunResult by_dir = run_warden(
      "rerank --model-dir " + fixture_.string() + " --threads 1 --query 'what' --input - --progress none",
      "a\nb\n");
  ASSERT_EQ(by_dir.exit_code, 0) << by_dir.err;
  EXPECT_EQ(by_id.out, by_dir.out);
  const RunResult wrong_kind = run_warden("embed --model acme/tiny-reranker hi", "", env);
  EXPECT_EQ(wrong_kind.exit_code, 2) << wrong_kind.err;
  EXPECT_NE(wrong_kind.err.find("needs an embedding model"), std::string::npos) << wrong_kind.err;
}

TEST_F(HubTest, ServeStopsWithCode2WhenAModelCannotBeFetched) {
  FakeHub hub(tiny_repo());
  const std::string env = "HF_ENDPOINT=" + hub.endpoint() + " HF_HUB_CACHE=" + cache_.string() + " ";
  // run_warden pastes its arguments after the binary; the environment goes through env(1).
  RunResult r = run_warden("serve --model acme/missing --port 0 --no-guard", "", env);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("model 'acme/missing'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("listening"), std::string::npos) << r.err;

  r = run_warden("serve --model acme/tiny-bert --port 0 --no-guard", "",
                 "HF_HUB_OFFLINE=1 HF_HUB_CACHE=" + cache_.string() + " ");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("HF_HUB_OFFLINE"), std::string::npos) << r.err;

  r = run_warden("serve --model /nowhere/at/all --port 0 --no-guard");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/nowhere/at/all does not exist"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace warden::testing
