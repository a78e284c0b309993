// The TF.js reference implementation of USE-lite, timed the way bench/use_lite_bench.cpp
// times Warden: end to end (the USE package's tokenizer + graph model), batch 1 and 32,
// over the same reference sentences (cycled). One JSON object per batch size.
//
//   NODE_PATH=<dir with node_modules> node bench/peers/use_tfjs_bench.js BACKEND DIST SENTENCES [MIN_SECONDS]
//
// BACKEND: cpu (@tensorflow/tfjs-backend-cpu) or wasm (@tensorflow/tfjs-backend-wasm).
// DIST: the npm package's dist/ (model.json, shards, vocab.json). Before timing it checks
// its first embedding against the reference file, so a mis-loaded model cannot be timed.
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
  const [backend, dist, sentencesFile, minSecondsArg] = process.argv.slice(2);
  const minSeconds = Number(minSecondsArg || 2);
  const tf = require('@tensorflow/tfjs-core');
  const tfconv = require('@tensorflow/tfjs-converter');
  if (backend === 'wasm') {
    const wasm = require('@tensorflow/tfjs-backend-wasm');
    wasm.setWasmPaths(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm')) + '/');
  } else {
    require('@tensorflow/tfjs-backend-cpu');
  }
  await tf.setBackend(backend);
  await tf.ready();
  const use = require('@tensorflow-models/universal-sentence-encoder');

  const modelJson = JSON.parse(fs.readFileSync(path.join(dist, 'model.json'), 'utf8'));
  const group = modelJson.weightsManifest[0];
  const shards = group.paths.map((p) => fs.readFileSync(path.join(dist, p)));
  const all = Buffer.concat(shards);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
  const model = await tfconv.loadGraphModel(
      tf.io.fromMemory({modelTopology: modelJson.modelTopology, weightSpecs: group.weights, weightData}));
  const vocab = JSON.parse(fs.readFileSync(path.join(dist, 'vocab.json'), 'utf8'));
  const encoder = new use.UniversalSentenceEncoder();
  encoder.model = model;
  encoder.tokenizer = new use.Tokenizer(vocab);

  const lines = fs.readFileSync(sentencesFile, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
  // The empty sentence is left out (as in use_lite_bench): the WASM backend cannot embed
  // [""] ("sparseIndices should be a scalar, vector, or matrix, but got shape 1,1,0,2").
  const sentences = lines.map((l) => l.text).filter((t) => t.length > 0);
  {
    const e = await encoder.embed([sentences[0]]);
    const got = await e.data();
    e.dispose();
    let diff = 0;
    for (let i = 0; i < 512; ++i) diff = Math.max(diff, Math.abs(got[i] - lines[0].embedding[i]));
    if (!(diff < 1e-5)) throw new Error(`TF.js ${backend} does not reproduce the reference (max diff ${diff})`);
  }
  let next = 0;
  const fill = (n) => Array.from({length: n}, () => sentences[next++ % sentences.length]);
  for (const batch of [1, 32]) {
    // One warm-up call at batch 32: TF.js's CPU backend takes seconds per padded batch.
    for (let w = 0; w < (batch === 1 ? 5 : 1); ++w) {
      const e = await encoder.embed(fill(batch));
      await e.data();
      e.dispose();
    }
    const lat = [];
    const start = process.hrtime.bigint();
    let elapsed = 0;
    while (elapsed < minSeconds || lat.length < 3) {
      const texts = fill(batch);
      const t0 = process.hrtime.bigint();
      const e = await encoder.embed(texts);
      await e.data();
      e.dispose();
      lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
      elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    }
    const total = lat.reduce((a, b) => a + b, 0);
    const sorted = [...lat].sort((a, b) => a - b);
    const pct = (p) => sorted[Math.floor(p * (sorted.length - 1))];
    console.log(JSON.stringify({
      impl: `tfjs-${backend}`, model: 'use-lite', batch, calls: lat.length,
      sentences_per_s: Number(((lat.length * batch) / (total / 1000)).toFixed(1)),
      latency_ms_p50: Number(pct(0.5).toFixed(3)), latency_ms_p90: Number(pct(0.9).toFixed(3)),
    }));
  }
}

main().catch((e) => {
  console.error(`use_tfjs_bench: ${e.stack || e}`);
  process.exit(1);
});
