// PyTorch checkpoints read without executing anything: the tensors torch.save wrote (every
// float dtype, parameters, views sharing a storage, protocols 2 and 4) equal what torch holds
// (tests/data/torch, tools/torch_fixtures/make_torch_checkpoints.py); pickles that try to call
// anything else are refused naming the global; broken archives are errors, never crashes.

#include "model/formats/torch_checkpoint.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "fixtures/fixture.hpp"
#include "model/encoder_model.hpp"
#include "model/formats/torch_pickle.hpp"
#include "model/temp_dir.hpp"

namespace warden {
namespace {

namespace fs = std::filesystem;

fs::path data(const std::string& name) {
  return fs::path(WARDEN_TEST_DATA) / "torch" / name;
}

std::vector<double> values(const model::formats::Tensor& t) {
  std::vector<double> out;
  const std::size_t n = t.element_count();
  for (std::size_t i = 0; i < n; ++i) {
    const std::byte* p = t.data.data() + i * model::formats::dtype_size(t.dtype);
    switch (t.dtype) {
      case model::formats::Dtype::F32: {
        float f = 0;
        std::memcpy(&f, p, 4);
        out.push_back(f);
        break;
      }
      case model::formats::Dtype::F64: {
        double d = 0;
        std::memcpy(&d, p, 8);
        out.push_back(d);
        break;
      }
      case model::formats::Dtype::F16:
      case model::formats::Dtype::BF16: {
        std::uint16_t b = 0;
        std::memcpy(&b, p, 2);
        out.push_back(t.dtype == model::formats::Dtype::F16 ? model::formats::f16_to_float(b)
                                                            : model::formats::bf16_to_float(b));
        break;
      }
      case model::formats::Dtype::I64: {
        std::int64_t v = 0;
        std::memcpy(&v, p, 8);
        out.push_back(static_cast<double>(v));
        break;
      }
      default:
        ADD_FAILURE() << "unexpected dtype " << model::formats::dtype_name(t.dtype);
    }
  }
  return out;
}

std::string torch_dtype(model::formats::Dtype d) {
  switch (d) {
    case model::formats::Dtype::F32:
      return "float32";
    case model::formats::Dtype::F16:
      return "float16";
    case model::formats::Dtype::BF16:
      return "bfloat16";
    case model::formats::Dtype::F64:
      return "float64";
    case model::formats::Dtype::I64:
      return "int64";
    default:
      return std::string(model::formats::dtype_name(d));
  }
}

TEST(TorchCheckpoint, TensorsEqualWhatTorchSaved) {
  simdjson::dom::parser parser;
  const std::string text = read_file(data("state_dict.json"));
  const simdjson::dom::object expect = parser.parse(text).get_object();
  for (const char* file : {"state_dict.pt", "protocol4.pt"}) {
    SCOPED_TRACE(file);
    const model::formats::TorchCheckpoint ckpt(data(file));
    std::size_t seen = 0;
    for (const auto [name, want] : expect) {
      SCOPED_TRACE(std::string(name));
      const model::formats::Tensor* t = ckpt.find(name);
      ASSERT_NE(t, nullptr);
      ++seen;
      EXPECT_EQ(torch_dtype(t->dtype), std::string_view(want["dtype"]));
      std::vector<std::size_t> shape;
      for (const auto d : want["shape"].get_array()) shape.push_back(static_cast<std::size_t>(int64_t(d)));
      EXPECT_EQ(t->shape, shape);
      std::vector<double> v;
      for (const auto x : want["values"].get_array()) {
        v.push_back(x.is_int64() ? static_cast<double>(int64_t(x)) : double(x));
      }
      EXPECT_EQ(values(*t), v);
    }
    EXPECT_EQ(seen, ckpt.tensors().size());
    // Views are in place: the offset view starts 2 floats into the whole one's storage.
    EXPECT_EQ(ckpt.find("view.offset")->data.data(), ckpt.find("view.whole")->data.data() + 8);
  }
}

TEST(TorchCheckpoint, PicklesThatCallAnythingElseAreRefusedByName) {
  const fs::path marker = "/tmp/warden-pwned";
  fs::remove(marker);
  const std::vector<std::pair<std::string, std::string>> cases{
      // Protocol 2 writes Python 3's builtins and subprocess under their Python 2 names.
      {"hostile-os-system.pt", "posix.system"},      {"hostile-builtins-eval.pt", "__builtin__.eval"},
      {"hostile-builtins-exec.pt", "builtins.exec"}, {"hostile-subprocess.pt", "commands.Popen"},
      {"hostile-getattr.pt", "__builtin__.getattr"}, {"hostile-in-dict.pt", "posix.system"},
  };
  for (const auto& [file, global] : cases) {
    SCOPED_TRACE(file);
    try {
      const model::formats::TorchCheckpoint ckpt(data(file));
      ADD_FAILURE() << "loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::CorruptFile) << e.what();
      EXPECT_NE(std::string(e.what()).find("refusing the global " + global), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(marker));
}

TEST(TorchCheckpoint, NonContiguousTensorsAndTheLegacyFormatAreNamed) {
  try {
    const model::formats::TorchCheckpoint ckpt(data("noncontiguous.pt"));
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("tensor t is not contiguous"), std::string::npos) << e.what();
  }
  // torch.save(_use_new_zipfile_serialization=False): a bare pickle stream.
  const std::string legacy = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.";
  try {
    (void)model::formats::parse_torch_checkpoint(std::as_bytes(std::span(legacy)), "old.bin");
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("pre-1.6"), std::string::npos) << e.what();
  }
}

std::vector<std::byte> bytes_of(const fs::path& p) {
  const std::string s = read_file(p);
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

// Every truncation and a set of byte changes at every position: an error or a load, never a
// crash or a read outside the buffer (the sanitizer trees run this too).
TEST(TorchCheckpoint, TruncatedAndCorruptedArchivesAreErrors) {
  const std::vector<std::byte> good = bytes_of(data("state_dict.pt"));
  for (std::size_t n = 0; n < good.size(); ++n) {
    const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW((void)model::formats::parse_torch_checkpoint(cut, "cut.pt"), Error) << n;
  }
  std::size_t loaded = 0;
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (const unsigned char v : {0x00, 0xFF, 0x01, 0x80}) {
      std::vector<std::byte> bad = good;
      if (bad[i] == std::byte{v}) continue;
      bad[i] = std::byte{v};
      try {
        (void)model::formats::parse_torch_checkpoint(bad, "bad.pt");
        ++loaded;  // a change in tensor bytes, or in a field nobody reads
      } catch (const Error&) {
      }
    }
  }
  EXPECT_GT(loaded, 0U);
}

std::span<const std::byte> as_bytes(const std::string& s) {
  return std::as_bytes(std::span(s));
}

void expect_refused(const std::string& pickle, const std::string& names) {
  try {
    (void)model::formats::read_state_dict_pickle(as_bytes(pickle), "p.pkl");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile) << e.what();
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(TorchPickle, OnlyWhatAStateDictNeedsIsUnderstood) {
  using namespace std::string_literals;
  // An empty OrderedDict is an empty state dict.
  EXPECT_TRUE(model::formats::read_state_dict_pickle(as_bytes("\x80\x02"
                                                              "ccollections\nOrderedDict\n)R."),
                                                     "p")
                  .empty());
  expect_refused("\x80\x02K\x01.", "holds an int");  // not a dict
  expect_refused(
      "\x80\x02"
      "cos\nsystem\n.",
      "os.system");                                           // the global itself, before any call
  expect_refused("\x80\x02(I1\n.", "opcode 0x49");            // text-mode INT
  expect_refused("\x80\x02}q\x00h\x00."s, "a list or dict");  // a second reference to a dict
  expect_refused(
      "\x80\x02"
      "ccollections\nOrderedDict\n(K\x01tR.",
      "from arguments");
  expect_refused("\x80\x02}", "without STOP");
  std::string deep = "\x80\x02)";
  for (int i = 0; i < 40; ++i) deep += "\x85";  // ((((),),),) ... 40 levels
  expect_refused(deep + ".", "nest too deeply");
  std::string wide = "\x80\x02(";
  for (int i = 0; i < 100000; ++i) wide += "N";  // a long but flat mark: fine to hold, then refused
  expect_refused(wide + "t.", "holds a tuple");
}

// warden-fixture --format pytorch writes what torch.save writes (torch.load reads it: checked
// with Debian's python3-torch when the writer was made); the same weights from
// pytorch_model.bin and from model.safetensors give bit-identical tensors and outputs.
TEST(TorchCheckpoint, AModelFromPytorchModelBinIsBitIdenticalToItsSafetensors) {
  const testing::TempDir tmp;
  for (const auto& [arch, head] : {std::pair{std::string_view("bert"), fixtures::Head::None},
                                   std::pair{std::string_view("modernbert"), fixtures::Head::Reranker},
                                   std::pair{std::string_view("deberta-v2"), fixtures::Head::Classifier}}) {
    const std::string label = std::string(arch) + "-" + std::string(fixtures::head_name(head));
    SCOPED_TRACE(label);
    fixtures::FixtureOptions options;
    options.arch = arch;
    options.head = head;
    options.seed = 3;
    const fs::path st_dir = tmp / (label + "-st");
    fixtures::write_fixture(options, st_dir);
    options.pytorch_weights = true;
    const fs::path pt_dir = tmp / (label + "-pt");
    fixtures::write_fixture(options, pt_dir);
    ASSERT_TRUE(fs::exists(pt_dir / "pytorch_model.bin"));
    ASSERT_FALSE(fs::exists(pt_dir / "model.safetensors"));

    const auto st = model::formats::ModelWeights::open_dir(st_dir);
    const auto pt = model::formats::ModelWeights::open_dir(pt_dir);
    ASSERT_EQ(st.names(), pt.names());
    for (const std::string_view name : st.names()) {
      const model::formats::Tensor& a = *st.find(name);
      const model::formats::Tensor& b = *pt.find(name);
      EXPECT_EQ(a.shape, b.shape) << name;
      ASSERT_EQ(a.data.size(), b.data.size()) << name;
      EXPECT_EQ(std::memcmp(a.data.data(), b.data.data(), a.data.size()), 0) << name;
    }

    const auto m_st = model::load_encoder_model(st_dir);
    const auto m_pt = model::load_encoder_model(pt_dir);
    model::engine::TokenBatch batch;
    const std::uint32_t first = arch == "modernbert" ? 985 : arch == "deberta-v2" ? 1 : 101;
    batch.add(std::vector<std::uint32_t>{first, 300, 301, 302, 303, first + 1});
    batch.add(std::vector<std::uint32_t>{first, 400, first + 1});
    model::engine::EncoderWorkspace ws_st, ws_pt;
    const auto h_st = m_st->encoder.forward(batch, ws_st, nullptr);
    const std::vector<float> a(h_st.begin(), h_st.end());
    const auto h_pt = m_pt->encoder.forward(batch, ws_pt, nullptr);
    const std::vector<float> b(h_pt.begin(), h_pt.end());
    EXPECT_EQ(a, b);
  }
}

}  // namespace
}  // namespace warden
