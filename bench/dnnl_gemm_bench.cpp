// oneDNN (Debian's libdnnl 2.6) matmul on the same BERT-layer shapes as gemm_bench, with
// the weights in the layout oneDNN picks ("any", i.e. prepacked once) and bias + GELU as
// post-ops: the measurement behind the GEMM backend choice in docs/engine.md.
// Built only when CMake finds dnnl (bench/CMakeLists.txt).
//
//   dnnl_gemm_bench [tokens=4096] [hidden=384] [ffn=1536]   (threads: OMP_NUM_THREADS)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

int main(int argc, char** argv) {
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  const memory::dim m = argc > 1 ? std::atol(argv[1]) : 4096;
  const memory::dim h = argc > 2 ? std::atol(argv[2]) : 384;
  const memory::dim f = argc > 3 ? std::atol(argv[3]) : 1536;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  struct Shape {
    const char* name;
    memory::dim n, k;
    bool gelu;
  };
  const Shape shapes[] = {{"qkv", 3 * h, h, false},
                          {"attn_out", h, h, false},
                          {"ffn_in+gelu", f, h, true},
                          {"ffn_out", h, f, false}};
  std::printf("%-8s %-12s %10s %10s\n", "backend", "shape", "ms", "GFLOP/s");
  double total_flops = 0, total_time = 0;
  for (const auto& s : shapes) {
    const memory::desc a_md({m, s.k}, dt::f32, tag::ab);
    const memory::desc w_any({s.k, s.n}, dt::f32, tag::any);
    const memory::desc w_md({s.k, s.n}, dt::f32, tag::ab);
    const memory::desc b_md({1, s.n}, dt::f32, tag::ab);
    const memory::desc c_md({m, s.n}, dt::f32, tag::ab);
    primitive_attr attr;
    if (s.gelu) {
      post_ops ops;
      ops.append_eltwise(1.0F, algorithm::eltwise_gelu_erf, 0.0F, 0.0F);
      attr.set_post_ops(ops);
    }
    const matmul::primitive_desc pd(matmul::desc(a_md, w_any, b_md, c_md), attr, eng);
    std::vector<float> a(static_cast<std::size_t>(m * s.k), 0.5F),
        w(static_cast<std::size_t>(s.k * s.n), 0.25F), b(static_cast<std::size_t>(s.n), 0.1F),
        c(static_cast<std::size_t>(m * s.n));
    memory a_mem(a_md, eng, a.data()), w_plain(w_md, eng, w.data()), b_mem(b_md, eng, b.data()),
        c_mem(c_md, eng, c.data());
    memory w_packed(pd.weights_desc(), eng);
    reorder(w_plain, w_packed).execute(strm, w_plain, w_packed);  // once, at "load"
    const matmul mm(pd);
    std::vector<double> times;
    for (int rep = 0; rep < 11; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      mm.execute(strm, {{DNNL_ARG_SRC, a_mem},
                        {DNNL_ARG_WEIGHTS, w_packed},
                        {DNNL_ARG_BIAS, b_mem},
                        {DNNL_ARG_DST, c_mem}});
      strm.wait();
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    const double t = times[times.size() / 2];
    const double flops = 2.0 * double(m) * double(s.n) * double(s.k);
    total_flops += flops;
    total_time += t;
    std::printf("%-8s %-12s %10.3f %10.1f\n", "onednn", s.name, t * 1e3, flops / t * 1e-9);
  }
  std::printf("%-8s %-12s %10.3f %10.1f\n", "onednn", "layer", total_time * 1e3,
              total_flops / total_time * 1e-9);
  return 0;
}
