// How close Warden's embeddings from an int8 ONNX file are to ONNX Runtime's on the same file,
// at a real model's width: each text is tokenized with HF tokenizers (tools/golden/tokenize.mjs),
// run alone through ORT on the int8 and the fp32 file, pooled as the folder says (CLS or mean)
// and L2-normalised, and compared with Warden's JSON lines (`warden embed`, normalised) by cosine;
// "nearest" counts the texts whose nearest ORT embedding (of all the texts') is their own.
//
//   node bench/peers/onnx_int8_fidelity.mjs TOKENIZER_JSON POOLING INT8.onnx FP32.onnx TEXTS_FILE \
//        NAME=WARDEN.jsonl [NAME=WARDEN.jsonl ...]
// POOLING is cls or mean. Prints one JSON line per comparison. WARDEN_ORT_DIR as for ort_bench.mjs.
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ortDir = process.env.WARDEN_ORT_DIR || path.join(os.homedir(), ".cache", "warden", "ort");
const ort = createRequire(path.join(ortDir, "package.json"))("onnxruntime-node");
const here = path.dirname(fileURLToPath(import.meta.url));
const [tokenizerJson, pooling, int8File, fp32File, textsFile, ...wardenArgs] = process.argv.slice(2);

const texts = fs.readFileSync(textsFile, "utf8").split("\n").filter((t) => t.length > 0);
const inputs = path.join(os.tmpdir(), `onnx-fidelity-${process.pid}.json`);
fs.writeFileSync(inputs, JSON.stringify(texts));
const tokens = JSON.parse(execFileSync("node", [path.join(here, "..", "..", "tools", "golden", "tokenize.mjs"),
                                                tokenizerJson, inputs], { maxBuffer: 1 << 28 }));
fs.unlinkSync(inputs);

const normalize = (v) => {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
};
const cosine = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);  // unit vectors

async function embed(file) {
  const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 2, graphOptimizationLevel: "all" });
  const out = [];
  for (const enc of tokens.encodings) {
    const n = enc.ids.length;
    const t = (v) => new ort.Tensor("int64", BigInt64Array.from(v.map(BigInt)), [1, n]);
    const all = { input_ids: t(enc.ids), attention_mask: t(enc.attention_mask), token_type_ids: t(enc.type_ids) };
    const feeds = Object.fromEntries(session.inputNames.map((name) => [name, all[name]]));
    const hidden = (await session.run(feeds))[session.outputNames[0]].data;
    const h = hidden.length / n;
    const v = new Array(h).fill(0);
    for (let i = 0; i < (pooling === "cls" ? 1 : n); i++) for (let j = 0; j < h; j++) v[j] += hidden[i * h + j];
    out.push(normalize(v));
  }
  return out;
}

function compare(name, ours, theirs) {
  const cos = ours.map((v, i) => cosine(v, theirs[i]));
  let nearest = 0;
  ours.forEach((v, i) => {
    let best = 0;
    theirs.forEach((w, j) => { if (cosine(v, w) > cosine(v, theirs[best])) best = j; });
    nearest += best === i ? 1 : 0;
  });
  const sorted = [...cos].sort((a, b) => a - b);
  console.log(JSON.stringify({
    comparison: name, texts: cos.length, min_cosine: sorted[0], median_cosine: sorted[Math.floor(sorted.length / 2)],
    mean_cosine: cos.reduce((s, x) => s + x, 0) / cos.length, nearest_is_own: nearest,
  }));
}

const ortInt8 = await embed(int8File);
const ortFp32 = await embed(fp32File);
compare("ORT int8 vs ORT fp32", ortInt8, ortFp32);
for (const arg of wardenArgs) {
  const [name, file] = arg.split("=");
  const rows = fs.readFileSync(file, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l).embedding);
  compare(`${name} vs ORT int8`, rows, ortInt8);
  compare(`${name} vs ORT fp32`, rows, ortFp32);
}
