// ONNX Runtime (onnxruntime-node, CPU execution provider) on the same grid as
// engine_bench, printing the same JSON lines. Graph optimisation "all", intra-op threads
// as given, one inter-op thread, sequential execution.
//
//   node bench/peers/ort_bench.mjs MODEL.onnx THREADS BATCHES SEQS MIN_SECONDS [VARIANT]
// (BATCHES and SEQS comma-separated). VARIANT names the model variant in every line's
// "variant" field: "fp32" (the default, the exported model), "int8" or "int8-per-channel"
// (bench/peers/quantize_onnx.py's output, ONNX Runtime's dynamic int8 quantisation). WARDEN_ORT_DIR names the folder holding
// node_modules/onnxruntime-node (scripts/setup-bench installs it there).
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import os from "node:os";

const ortDir = process.env.WARDEN_ORT_DIR || path.join(os.homedir(), ".cache", "warden", "ort");
const require = createRequire(path.join(ortDir, "package.json"));
const ort = require("onnxruntime-node");

const [model, threadsArg, batchesArg, seqsArg, minSecondsArg, variantArg] = process.argv.slice(2);
const threads = Number(threadsArg || 2);
const batches = (batchesArg || "1,8,32").split(",").map(Number);
const seqs = (seqsArg || "16,128,512").split(",").map(Number);
const minSeconds = Number(minSecondsArg || 1);
const variant = variantArg || "fp32";

const session = await ort.InferenceSession.create(model, {
  graphOptimizationLevel: "all",
  intraOpNumThreads: threads,
  interOpNumThreads: 1,
  executionMode: "sequential",
});
console.log(JSON.stringify({ engine: "onnxruntime", variant, version: ort.env.versions.common, threads }));

// Token ids in [1000, vocab) of the model's own config.json (next to the .onnx file), as
// engine_bench draws them; the time does not depend on which ids they are.
const config = JSON.parse(fs.readFileSync(path.join(path.dirname(model), "config.json"), "utf8"));
const idRange = Math.min(20000, (config.vocab_size ?? 30522) - 1000);
let seed = 1;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed);
for (const seq of seqs) {
  for (const batch of batches) {
    const n = batch * seq;
    const ids = new BigInt64Array(n);
    for (let i = 0; i < n; i++) ids[i] = BigInt(1000 + (rand() % idRange));
    const all = {
      input_ids: new ort.Tensor("int64", ids, [batch, seq]),
      token_type_ids: new ort.Tensor("int64", new BigInt64Array(n), [batch, seq]),
      attention_mask: new ort.Tensor("int64", new BigInt64Array(n).fill(1n), [batch, seq]),
    };
    // The inputs the graph has (RoBERTa and DistilBERT exports take no token_type_ids).
    const feeds = Object.fromEntries(session.inputNames.map((name) => [name, all[name]]));
    for (let w = 0; w < 2; w++) await session.run(feeds);
    const times = [];
    const start = performance.now();
    while (times.length < 5 || (performance.now() - start) / 1e3 < minSeconds) {
      const t0 = performance.now();
      await session.run(feeds);
      times.push((performance.now() - t0) / 1e3);
      if (times.length >= 1000) break;
    }
    times.sort((a, b) => a - b);
    const med = times[Math.floor(times.length / 2)];
    console.log(JSON.stringify({
      engine: "onnxruntime", variant, batch, seq,
      median_ms: +(med * 1e3).toFixed(3),
      p10_ms: +(times[Math.floor(times.length / 10)] * 1e3).toFixed(3),
      p90_ms: +(times[Math.floor(times.length * 9 / 10)] * 1e3).toFixed(3),
      runs: times.length,
      tokens_per_s: Math.round(n / med),
    }));
  }
}
