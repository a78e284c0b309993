// llama.cpp (node-llama-cpp's prebuilt CPU backend) on a GGUF file: the forward pass of an
// embedding context over sequences of exact token counts (synthetic ids, as engine_bench's),
// one JSON line per (batch, seq) point like engine_bench's. node-llama-cpp evaluates one
// sequence per call, so a batch of B sequences is B calls back to back.
//
//   node bench/peers/llama_embed.mjs MODEL.gguf THREADS BATCHES SEQS [MIN_SECONDS]
// WARDEN_LLAMA_DIR names the folder holding node_modules/node-llama-cpp (docs/benchmarks.md).
import os from "node:os";
import path from "node:path";

const [modelPath, threadsArg, batchesArg, seqsArg, minArg] = process.argv.slice(2);
const dir = process.env.WARDEN_LLAMA_DIR || path.join(os.homedir(), ".cache", "warden", "llama");
const { getLlama } = await import(path.join(dir, "node_modules", "node-llama-cpp", "dist", "index.js"));
const threads = Number(threadsArg || 2);
const batches = (batchesArg || "1").split(",").map(Number);
const seqs = (seqsArg || "16,128").split(",").map(Number);
const minSeconds = Number(minArg || 2);

const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
const longest = Math.max(...seqs);
const ctx = await model.createEmbeddingContext({ threads, contextSize: longest + 16, batchSize: longest });
const vocab = model.tokens.vocabularySize ?? 900;
let state = 12345;
const nextId = () => { state = (state * 1103515245 + 12345) % 2147483648; return 2 + (state % Math.min(vocab - 2, 900)); };

for (const batch of batches) {
  for (const seq of seqs) {
    const inputs = [];
    for (let b = 0; b < batch; b++) inputs.push(Array.from({ length: seq }, nextId));
    for (const t of inputs) await ctx.getEmbeddingFor(t);  // warm-up
    const times = [];
    const start = performance.now();
    while (times.length < 3 || (performance.now() - start) / 1000 < minSeconds) {
      const t0 = performance.now();
      for (const t of inputs) await ctx.getEmbeddingFor(t);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    console.log(JSON.stringify({ engine: "llama.cpp", batch, seq, median_ms: median, runs: times.length,
                                 seqs_per_s: (batch * 1000) / median, tokens_per_s: (batch * seq * 1000) / median }));
  }
}
await ctx.dispose();
await model.dispose();
