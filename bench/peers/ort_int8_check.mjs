// Checks an int8 ONNX model (bench/peers/quantize_onnx.py) against its fp32 original in
// ONNX Runtime (onnxruntime-node, CPU): both sessions with graph optimisation "all", as
// ort_bench.mjs runs them, each writing its optimised graph to OUT_DIR/<name>.optimized.onnx
// (list the op types with bench/peers/onnx_ops.py), then N random token sequences (lengths
// 8..128, padded into batches of 16 with attention_mask 0 on the padding) through both,
// comparing mean-pooled last hidden states by cosine similarity. Prints one JSON line.
//
//   node bench/peers/ort_int8_check.mjs FP32.onnx INT8.onnx OUT_DIR [N=320] [THREADS=2]
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import os from "node:os";

const ortDir = process.env.WARDEN_ORT_DIR || path.join(os.homedir(), ".cache", "warden", "ort");
const require = createRequire(path.join(ortDir, "package.json"));
const ort = require("onnxruntime-node");

const [fp32Path, int8Path, outDir, nArg, threadsArg] = process.argv.slice(2);
if (!fp32Path || !int8Path || !outDir) {
  console.error("usage: node ort_int8_check.mjs FP32.onnx INT8.onnx OUT_DIR [N] [THREADS]");
  process.exit(2);
}
const n = Number(nArg || 320);
const threads = Number(threadsArg || 2);
fs.mkdirSync(outDir, { recursive: true });

const open = (model) => ort.InferenceSession.create(model, {
  graphOptimizationLevel: "all",
  intraOpNumThreads: threads,
  interOpNumThreads: 1,
  executionMode: "sequential",
  optimizedModelFilePath: path.join(outDir, path.basename(model, ".onnx") + ".optimized.onnx"),
});
const fp32 = await open(fp32Path);
const int8 = await open(int8Path);

let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed);
const batchSize = 16;
const cosines = [];
for (let done = 0; done < n; done += batchSize) {
  const b = Math.min(batchSize, n - done);
  const lens = Array.from({ length: b }, () => 8 + (rand() % 121));
  const seq = Math.max(...lens);
  const ids = new BigInt64Array(b * seq);
  const mask = new BigInt64Array(b * seq);
  for (let i = 0; i < b; i++) {
    for (let t = 0; t < lens[i]; t++) {
      // [CLS] ... [SEP] around random word pieces, as a tokenizer would give.
      ids[i * seq + t] = t === 0 ? 101n : t === lens[i] - 1 ? 102n : BigInt(1000 + (rand() % 29000));
      mask[i * seq + t] = 1n;
    }
  }
  const feeds = {
    input_ids: new ort.Tensor("int64", ids, [b, seq]),
    token_type_ids: new ort.Tensor("int64", new BigInt64Array(b * seq), [b, seq]),
    attention_mask: new ort.Tensor("int64", mask, [b, seq]),
  };
  const [a, q] = [await fp32.run(feeds), await int8.run(feeds)].map((r) => r[Object.keys(r)[0]]);
  const hidden = a.dims[2];
  for (let i = 0; i < b; i++) {
    const pa = new Float64Array(hidden), pq = new Float64Array(hidden);
    for (let t = 0; t < lens[i]; t++) {
      const off = (i * seq + t) * hidden;
      for (let h = 0; h < hidden; h++) { pa[h] += a.data[off + h]; pq[h] += q.data[off + h]; }
    }
    let dot = 0, na = 0, nq = 0;
    for (let h = 0; h < hidden; h++) { dot += pa[h] * pq[h]; na += pa[h] * pa[h]; nq += pq[h] * pq[h]; }
    cosines.push(dot / Math.sqrt(na * nq));
  }
}
cosines.sort((x, y) => x - y);
console.log(JSON.stringify({
  fp32: path.basename(fp32Path), int8: path.basename(int8Path), sequences: cosines.length,
  mean_cosine: +(cosines.reduce((s, c) => s + c, 0) / cosines.length).toFixed(6),
  min_cosine: +cosines[0].toFixed(6),
  p01_cosine: +cosines[Math.floor(cosines.length / 100)].toFixed(6),
  version: ort.env.versions.common,
}));
