// HuggingFace `tokenizers` (npm @anush008/tokenizers 0.6.0, native Rust 0.22) on the same
// corpus as bench/tokenizer_bench.cpp, single-threaded: encodeBatch with rayon limited to
// one thread (RAYON_NUM_THREADS=1, TOKENIZERS_PARALLELISM=false are set below before the
// native module loads). Median of several runs, first run dropped.
//
//   node tools/tokref/bench.js --corpus <out.txt>             # write the corpus
//   node tools/tokref/bench.js <corpus.txt> <tokenizer.json>... [--runs N] [--pairs]
'use strict';
process.env.RAYON_NUM_THREADS = '1';
process.env.TOKENIZERS_PARALLELISM = 'false';
const fs = require('fs');
const path = require('path');

function makeCorpus(out) {
  const root = path.resolve(__dirname, '..', '..');
  const read = (f) => fs.readFileSync(path.join(root, 'tests', 'data', f), 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l));
  const pool = [];
  for (const r of read('bert-wordpiece-reference.jsonl')) { pool.push(r.text); if (r.text_pair) pool.push(r.text_pair); }
  for (const r of read('unigram-reference.jsonl')) pool.push(r.text);
  for (const r of read('use-lite-tokenizer-reference.jsonl')) pool.push(r.text);
  const texts = pool.map((t) => t.replace(/[\r\n]+/g, ' ')).filter((t) => t.length > 0 && t.length < 400);
  let seed = 12345;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const lines = [];
  for (let i = 0; i < 20000; i++) {
    const n = 1 + Math.floor(rnd() * 4);
    const parts = [];
    for (let k = 0; k < n; k++) parts.push(texts[Math.floor(rnd() * texts.length)]);
    lines.push(parts.join(' '));
  }
  fs.writeFileSync(out, lines.join('\n') + '\n');
  console.log(`wrote ${lines.length} lines, ${Buffer.byteLength(lines.join(''))} bytes to ${out}`);
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--corpus') return makeCorpus(args[1]);
  const { Tokenizer } = require('@anush008/tokenizers');
  let runs = 5; let pairs = false; const files = [];
  for (let i = 1; i < args.length; i++) {
    if (args[i] === '--runs') runs = parseInt(args[++i], 10);
    else if (args[i] === '--pairs') pairs = true;
    else files.push(args[i]);
  }
  const lines = fs.readFileSync(args[0], 'utf8').split('\n').filter((l) => l);
  const bytes = lines.reduce((a, l) => a + Buffer.byteLength(l), 0);
  const inputs = pairs ? lines.slice(0, lines.length - (lines.length % 2)).reduce((acc, l, i, a) => (i % 2 === 0 ? acc.concat([[l, a[i + 1]]]) : acc), []) : lines;
  console.log(`corpus: ${lines.length} sequences, ${(bytes / 1e6).toFixed(2)} MB${pairs ? ' (as consecutive pairs)' : ''}`);
  for (const f of files) {
    const tok = Tokenizer.fromFile(f);
    tok.disableTruncation();
    const secs = []; let tokens = 0;
    for (let r = 0; r < runs + 1; r++) {
      const t0 = process.hrtime.bigint();
      const encs = await tok.encodeBatch(inputs, { addSpecialTokens: true });
      const t1 = process.hrtime.bigint();
      tokens = encs.reduce((a, e) => a + e.getLength(), 0);
      if (r > 0) secs.push(Number(t1 - t0) / 1e9);
    }
    secs.sort((a, b) => a - b);
    const med = secs[Math.floor(secs.length / 2)];
    console.log(`${f.padEnd(60)} ${(bytes / 1e6 / med).toFixed(2).padStart(8)} MB/s ${(inputs.length / med).toFixed(0).padStart(10)} seq/s ${String(tokens).padStart(9)} tokens  (median of ${runs}, min ${secs[0].toFixed(3)} s, max ${secs[secs.length - 1].toFixed(3)} s)`);
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
