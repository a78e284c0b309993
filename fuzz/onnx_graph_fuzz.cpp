// libFuzzer: an ONNX model through the whole reduction Warden runs on a graph before its
// encoder takes it (src/model/onnx/encoder_graph.hpp): the ordering and checks of the graph,
// every rewrite pass (which read shapes, constants and attributes the file chose) and the
// encoder read off the result. Each input is a parsed model (seeds: small exports of the three
// families at opsets 14 and 17 and int8, tools/onnx_fixtures/make_encoder_fixtures.py
// --fuzz-seeds); the outcome must be an encoder whose tensors hold their shapes' bytes, or
// Error(CorruptFile / Unsupported) — never a crash, a hang or an unbounded allocation.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "core/error.hpp"
#include "model/onnx/encoder_graph.hpp"
#include "model/onnx/onnx_model.hpp"

namespace {

void check(const warden::model::onnx::Tensor& t) {
  const std::size_t size = warden::model::onnx::data_type_size(t.type);
  if (size != 0 && t.data.size() != t.element_count() * size) std::abort();
}

void check(const warden::model::onnx::DenseTensors& d) {
  check(d.weight);
  if (d.weight.dims.size() != 2) std::abort();
  if (d.bias) check(*d.bias);
  if (d.scale) check(*d.scale);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const warden::model::onnx::Model m =
        warden::model::onnx::parse_model(std::as_bytes(std::span(data, size)), "fuzz");
    const warden::model::onnx::EncoderTensors e = warden::model::onnx::read_encoder_graph(m, "fuzz");
    check(e.word);
    check(e.position);
    if (e.type) check(*e.type);
    for (const auto& l : e.layers) {
      if (l.qkv) {  // ORT's fused attention: one packed projection
        check(*l.qkv);
      } else {
        for (const auto* d : {&l.query, &l.key, &l.value}) check(*d);
      }
      for (const auto* d : {&l.attention_out, &l.ffn_in, &l.ffn_out}) check(*d);
      check(l.attention_norm.gamma);
      check(l.ffn_norm.beta);
    }
  } catch (const warden::Error& e) {
    if (e.kind() != warden::ErrorKind::CorruptFile && e.kind() != warden::ErrorKind::Unsupported)
      std::abort();
  }
  return 0;
}
