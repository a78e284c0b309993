// Differential fixtures: random "Unicode soup" strings (controls, combining marks, CJK,
// Hangul jamo, emoji sequences, RTL, Indic, full-width forms, special-token fragments...)
// through every tokenizer in tests/data/tokref/, tokenized by HF `tokenizers`.
//
//   NODE_PATH=/tmp/tokref/node_modules node tools/tokref/make_random.js [count] [seed]
//   (the committed files: count 300, the default seed)
//
// Writes tests/data/tokref/random/<name>.jsonl in the make_refs.js format.
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('@anush008/tokenizers');

const root = path.resolve(__dirname, '..', '..');
const dir = path.join(root, 'tests', 'data', 'tokref');
const outDir = path.join(dir, 'random');
fs.mkdirSync(outDir, { recursive: true });
const count = parseInt(process.argv[2] || '150', 10);
let seed = parseInt(process.argv[3] || '20261129', 10);
const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
const pick = (a) => a[Math.floor(rnd() * a.length)];
const range = (lo, hi) => String.fromCodePoint(lo + Math.floor(rnd() * (hi - lo + 1)));

const fragments = ['[CLS]', '[SEP]', '[MASK]', '<mask>', '<s>', '</s>', '<unk>', '<pad>', '##', '\u2581', '\r\n', ' ', '  ',
  '\u00A0', '\u3000', '\u200B', '\u200D', '\uFEFF', '\uFFFD', "'s", "'ll", 'hello', 'World', 'xyz', 'hello world', '[END]',
  'e\u0301', '\u0130', '\u00DF', '\u03A3\u03C3\u03C2', '\uFB01', '\u2126', '\u212B', '\u1E9B\u0323', '\u0345', 'Ǆ',
  '\u{1F469}\u200D\u{1F4BB}', '\u{1F44D}\u{1F3FD}', '\u{1F1EB}\u{1F1F7}', '\u2764\uFE0F', '\u{E0041}', '\u0378', '\uE000',
  '\u1100\u1161\u11A8', '\uAC00', '\u0915\u094D\u0937', '\u0E01\u0E33', '\u0627\u0644', '\u05D0\u05B7', '\u0301\u0301\u0316',
  '0x1F', '3.14', '1,000', '\t', '\n', '\u0085', '\u2028', '\u0000', '\u001B', '\u007F', '\u00AD', '\u2581\u2581'];
const classes = [
  () => range(0x61, 0x7A), () => range(0x41, 0x5A), () => range(0x30, 0x39), () => pick(' .,;:!?\'"()[]{}<>-_/\\@#$%^&*+=~`|'),
  () => range(0x00, 0x1F), () => range(0xA0, 0xFF), () => range(0x100, 0x24F), () => range(0x300, 0x36F), () => range(0x370, 0x3FF),
  () => range(0x400, 0x4FF), () => range(0x590, 0x5FF), () => range(0x600, 0x6FF), () => range(0x900, 0x97F), () => range(0xE00, 0xE7F),
  () => range(0x1100, 0x11FF), () => range(0x2000, 0x206F), () => range(0x2100, 0x218F), () => range(0x2460, 0x24FF),
  () => range(0x3040, 0x30FF), () => range(0x4E00, 0x4FFF), () => range(0xAC00, 0xAD00), () => range(0xFF00, 0xFFEF),
  () => range(0x1F300, 0x1F64F), () => range(0x20000, 0x20100), () => pick(fragments), () => pick(fragments),
];

function randomText() {
  const n = 1 + Math.floor(rnd() * 24);
  let s = '';
  for (let i = 0; i < n; i++) s += pick(classes)();
  return s;
}

async function run() {
  const texts = [];
  for (let i = 0; i < count; i++) texts.push(randomText());
  const names = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();
  for (const name of names) {
    const tok = Tokenizer.fromString(fs.readFileSync(path.join(dir, name + '.json'), 'utf8'));
    const lines = [];
    for (let i = 0; i < texts.length; i++) {
      const a = texts[i];
      const b = i % 5 === 4 ? texts[(i * 7) % texts.length] : null;
      const add = i % 3 !== 2;
      let e;
      try {
        e = await tok.encode(a, b, { addSpecialTokens: add });
      } catch (err) {
        lines.push(JSON.stringify({ text: a, text_pair: b, add_special_tokens: add, error: String(err) }));
        continue;
      }
      const ids = e.getIds();
      const rec = { text: a, text_pair: b, add_special_tokens: add, ids, type_ids: e.getTypeIds(), offsets: e.getOffsets(),
        tokens: e.getTokens(), special_tokens_mask: e.getSpecialTokensMask(), attention_mask: e.getAttentionMask() };
      if (b === null) rec.decoded = await tok.decode(ids, true);
      lines.push(JSON.stringify(rec));
    }
    fs.writeFileSync(path.join(outDir, name + '.jsonl'), lines.join('\n') + '\n');
    console.log(name, lines.length);
  }
}
run().catch((e) => { console.error(e); process.exit(1); });
