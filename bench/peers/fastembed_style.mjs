// fastembed's TextEmbedding pipeline, as the ONNX Runtime peer of the Python package
// (bench/python_bench.py; fastembed itself is a PyPI package this machine cannot install):
// what qdrant/fastembed's preprocessor_utils.load_tokenizer and onnx_text_model.onnx_embed do,
// with the same libraries' Node builds (fastembed-js's own choice): HuggingFace tokenizers
// (@anush008/tokenizers, Rust) truncating to the model's limit and padding each batch to its
// longest text, onnxruntime-node (graph optimisation "all", intra- and inter-op threads as
// given, as fastembed sets them), batches of 256 in input order (fastembed's default
// batch_size; it does not sort by length), input_ids / attention_mask / token_type_ids as
// int64, then the CLS row normalised (bge's post-processing).
//
//   node bench/peers/fastembed_style.mjs MODEL.onnx THREADS CORPUS.txt ROUNDS [BATCH=256]
// The model's folder (beside MODEL.onnx, or its parent for onnx/model.onnx) holds
// tokenizer.json and tokenizer_config.json. Prints one JSON line: texts/s per round.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import os from "node:os";

const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
const ortDir = process.env.WARDEN_ORT_DIR || path.join(cache, "warden", "ort");
const tokDir = process.env.WARDEN_TOKREF_DIR || path.join(cache, "warden", "tokref");
const ort = createRequire(path.join(ortDir, "package.json"))("onnxruntime-node");
const { Tokenizer } = createRequire(path.join(tokDir, "package.json"))("@anush008/tokenizers");

const [model, threadsArg, corpus, roundsArg, batchArg] = process.argv.slice(2);
const threads = Number(threadsArg || 2);
const rounds = Number(roundsArg || 3);
const batchSize = Number(batchArg || 256);
let dir = path.dirname(model);
if (!fs.existsSync(path.join(dir, "tokenizer.json"))) dir = path.dirname(dir);
const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
const config = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8"));
const maxLength = Math.min(tokenizerConfig.model_max_length ?? 512, 512);

const tokenizer = Tokenizer.fromFile(path.join(dir, "tokenizer.json"));
tokenizer.setTruncation(maxLength);
const padToken = tokenizerConfig.pad_token ?? "[PAD]";
tokenizer.setPadding({ padId: config.pad_token_id ?? 0, padToken });

const session = await ort.InferenceSession.create(model, {
  graphOptimizationLevel: "all",
  intraOpNumThreads: threads,
  interOpNumThreads: threads,
});
const wantsTypes = session.inputNames.includes("token_type_ids");
const texts = fs.readFileSync(corpus, "utf8").split("\n").filter((t) => t.length > 0);

async function embedAll() {
  const rows = [];
  for (let b = 0; b < texts.length; b += batchSize) {
    const encodings = await tokenizer.encodeBatch(texts.slice(b, b + batchSize));
    const n = encodings.length;
    const len = encodings[0].getIds().length;
    const ids = new BigInt64Array(n * len);
    const mask = new BigInt64Array(n * len);
    encodings.forEach((e, i) => {
      e.getIds().forEach((v, j) => (ids[i * len + j] = BigInt(v)));
      e.getAttentionMask().forEach((v, j) => (mask[i * len + j] = BigInt(v)));
    });
    const feeds = {
      input_ids: new ort.Tensor("int64", ids, [n, len]),
      attention_mask: new ort.Tensor("int64", mask, [n, len]),
    };
    if (wantsTypes) feeds.token_type_ids = new ort.Tensor("int64", new BigInt64Array(n * len), [n, len]);
    const out = await session.run(feeds);
    const hidden = out[session.outputNames[0]];
    const width = hidden.dims[2];
    for (let i = 0; i < n; i++) {
      const cls = hidden.data.slice(i * len * width, i * len * width + width);
      let norm = 0;
      for (const v of cls) norm += v * v;
      norm = Math.sqrt(norm);
      rows.push(cls.map((v) => v / norm));
    }
  }
  return rows;
}

await embedAll(); // warm
const seconds = [];
for (let r = 0; r < rounds; r++) {
  const start = process.hrtime.bigint();
  await embedAll();
  seconds.push(Number(process.hrtime.bigint() - start) / 1e9);
}
const median = [...seconds].sort((a, b) => a - b)[Math.floor(seconds.length / 2)];
console.log(JSON.stringify({
  bench: "peer", engine: "fastembed-style onnxruntime-node", version: ort.env.versions.common, threads,
  batch_size: batchSize, texts: texts.length, seconds, per_s: texts.length / median,
}));
