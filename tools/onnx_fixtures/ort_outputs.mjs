// ONNX Runtime's outputs on the encoder fixtures (tests/data/onnx/<family>/model_*.onnx), the
// reference Warden's ONNX loading is tested against. First, model_ort_all.onnx: ONNX Runtime's
// own offline optimisation of model_opset14.onnx (optimizedModelFilePath, graph optimisation
// level "all": FusedMatMul for QKᵀ with its scale, BiasGelu, LayerNormalization, constant
// Reshape shapes), and model_int8_ort_all.onnx / model_uint8_ort_all.onnx the same of
// model_int8.onnx / model_uint8.onnx (DynamicQuantizeMatMul).
// (model_fp16.onnx, where make_fp16_fixtures.py wrote one, is run as it is.)
// Then, for each folder, two sequences (one
// padded, a second segment's token types where the graph takes them, RoBERTa's padding id
// inside the text) through every .onnx file there, written to ort_outputs.json with the inputs.
// CPU execution provider, graph optimisation off (the file as it is).
//
//   node tools/onnx_fixtures/ort_outputs.mjs [DATA_DIR]
// WARDEN_ORT_DIR names the folder holding node_modules/onnxruntime-node (scripts/setup-bench).
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import { fileURLToPath } from "node:url";

const ortDir = process.env.WARDEN_ORT_DIR || path.join(os.homedir(), ".cache", "warden", "ort");
const ort = createRequire(path.join(ortDir, "package.json"))("onnxruntime-node");
const here = path.dirname(fileURLToPath(import.meta.url));
const dataDir = process.argv[2] || path.join(here, "..", "..", "tests", "data", "onnx");

for (const family of ["bert", "xlm-roberta", "distilbert", "bert-classifier", "xlm-roberta-classifier",
                      "distilbert-classifier", "bert-st", "xlm-roberta-st", "bert-fused"]) {
  const dir = path.join(dataDir, family);
  const config = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8"));
  const pad = config.pad_token_id ?? 0;
  // [CLS]-like first id, ids across the cut vocabulary, a literal padding id inside the first
  // text (RoBERTa numbers positions around it), the second sequence padded.
  const ids = [
    [2, 10, 200, pad, 511, 5, 3],
    [2, 99, 7, 3, pad, pad, pad],
  ];
  const mask = [
    [1, 1, 1, 1, 1, 1, 1],
    [1, 1, 1, 1, 0, 0, 0],
  ];
  const types = [
    [0, 0, 0, 0, 1, 1, 1],
    [0, 0, 0, 0, 0, 0, 0],
  ];
  const tensor = (rows) => new ort.Tensor("int64", BigInt64Array.from(rows.flat().map(BigInt)), [rows.length, rows[0].length]);
  const out = { inputs: { input_ids: ids, attention_mask: mask, token_type_ids: types }, outputs: {} };
  for (const [from, to] of [["model_opset14.onnx", "model_ort_all.onnx"], ["model_int8.onnx", "model_int8_ort_all.onnx"],
                            ["model_uint8.onnx", "model_uint8_ort_all.onnx"]]) {
    if (/-(classifier|st|fused)$/.test(family)) break;  // the classifiers, sentence-transformers, fused: as written
    await ort.InferenceSession.create(path.join(dir, from), {
      graphOptimizationLevel: "all",
      intraOpNumThreads: 1,
      optimizedModelFilePath: path.join(dir, to),
    });
  }
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".onnx")).sort()) {
    const session = await ort.InferenceSession.create(path.join(dir, file), {
      graphOptimizationLevel: "disabled",
      intraOpNumThreads: 1,
    });
    const feeds = {};
    for (const name of session.inputNames) feeds[name] = tensor(out.inputs[name]);
    const result = await session.run(feeds);
    const name = session.outputNames[0];  // last_hidden_state, or a classifier's logits
    const value = result[name];
    out.outputs[file] = { name, dims: value.dims, data: Array.from(value.data), others: {} };
    for (const other of session.outputNames.slice(1)) {  // a SentenceTransformer's sentence_embedding
      out.outputs[file].others[other] = { dims: result[other].dims, data: Array.from(result[other].data) };
    }
    console.log(`${family}/${file}: inputs ${session.inputNames.join(", ")}; ${name} [${value.dims}]`);
  }
  fs.writeFileSync(path.join(dir, "ort_outputs.json"), JSON.stringify(out) + "\n");
}
