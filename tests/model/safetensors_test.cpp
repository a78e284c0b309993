#include "model/formats/safetensors.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/file.hpp"
#include "model/temp_dir.hpp"

namespace warden {
namespace {

std::span<const std::byte> as_bytes(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

template <typename T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}

// A safetensors image with a hand-written header: how the corruption tests build bad files.
std::string image(std::string_view header, std::size_t data_bytes,
                  std::uint64_t declared_length = UINT64_MAX) {
  const std::uint64_t n = declared_length == UINT64_MAX ? header.size() : declared_length;
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  out += header;
  out.append(data_bytes, '\x11');
  return out;
}

// Parses `bytes` and returns the CorruptFile message (fails the test if it parses).
std::string corrupt_message(const std::string& bytes) {
  try {
    model::formats::parse_safetensors(as_bytes(bytes), "bad.safetensors");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::CorruptFile) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "parsed without error";
  return {};
}

TEST(Safetensors, WriterMatchesTheRustCrateBytes) {
  // The crate's own test vectors (safetensors/src/tensor.rs: test_serialization,
  // test_serialization_forced_alignement, test_empty).
  const std::vector<float> values{0, 1, 2, 3, 4, 5};
  const std::vector<model::formats::TensorToWrite> one{
      {"attn.0", model::formats::Dtype::F32, {1, 2, 3}, bytes_of(values)}};
  std::string expected = image(R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})", 0);
  // A 64-byte header: already a multiple of 8, so no padding.
  expected.append(reinterpret_cast<const char*>(values.data()), 24);
  EXPECT_EQ(model::formats::serialize_safetensors(one, {}), expected);

  const std::vector<model::formats::TensorToWrite> aligned{
      {"attn0", model::formats::Dtype::F32, {1, 1, 2, 3}, bytes_of(values)}};
  const std::string out = model::formats::serialize_safetensors(aligned, {});
  EXPECT_EQ(out.substr(0, 8), std::string("\x48\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(out.substr(8, 72), R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       )");

  EXPECT_EQ(model::formats::serialize_safetensors({}, {}), std::string("\x08\0\0\0\0\0\0\0{}      ", 16));
  EXPECT_EQ(model::formats::serialize_safetensors({}, {{"framework", "pt"}}),
            std::string("\x28\0\0\0\0\0\0\0", 8) + R"({"__metadata__":{"framework":"pt"}})" + "     ");
}

TEST(Safetensors, WriterOrdersByDtypeDescendingThenName) {
  const std::vector<std::byte> four(4), two(2), eight(8);
  const std::vector<model::formats::TensorToWrite> tensors{
      {"b", model::formats::Dtype::F32, {1}, four},  {"a", model::formats::Dtype::F16, {1}, two},
      {"z", model::formats::Dtype::I64, {1}, eight}, {"a", model::formats::Dtype::F32, {1}, four},
      {"c", model::formats::Dtype::F64, {1}, eight}, {"m", model::formats::Dtype::BF16, {1}, two},
  };
  EXPECT_THROW(model::formats::serialize_safetensors(tensors, {}), Error);  // "a" twice
  std::vector<model::formats::TensorToWrite> unique = tensors;
  unique[1].name = "d";
  const std::string out = model::formats::serialize_safetensors(unique, {{"format", "pt"}});
  const auto header = model::formats::parse_safetensors(as_bytes(out), "x");
  std::vector<std::string> order;
  for (const auto& t : header.tensors) order.push_back(t.name);
  // I64 > F64 > F32 > BF16 > F16 in the crate's enum order.
  EXPECT_EQ(order, (std::vector<std::string>{"z", "c", "a", "b", "m", "d"}));
  EXPECT_EQ(out.substr(8, 31), R"({"__metadata__":{"format":"pt"})");
  EXPECT_EQ(header.header_length % 8, 0U);
}

TEST(Safetensors, RoundTripThroughAFile) {
  const testing::TempDir dir;
  const std::vector<float> f32{1.5F, -2.0F, 0.25F, 3.0F, 4.0F, 5.0F};
  const std::vector<std::uint16_t> f16{0x3C00, 0xC000, 0x0001, 0x7C00};  // 1, -2, 2^-24, inf
  const std::vector<std::uint16_t> bf16{0x3F80, 0xBFC0};                 // 1, -1.5
  const std::vector<std::int64_t> ids{7, -9};
  const std::vector<std::uint8_t> flags{1, 0, 1};
  const std::vector<float> nine{9.0F};
  const std::vector<model::formats::TensorToWrite> tensors{
      {"w", model::formats::Dtype::F32, {2, 3}, bytes_of(f32)},
      {"h", model::formats::Dtype::F16, {4}, bytes_of(f16)},
      {"b", model::formats::Dtype::BF16, {1, 2}, bytes_of(bf16)},
      {"ids", model::formats::Dtype::I64, {2}, bytes_of(ids)},
      {"mask", model::formats::Dtype::BOOL, {3}, bytes_of(flags)},
      {"empty", model::formats::Dtype::F32, {0, 4}, {}},
      {"scalar", model::formats::Dtype::F32, {}, bytes_of(nine)},
  };
  model::formats::write_safetensors(dir / "m.safetensors", tensors, {{"format", "pt"}, {"note", "x"}});
  const model::formats::SafetensorsFile file(dir / "m.safetensors");
  EXPECT_EQ(file.tensors().size(), tensors.size());
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.metadata().at("note"), "x");
  for (const auto& want : tensors) {
    const model::formats::Tensor* got = file.find(want.name);
    ASSERT_NE(got, nullptr) << want.name;
    EXPECT_EQ(got->dtype, want.dtype);
    EXPECT_EQ(got->shape, want.shape);
    ASSERT_EQ(got->data.size(), want.data.size());
    EXPECT_TRUE(std::equal(got->data.begin(), got->data.end(), want.data.begin())) << want.name;
  }
  EXPECT_EQ(file.find("nope"), nullptr);
  EXPECT_EQ(model::formats::to_float32(*file.find("w")), f32);
  EXPECT_EQ(model::formats::to_float32(*file.find("h")),
            (std::vector<float>{1.0F, -2.0F, 0x1p-24F, std::numeric_limits<float>::infinity()}));
  EXPECT_EQ(model::formats::to_float32(*file.find("b")), (std::vector<float>{1.0F, -1.5F}));
  EXPECT_EQ(model::formats::to_float32(*file.find("scalar")), (std::vector<float>{9.0F}));
  EXPECT_TRUE(model::formats::to_float32(*file.find("empty")).empty());
  try {
    (void)model::formats::to_float32(*file.find("ids"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("'ids'"), std::string::npos);
  }
  // Same input, same bytes.
  EXPECT_EQ(read_file(dir / "m.safetensors"),
            model::formats::serialize_safetensors(tensors, {{"note", "x"}, {"format", "pt"}}));
}

TEST(Safetensors, HalfPrecisionConversions) {
  EXPECT_EQ(model::formats::f16_to_float(0x0000), 0.0F);
  EXPECT_TRUE(std::signbit(model::formats::f16_to_float(0x8000)));
  EXPECT_EQ(model::formats::f16_to_float(0x3555), 0.333251953125F);
  EXPECT_EQ(model::formats::f16_to_float(0x7BFF), 65504.0F);
  EXPECT_EQ(model::formats::f16_to_float(0x03FF), 0x3FFp-24F);  // largest subnormal
  EXPECT_EQ(model::formats::f16_to_float(0x8400), -0x1p-14F);   // smallest normal, negative
  EXPECT_TRUE(std::isnan(model::formats::f16_to_float(0x7E00)));
  EXPECT_EQ(model::formats::bf16_to_float(0x4049), 3.140625F);
  EXPECT_TRUE(std::isinf(model::formats::bf16_to_float(0xFF80)));
}

TEST(Safetensors, FloatToHalfRoundsToNearestEven) {
  // Every finite half survives float -> half exactly.
  for (std::uint32_t bits = 0; bits < 0x10000U; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    if ((h & 0x7C00U) == 0x7C00U && (h & 0x3FFU) != 0) continue;  // NaN payloads
    ASSERT_EQ(model::formats::float_to_f16(model::formats::f16_to_float(h)), h) << bits;
  }
  EXPECT_EQ(model::formats::float_to_f16(1.0F + 0x1p-11F), 0x3C00);             // tie -> even (down)
  EXPECT_EQ(model::formats::float_to_f16(1.0F + 3 * 0x1p-11F), 0x3C02);         // tie -> even (up)
  EXPECT_EQ(model::formats::float_to_f16(1.0F + 0x1p-11F + 0x1p-20F), 0x3C01);  // above the tie
  EXPECT_EQ(model::formats::float_to_f16(65519.0F), 0x7BFF);
  EXPECT_EQ(model::formats::float_to_f16(65520.0F), 0x7C00);  // overflow -> inf
  EXPECT_EQ(model::formats::float_to_f16(0x1p-25F), 0x0000);  // tie with zero -> even
  EXPECT_EQ(model::formats::float_to_f16(0x1.8p-25F), 0x0001);
  EXPECT_EQ(model::formats::float_to_f16(-0x1.ffcp-15F), 0x8400);  // rounds up into the normals
  EXPECT_EQ(model::formats::float_to_f16(std::numeric_limits<float>::quiet_NaN()) & 0x7E00U, 0x7E00U);
  EXPECT_EQ(model::formats::float_to_bf16(1.0F + 0x1p-8F), 0x3F80);  // tie -> even
  EXPECT_EQ(model::formats::float_to_bf16(1.0F + 3 * 0x1p-8F), 0x3F82);
  EXPECT_EQ(model::formats::float_to_bf16(-3.140625F), 0xC049);
  EXPECT_TRUE(std::isnan(
      model::formats::bf16_to_float(model::formats::float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  for (std::uint32_t bits = 0; bits < 0x10000U; bits += 7) {
    const auto b = static_cast<std::uint16_t>(bits);
    if ((b & 0x7F80U) == 0x7F80U && (b & 0x7FU) != 0) continue;
    ASSERT_EQ(model::formats::float_to_bf16(model::formats::bf16_to_float(b)), b) << bits;
  }
}

TEST(Safetensors, WriterRejectsSizeMismatch) {
  const std::vector<std::byte> three(3);
  const std::vector<model::formats::TensorToWrite> bad{{"t", model::formats::Dtype::F32, {1}, three}};
  try {
    (void)model::formats::serialize_safetensors(bad, {});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
}

struct CorruptCase {
  const char* what;
  std::string bytes;
  const char* must_mention;  // the tensor (or the part of the header) the message names
};

TEST(Safetensors, EveryCorruptionIsACorruptFileErrorNamingTheTensor) {
  const auto t = [](std::string_view body) { return std::string(R"({"t":)") + std::string(body) + "}"; };
  const std::vector<CorruptCase> cases{
      {"shorter than 8 bytes", std::string("\x02\0\0", 3), "too short"},
      {"header past the end", image("{}", 0, 100), "runs past the end"},
      {"header absurdly large", image("{}", 0, 200'000'000), "exceeds the limit"},
      {"header length near 2^64", image("{}", 0, UINT64_MAX - 3), "exceeds the limit"},
      {"invalid JSON", image(R"({"t":{"dtype":"F32",)", 0), "not valid JSON"},
      {"invalid UTF-8", image("{\"\xff\":1}", 0), "not valid JSON"},
      {"not an object", image("[1,2]", 0), "not a JSON object"},
      {"entry not an object", image(t("[1]"), 0), "tensor 't'"},
      {"unknown dtype", image(t(R"({"dtype":"F17","shape":[1],"data_offsets":[0,4]})"), 4),
       "tensor 't': unknown dtype"},
      {"missing dtype", image(t(R"({"shape":[1],"data_offsets":[0,4]})"), 4), "tensor 't'"},
      {"negative dim", image(t(R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})"), 4), "tensor 't'"},
      {"fractional dim", image(t(R"({"dtype":"F32","shape":[1.5],"data_offsets":[0,4]})"), 4), "tensor 't'"},
      {"shape not array", image(t(R"({"dtype":"F32","shape":3,"data_offsets":[0,4]})"), 4), "tensor 't'"},
      {"offsets not a pair", image(t(R"({"dtype":"F32","shape":[1],"data_offsets":[0]})"), 4), "tensor 't'"},
      {"offsets negative", image(t(R"({"dtype":"F32","shape":[1],"data_offsets":[-4,0]})"), 4), "tensor 't'"},
      {"size mismatch", image(t(R"({"dtype":"F32","shape":[2],"data_offsets":[0,4]})"), 4),
       "tensor 't': shape [2] of F32 needs 8 bytes"},
      {"shape overflow",
       image(t(R"({"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]})"), 4),
       "tensor 't': shape"},
      {"end before begin", image(t(R"({"dtype":"U8","shape":[0],"data_offsets":[4,0]})"), 4), "tensor 't'"},
      {"offsets past the data", image(t(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})"), 4),
       "tensor 't': data_offsets [0, 8] run past the end"},
      {"huge offsets",
       image(t(R"({"dtype":"U8","shape":[1],"data_offsets":[18446744073709551614,18446744073709551615]})"),
             4),
       "tensor 't'"},
      {"overlap",
       image(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           8),
       "tensor 'b': data_offsets [4, 8] overlap tensor 'a'"},
      {"hole",
       image(
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
           12),
       "tensor 'b': data_offsets [8, 12] leave a hole of 4"},
      {"hole at the start", image(t(R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})"), 8), "tensor 't'"},
      {"trailing bytes", image(t(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})"), 12),
       "8 trailing bytes"},
      {"duplicate name",
       image(
           R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           8),
       "tensor 't': name appears twice"},
      {"metadata not an object", image(R"({"__metadata__":["x"]})", 0), "__metadata__"},
      {"metadata value not a string", image(R"({"__metadata__":{"format":1}})", 0),
       "__metadata__ entry 'format'"},
      {"metadata twice", image(R"({"__metadata__":{},"__metadata__":{}})", 0), "__metadata__ appears twice"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string message = corrupt_message(c.bytes);
    EXPECT_NE(message.find("bad.safetensors"), std::string::npos) << message;
    EXPECT_NE(message.find(c.must_mention), std::string::npos) << message;
  }
}

TEST(Safetensors, AcceptsWhatTheFormatAllows) {
  // Out-of-order header entries (older writers), zero-size tensors, unknown fields, and a
  // header that is not padded: all valid for the crate, so valid here.
  const std::string ok = image(
      R"({"b":{"dtype":"U8","shape":[2],"data_offsets":[4,6],"extra":1},"z":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
      6);
  const auto header = model::formats::parse_safetensors(as_bytes(ok), "ok");
  ASSERT_EQ(header.tensors.size(), 3U);
  EXPECT_EQ(header.tensors.back().name, "b");
  EXPECT_EQ(header.tensors.back().data.size(), 2U);
}

TEST(Safetensors, MissingFileIsNotFound) {
  try {
    const model::formats::SafetensorsFile file("/nonexistent/model.safetensors");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotFound);
  }
}

}  // namespace
}  // namespace warden
