// Generates reference tokenizations with HuggingFace `tokenizers` (the npm native build
// @anush008/tokenizers 0.6.0 = tokenizers 0.22) for tokenizer.json files crafted here, so
// the C++ tests can check components the shared fixtures do not cover (BPE, ByteLevel,
// Precompiled, Split, the other normalizers, pre-tokenizers, post-processors, decoders,
// truncation and padding).
//
//   mkdir -p /tmp/tokref && cd /tmp/tokref && npm install @anush008/tokenizers@0.6.0
//   NODE_PATH=/tmp/tokref/node_modules node tools/tokref/make_refs.js
//
// Writes tests/data/tokref/<name>.json (the tokenizer) and <name>.jsonl (one line per case:
// text, text_pair, add_special_tokens, ids, type_ids, offsets in code points, tokens,
// special_tokens_mask, decoded). Deterministic: same inputs, same files.
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('@anush008/tokenizers');

const root = path.resolve(__dirname, '..', '..');
const outDir = path.join(root, 'tests', 'data', 'tokref');
fs.mkdirSync(outDir, { recursive: true });

// ---------------------------------------------------------------- corpus
function readJsonl(p) {
  return fs.readFileSync(p, 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l));
}
const bertRef = readJsonl(path.join(root, 'tests', 'data', 'bert-wordpiece-reference.jsonl'));
const uniRef = readJsonl(path.join(root, 'tests', 'data', 'unigram-reference.jsonl'));
const singles = [];
const seen = new Set();
for (const r of [...bertRef, ...uniRef]) {
  if (r.text_pair === undefined || r.text_pair === null) {
    if (!seen.has(r.text)) { seen.add(r.text); singles.push(r.text); }
  }
}
const extra = [
  "Hello <mask> world", "Hello<mask>world", "a <mask>", "<s>hi</s>", " <s> x", "I'm here, you're there; they've gone.",
  "  two leading spaces", "trailing spaces   ", "tabs\tand\nnewlines\r\nmixed", "e\u0301te\u0301 cafe\u0301",
  "\uFF21\uFF22\uFF23 \uFF41\uFF42\uFF43", "\uFB01nance \uFB02ow", "a\u00A0b\u3000c", "zero\u200Bwidth", "dots\u2026 and \u2122",
  "\u2460\u2461 \u216B", "\uFF76\uFF80\uFF76\uFF85", "x\r\ny", "CamelCaseWord and snake_case_word", "123456789 3.14 1,000",
  "\u{1F600}\u{1F469}\u200D\u{1F4BB} \u{1F1EB}\u{1F1F7}", "\u0645\u0631\u062D\u0628\u0627 \u05E9\u05DC\u05D5\u05DD",
  "mixed 日本語 and English 한국어", "a".repeat(300), "ab ".repeat(100), " ".repeat(50), "\u0301".repeat(40),
  "don't DON'T Don't", "'s 't 're", "$100 @user #tag", "line1\n\nline3", "(?i) [a-z]+ \\d{3}",
];
for (const t of extra) if (!seen.has(t)) { seen.add(t); singles.push(t); }
const pairs = bertRef.filter((r) => r.text_pair !== undefined && r.text_pair !== null).map((r) => [r.text, r.text_pair]);
pairs.push(["Hello <mask>", "world </s> x"], ["short", "a much longer second text that will need truncating ".repeat(3)]);

// ---------------------------------------------------------------- a tiny BPE trainer
const GPT2_RE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
function bytesToUnicode() {
  const bs = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n); n++; }
  const m = {};
  bs.forEach((b, i) => { m[b] = String.fromCodePoint(cs[i]); });
  return m;
}
const B2U = bytesToUnicode();
const trainText = singles.concat(pairs.flat()).join('\n');

// words: arrays of symbols; returns [vocabList, merges]
function trainBpe(words, nMerges, prefix) {
  const counts = new Map();
  for (const w of words) { const k = JSON.stringify(w); counts.set(k, (counts.get(k) || 0) + 1); }
  let ws = [...counts.entries()].map(([k, c]) => [JSON.parse(k), c]);
  const merges = [];
  const newTokens = [];
  for (let it = 0; it < nMerges; it++) {
    const pc = new Map();
    for (const [w, c] of ws) for (let i = 0; i + 1 < w.length; i++) {
      const k = w[i] + '\u0000' + w[i + 1]; pc.set(k, (pc.get(k) || 0) + c);
    }
    let best = null; let bc = 0;
    for (const [k, c] of pc) if (c > bc || (c === bc && k < best)) { best = k; bc = c; }
    if (!best || bc < 2) break;
    const [a, b] = best.split('\u0000');
    const merged = a + (prefix && b.startsWith(prefix) ? b.slice(prefix.length) : b);
    merges.push([a, b]);
    newTokens.push(merged);
    ws = ws.map(([w, c]) => {
      const o = [];
      for (let i = 0; i < w.length; i++) {
        if (i + 1 < w.length && w[i] === a && w[i + 1] === b) { o.push(merged); i++; } else o.push(w[i]);
      }
      return [o, c];
    });
  }
  return [newTokens, merges];
}

function uniq(list) { const s = new Set(); return list.filter((x) => (s.has(x) ? false : (s.add(x), true))); }

// ---------------------------------------------------------------- a darts-clone double array
// Builds the Precompiled charsmap blob SentencePiece uses: u32 LE trie size, the units, then
// NUL-terminated replacement strings.
function buildCharsmap(entries) {
  const blob = []; const valueOffset = new Map();
  for (const [, v] of entries) if (!valueOffset.has(v)) { valueOffset.set(v, blob.length); blob.push(...Buffer.from(v, 'utf8'), 0); }
  const rootNode = { kids: new Map(), value: null };
  for (const [k, v] of entries) {
    let n = rootNode;
    for (const b of Buffer.from(k, 'utf8')) { if (!n.kids.has(b)) n.kids.set(b, { kids: new Map(), value: null }); n = n.kids.get(b); }
    n.value = valueOffset.get(v);
  }
  const units = [0]; const used = new Set([0]);
  function place(node, pos) {
    const labels = [...node.kids.keys()]; if (node.value !== null) labels.push(0);
    let base = 1;
    while (!labels.every((c) => !used.has(base ^ c))) base++;
    const offset = base ^ pos;
    if (offset >= (1 << 21)) throw new Error('double array too large');
    units[pos] = ((units[pos] || 0) | (offset << 10) | (node.value !== null ? 1 << 8 : 0)) >>> 0;
    for (const c of labels) used.add(base ^ c);
    if (node.value !== null) units[base] = ((1 << 31) | node.value) >>> 0;
    for (const [c, child] of [...node.kids.entries()].sort((x, y) => x[0] - y[0])) { units[base ^ c] = c; }
    for (const [c, child] of [...node.kids.entries()].sort((x, y) => x[0] - y[0])) place(child, base ^ c);
  }
  place(rootNode, 0);
  // darts-clone arrays come in blocks of 256 units, so every XOR step stays in bounds.
  const size = (Math.floor((units.length - 1) / 256) + 1) * 256 + 256;
  for (let i = 0; i < size; i++) if (units[i] === undefined) units[i] = 0;
  const buf = Buffer.alloc(4 + units.length * 4 + blob.length);
  buf.writeUInt32LE(units.length * 4, 0);
  units.forEach((u, i) => buf.writeUInt32LE(u >>> 0, 4 + i * 4));
  Buffer.from(blob).copy(buf, 4 + units.length * 4);
  return buf.toString('base64');
}

// ---------------------------------------------------------------- tokenizers
function addedToken(id, content, opts = {}) {
  return { id, content, single_word: !!opts.single_word, lstrip: !!opts.lstrip, rstrip: !!opts.rstrip,
    normalized: !!opts.normalized, special: opts.special !== false };
}
function vocabObject(list) { const o = {}; list.forEach((t, i) => { if (!(t in o)) o[t] = i; }); return o; }

const specs = {};

// 1. RoBERTa-like byte-level BPE.
{
  const words = (trainText.match(GPT2_RE) || []).map((w) => [...Buffer.from(w, 'utf8')].map((b) => B2U[b]));
  const [newTokens, merges] = trainBpe(words, 600, '');
  const specials = ['<s>', '<pad>', '</s>', '<unk>'];
  const alphabet = Object.keys(B2U).map(Number).sort((a, b) => a - b).map((b) => B2U[b]);
  const vocab = uniq([...specials, ...alphabet, ...newTokens, '<mask>']);
  const id = (t) => vocab.indexOf(t);
  specs['bpe-roberta'] = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [addedToken(0, '<s>'), addedToken(1, '<pad>'), addedToken(2, '</s>'), addedToken(3, '<unk>'),
      addedToken(id('<mask>'), '<mask>', { lstrip: true })],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', 2], cls: ['<s>', 0], trim_offsets: true, add_prefix_space: false },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: vocabObject(vocab), merges },
  };
  // The same with a ByteLevel post-processor plus a template, and a prefix space.
  specs['bpe-bytelevel-template'] = JSON.parse(JSON.stringify(specs['bpe-roberta']));
  Object.assign(specs['bpe-bytelevel-template'], {
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    post_processor: { type: 'Sequence', processors: [
      { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
      { type: 'TemplateProcessing',
        single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
        pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
          { SpecialToken: { id: '</s>', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
        special_tokens: { '<s>': { id: '<s>', ids: [0], tokens: ['<s>'] }, '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } } }] },
    truncation: { direction: 'Left', max_length: 24, strategy: 'LongestFirst', stride: 0 },
  });
}

// 1b. ModernBERT-like byte-level BPE (answerdotai/ModernBERT-base, the OLMo/GPT-NeoX tokenizer):
// NFC, ByteLevel without a prefix space, the |||IP_ADDRESS||| / <|padding|> tokens first, runs of
// 2-24 spaces as normalized non-special added tokens (GPT-NeoX's), then |||EMAIL_ADDRESS|||,
// |||PHONE_NUMBER|||, <|endoftext|> and [UNK] [CLS] [SEP] [PAD] [MASK] last; TemplateProcessing
// [CLS] A [SEP] / [CLS] A [SEP] B:1 [SEP]:1. warden-fixture's ModernBERT folders use this file.
{
  const nfc = (t) => t.normalize('NFC');
  const words = (nfc(trainText).match(GPT2_RE) || []).map((w) => [...Buffer.from(w, 'utf8')].map((b) => B2U[b]));
  const [newTokens, merges] = trainBpe(words, 700, '');
  const alphabet = Object.keys(B2U).map(Number).sort((a, b) => a - b).map((b) => B2U[b]);
  const spaces = [];
  for (let n = 24; n >= 2; n--) spaces.push(' '.repeat(n));
  const tail = ['|||EMAIL_ADDRESS|||', '|||PHONE_NUMBER|||', '<|endoftext|>', '[UNK]', '[CLS]', '[SEP]', '[PAD]', '[MASK]'];
  const vocab = uniq(['|||IP_ADDRESS|||', '<|padding|>', ...alphabet, ...newTokens, ...spaces, ...tail]);
  const id = (t) => vocab.indexOf(t);
  const sp = (t, typeId) => ({ SpecialToken: { id: t, type_id: typeId } });
  const seq = (t, typeId) => ({ Sequence: { id: t, type_id: typeId } });
  specs['bpe-modernbert'] = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [
      addedToken(0, '|||IP_ADDRESS|||', { normalized: true, special: false }), addedToken(1, '<|padding|>'),
      ...spaces.map((s) => addedToken(id(s), s, { normalized: true, special: false })),
      addedToken(id('|||EMAIL_ADDRESS|||'), '|||EMAIL_ADDRESS|||', { normalized: true, special: false }),
      addedToken(id('|||PHONE_NUMBER|||'), '|||PHONE_NUMBER|||', { normalized: true, special: false }),
      addedToken(id('<|endoftext|>'), '<|endoftext|>'), addedToken(id('[UNK]'), '[UNK]'),
      addedToken(id('[CLS]'), '[CLS]'), addedToken(id('[SEP]'), '[SEP]'), addedToken(id('[PAD]'), '[PAD]'),
      addedToken(id('[MASK]'), '[MASK]', { lstrip: true })],
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'TemplateProcessing', single: [sp('[CLS]', 0), seq('A', 0), sp('[SEP]', 0)],
      pair: [sp('[CLS]', 0), seq('A', 0), sp('[SEP]', 0), seq('B', 1), sp('[SEP]', 1)],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [id('[CLS]')], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [id('[SEP]')], tokens: ['[SEP]'] } } },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: vocabObject(vocab), merges },
  };
}

// 1c. Qwen2/Qwen3-like byte-level BPE (Qwen/Qwen3-Embedding-0.6B's tokenizer.json layout): NFC,
// then a Split on Qwen2's pattern (single digits; letters with one leading non-letter) and a
// ByteLevel pre-tokenizer without its own regex or prefix space; Qwen's added tokens after the
// vocabulary (<|endoftext|>, the chat and vision markers special; <tool_call>, <think>, the FIM
// tokens not), none normalised; Qwen3-Embedding's TemplateProcessing that appends <|endoftext|>
// ($A <|endoftext|>, and $A <|endoftext|> $B:1 <|endoftext|>:1); the ByteLevel decoder.
// warden-fixture's Qwen3 folders use this file.
{
  const QWEN_RE = /'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;
  const nfc = (t) => t.normalize('NFC');
  // The reranker's answers ("yes", "no": the tokens it scores with) as words of their own.
  const qwenText = trainText + '\nyes\nno\n'.repeat(4);
  const words = (nfc(qwenText).match(QWEN_RE) || []).map((w) => [...Buffer.from(w, 'utf8')].map((b) => B2U[b]));
  const [newTokens, merges] = trainBpe(words, 700, '');
  const alphabet = Object.keys(B2U).map(Number).sort((a, b) => a - b).map((b) => B2U[b]);
  const vocab = uniq([...alphabet, ...newTokens]);
  const special = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|object_ref_start|>', '<|object_ref_end|>',
    '<|box_start|>', '<|box_end|>', '<|quad_start|>', '<|quad_end|>', '<|vision_start|>', '<|vision_end|>',
    '<|vision_pad|>', '<|image_pad|>', '<|video_pad|>'];
  const plain = ['<tool_call>', '</tool_call>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|fim_pad|>',
    '<|repo_name|>', '<|file_sep|>', '<tool_response>', '</tool_response>', '<think>', '</think>'];
  const added = [...special, ...plain].map((t, i) => addedToken(vocab.length + i, t, { special: special.includes(t) }));
  const eos = vocab.length;  // <|endoftext|>
  const sp = (t, typeId) => ({ SpecialToken: { id: t, type_id: typeId } });
  const seq = (t, typeId) => ({ Sequence: { id: t, type_id: typeId } });
  specs['bpe-qwen3'] = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: added,
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { Regex: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
        behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false }] },
    post_processor: { type: 'TemplateProcessing', single: [seq('A', 0), sp('<|endoftext|>', 0)],
      pair: [seq('A', 0), sp('<|endoftext|>', 0), seq('B', 1), sp('<|endoftext|>', 1)],
      special_tokens: { '<|endoftext|>': { id: '<|endoftext|>', ids: [eos], tokens: ['<|endoftext|>'] } } },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: vocabObject(vocab), merges },
  };
  // Qwen3-Reranker's tokenizer.json: the same, with the base Qwen tokenizer's ByteLevel
  // post-processor (no <|endoftext|> appended).
  specs['bpe-qwen3-reranker'] = Object.assign(JSON.parse(JSON.stringify(specs['bpe-qwen3'])), {
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
  });
}
// Cases a spec adds to the common ones: the Qwen3 reranker's and embedder's prompts (chat markers
// around text, the query instruction), digits, and the regex's letter-with-one-leading-symbol rule.
const specCases = {
  'bpe-qwen3': [
    '<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct ' +
      'provided. Note that the answer can only be "yes" or "no".<|im_end|>\n<|im_start|>user\n<Instruct>: Given a ' +
      'web search query, retrieve relevant passages that answer the query\n<Query>: what is the capital of China?\n' +
      '<Document>: The capital of China is Beijing.<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    'Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:What is the capital of China?',
    'Explain gravity', '2024-06-05: 12345 apples, 3.14159 pies', '$hello #world @user !!!wow', "I'VE we'Ll they'RE",
    'tab\tsep\r\nCRLF\n\n\nlines   \n  ', '<|endoftext|><|endoftext|>', 'x<think>y</think>z',
  ],
};

// 2. Llama-like BPE with byte fallback over a Metaspace-style normalizer.
{
  const words = singles.concat(pairs.flat()).map((t) => ['\u2581', ...('\u2581' + t.replace(/ /g, '\u2581')).slice(1)].slice(1));
  const chars = uniq(trainText.replace(/ /g, '\u2581').split('').filter((c) => c.codePointAt(0) < 0x250 && c !== '\n'));
  const [newTokens, merges] = trainBpe(words.map((w) => [...w.join('')]), 500, '');
  const bytes = []; for (let b = 0; b < 256; b++) bytes.push('<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>');
  const vocab = uniq(['<unk>', '<s>', '</s>', ...bytes, '\u2581', ...chars.sort(), ...newTokens]);
  // Keep only merges whose parts survived (all do: chars covers the training alphabet or merges).
  const vs = new Set(vocab);
  const okMerges = merges.filter(([a, b]) => vs.has(a) && vs.has(b) && vs.has(a + b));
  specs['bpe-llama'] = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [addedToken(0, '<unk>'), addedToken(1, '<s>'), addedToken(2, '</s>')],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '\u2581' },
      { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' }] },
    pre_tokenizer: null,
    post_processor: { type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } } },
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
      { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab: vocabObject(vocab), merges: okMerges },
  };
}

// 2a. Mistral v0.1's layout with add_eos_token (e5-mistral-7b-instruct, SFR-Embedding-Mistral):
// the Llama layout above whose template LlamaTokenizerFast.update_post_processor rebuilt as
// <s> A </s>, the </s> the last-token pooling reads.
{
  const m = JSON.parse(JSON.stringify(specs['bpe-llama']));
  const sp = (t, typeId) => ({ SpecialToken: { id: t, type_id: typeId } });
  const seq = (t, typeId) => ({ Sequence: { id: t, type_id: typeId } });
  m.post_processor = { type: 'TemplateProcessing', single: [sp('<s>', 0), seq('A', 0), sp('</s>', 0)],
    pair: [sp('<s>', 0), seq('A', 0), sp('</s>', 0), sp('<s>', 1), seq('B', 1), sp('</s>', 1)],
    special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] }, '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } } };
  specs['bpe-mistral'] = m;
}

// 2b. Gemma3's layout (transformers' GemmaConverter; EmbeddingGemma's tokenizer.json): spaces
// replaced by U+2581 without a prefix one, a Split on " " that the normaliser leaves nothing to
// split, BPE with byte fallback whose <0x09> piece is spelled "\t", <pad> <eos> <bos> <unk> <mask>
// first, and EmbeddingGemma's template wrapping a text in <bos> ... <eos>.
{
  const words = [];
  for (const t of singles.concat(pairs.flat())) {
    for (const w of t.replace(/ /g, '\u2581').split(/(?=\u2581)/u)) if (w) words.push([...w]);
  }
  const chars = uniq(trainText.replace(/ /g, '\u2581').split('').filter((c) => c.codePointAt(0) < 0x250));
  const [newTokens, merges] = trainBpe(words, 600, '');
  const bytes = [];
  for (let b = 0; b < 256; b++) bytes.push(b === 9 ? '\t' : '<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>');
  const specials = ['<pad>', '<eos>', '<bos>', '<unk>', '<mask>', '[multimodal]', '<start_of_turn>', '<end_of_turn>'];
  const vocab = uniq([...specials, ...bytes, '\u2581', ...chars.sort(), ...newTokens]);
  const vs = new Set(vocab);
  const okMerges = merges.filter(([a, b]) => vs.has(a) && vs.has(b) && vs.has(a + b));
  const sp = (t, typeId) => ({ SpecialToken: { id: t, type_id: typeId } });
  const seq = (t, typeId) => ({ Sequence: { id: t, type_id: typeId } });
  specs['bpe-gemma3'] = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: specials.map((t, i) => addedToken(i, t)),
    normalizer: { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' },
    pre_tokenizer: { type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithPrevious', invert: false },
    post_processor: { type: 'TemplateProcessing', single: [sp('<bos>', 0), seq('A', 0), sp('<eos>', 0)],
      pair: [sp('<bos>', 0), seq('A', 0), sp('<eos>', 0), sp('<bos>', 1), seq('B', 1), sp('<eos>', 1)],
      special_tokens: { '<bos>': { id: '<bos>', ids: [2], tokens: ['<bos>'] },
        '<eos>': { id: '<eos>', ids: [1], tokens: ['<eos>'] } } },
    decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
      { type: 'ByteFallback' }, { type: 'Fuse' }] },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab: vocabObject(vocab), merges: okMerges },
  };
  specCases['bpe-gemma3'] = [
    'task: search result | query: what is the capital of China?', 'title: none | text: The capital of China is Beijing.',
    'task: sentence similarity | query: tab\tsep and  two spaces', '<start_of_turn>user\nhi<end_of_turn>\n',
    '  leading and trailing  ', '\u{1F600} emoji \u00e9t\u00e9 \u65e5\u672c', 'word '.repeat(600),
  ];
}

// 3. BPE with a continuing-subword prefix and an end-of-word suffix, behind a regex Split.
{
  const re = /[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+/gu;
  const wordsRaw = (trainText.toLowerCase().match(re) || []);
  const wordsPrefix = wordsRaw.map((w) => [...w].map((c, i) => (i === 0 ? c : '##' + c)));
  const [tokP, mergesP] = trainBpe(wordsPrefix, 400, '##');
  const charsP = uniq(wordsPrefix.flat());
  const vocabP = uniq(['[UNK]', ...charsP.sort(), ...tokP]);
  specs['bpe-prefix'] = {
    version: '1.0', truncation: null, padding: null, added_tokens: [addedToken(0, '[UNK]')],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFC' }, { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' }, { type: 'Lowercase' }] },
    pre_tokenizer: { type: 'Split', pattern: { Regex: "'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+" }, behavior: 'Removed', invert: true },
    post_processor: null,
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'BPE', dropout: null, unk_token: '[UNK]', continuing_subword_prefix: '##', end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: vocabObject(vocabP), merges: mergesP },
  };
  const wordsSuffix = wordsRaw.map((w) => [...w].map((c, i, a) => (i === a.length - 1 ? c + '</w>' : c)));
  const [tokS, mergesS] = trainBpe(wordsSuffix, 400, '');
  const charsS = uniq(wordsSuffix.flat());
  const vocabS = uniq(['<unk>', ...charsS.sort(), ...tokS]);
  specs['bpe-suffix'] = {
    version: '1.0', truncation: null, padding: null, added_tokens: [addedToken(0, '<unk>')],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Lowercase' }, { type: 'Strip', strip_left: true, strip_right: true }] },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' }, { type: 'Digits', individual_digits: true }] },
    post_processor: null,
    decoder: { type: 'BPEDecoder', suffix: '</w>' },
    model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: '</w>',
      fuse_unk: true, byte_fallback: false, ignore_merges: false, vocab: vocabObject(vocabS), merges: mergesS },
  };
}

// 4. XLM-R-like: Precompiled charsmap + WhitespaceSplit + Metaspace + Unigram, with pairs.
{
  const use = JSON.parse(fs.readFileSync(path.join(root, 'tests', 'data', 'unigram-use-vocab-tokenizer.json'), 'utf8'));
  const pieces = use.model.vocab.slice(6);
  const vocab = [['<s>', 0.0], ['<pad>', 0.0], ['</s>', 0.0], ['<unk>', 0.0], ...pieces, ['<mask>', 0.0]];
  const maskId = vocab.length - 1;
  const fw = [];
  for (let c = 0; c < 26; c++) {
    fw.push([String.fromCodePoint(0xff21 + c), String.fromCharCode(65 + c)]);
    fw.push([String.fromCodePoint(0xff41 + c), String.fromCharCode(97 + c)]);
  }
  const charsmap = buildCharsmap([...fw, ['\uFB01', 'fi'], ['\uFB02', 'fl'], ['\u00A0', ' '], ['\u3000', ' '],
    ['\t', ' '], ['\n', ' '], ['\r', ' '], ['\u200B', ''], ['e\u0301', '\u00E9'], ['\u2026', '...'], ['\u2122', 'TM'],
    ['\u2460', '1'], ['\u2461', '2'], ['\u216B', 'XII'], ['\uFF76', '\u30AB'], ['\uFF80', '\u30BF'], ['\uFF85', '\u30CA'],
    ['\u00C5', 'A\u030A']]);
  specs['unigram-xlmr'] = {
    version: '1.0', truncation: { direction: 'Right', max_length: 40, strategy: 'OnlySecond', stride: 0 }, padding: null,
    added_tokens: [addedToken(0, '<s>'), addedToken(1, '<pad>'), addedToken(2, '</s>'), addedToken(3, '<unk>'),
      addedToken(maskId, '<mask>', { lstrip: true })],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Precompiled', precompiled_charsmap: charsmap },
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' },
      { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true }] },
    post_processor: { type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } },
        { SpecialToken: { id: '</s>', type_id: 0 } }, { Sequence: { id: 'B', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [0], tokens: ['<s>'] }, '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } } },
    decoder: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 3, vocab, byte_fallback: false },
  };
  // Unigram with byte fallback, NFKD + StripAccents, Metaspace(first, no split), Punctuation.
  const bytes = []; for (let b = 0; b < 256; b++) bytes.push(['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>', 0.0]);
  specs['unigram-bytefallback'] = {
    version: '1.0', truncation: null, padding: { strategy: { Fixed: 48 }, direction: 'Left', pad_to_multiple_of: null, pad_id: 1, pad_type_id: 0, pad_token: '<pad>' },
    added_tokens: [addedToken(0, '<s>'), addedToken(1, '<pad>'), addedToken(2, '</s>'), addedToken(3, '<unk>')],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKD' }, { type: 'StripAccents' }, { type: 'Strip', strip_left: false, strip_right: true }] },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Punctuation', behavior: 'MergedWithPrevious' },
      { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false }] },
    post_processor: { type: 'BertProcessing', sep: ['</s>', 2], cls: ['<s>', 0] },
    decoder: { type: 'Sequence', decoders: [{ type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'first', split: false }, { type: 'ByteFallback' }, { type: 'Fuse' }] },
    model: { type: 'Unigram', unk_id: 3, vocab: [...vocab.slice(0, -1), ...bytes], byte_fallback: true },
  };
}

// 5. WordPiece with other pre-tokenizers and behaviours, BERT vocabulary.
{
  const bert = JSON.parse(fs.readFileSync(path.join(root, 'tests', 'data', 'bert-base-uncased-tokenizer.json'), 'utf8'));
  const base = (over) => Object.assign(JSON.parse(JSON.stringify(bert)), over);
  specs['wordpiece-split-behaviors'] = base({
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }, { type: 'Lowercase' },
      { type: 'Replace', pattern: { String: '``' }, content: '"' }] },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [
      { type: 'Split', pattern: { String: ' ' }, behavior: 'MergedWithNext', invert: false },
      { type: 'Split', pattern: { Regex: '\\s+' }, behavior: 'Removed', invert: false },
      { type: 'Punctuation', behavior: 'Contiguous' },
      { type: 'Digits', individual_digits: false }] },
    truncation: { direction: 'Right', max_length: 20, strategy: 'OnlyFirst', stride: 0 },
    padding: { strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: 8, pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' },
  });
  specs['wordpiece-whitespace'] = base({
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: false, strip_accents: false, lowercase: true },
    pre_tokenizer: { type: 'WhitespaceSplit' },
    post_processor: { type: 'BertProcessing', sep: ['[SEP]', 102], cls: ['[CLS]', 101] },
    added_tokens: [...bert.added_tokens, addedToken(30522, 'hello world', { normalized: true, special: false }),
      addedToken(30523, 'xyz', { single_word: true, special: false, normalized: false }),
      addedToken(30524, '[END]', { rstrip: true })],
  });
  // MPNet (microsoft/mpnet-base, all-mpnet-base-v2): bert-base-uncased's vocabulary after <s> <pad>
  // </s> <unk>, <mask> last; BertNormalizer with strip_accents null; transformers' MPNetConverter
  // template: <s> A </s>, <s> A </s> </s> B:1 </s>:1.
  const shifted = ['<s>', '<pad>', '</s>', '<unk>',
    ...Object.entries(bert.model.vocab).sort((x, y) => x[1] - y[1]).map(([t]) => t), '<mask>'];
  const sp = (id, typeId) => ({ SpecialToken: { id, type_id: typeId } });
  const seq = (id, typeId) => ({ Sequence: { id, type_id: typeId } });
  specs['wordpiece-mpnet'] = base({
    added_tokens: [addedToken(0, '<s>'), addedToken(1, '<pad>'), addedToken(2, '</s>'), addedToken(3, '<unk>'),
      addedToken(104, '[UNK]'), addedToken(shifted.length - 1, '<mask>', { lstrip: true })],
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    post_processor: { type: 'TemplateProcessing', single: [sp('<s>', 0), seq('A', 0), sp('</s>', 0)],
      pair: [sp('<s>', 0), seq('A', 0), sp('</s>', 0), sp('</s>', 0), seq('B', 1), sp('</s>', 1)],
      special_tokens: { '<s>': { id: '<s>', ids: [0], tokens: ['<s>'] }, '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } } },
    model: Object.assign({}, bert.model, { vocab: vocabObject(shifted) }),
  });
}

// 6. WordLevel behind Nmt + CharDelimiterSplit, and a ByteLevel normalizer in front of BPE.
{
  const words = uniq(trainText.replace(/[\t\n\r]/g, ' ').split(' ').filter((w) => w).slice(0, 3000));
  specs['wordlevel-nmt'] = {
    version: '1.0', truncation: null, padding: null, added_tokens: [addedToken(0, '<unk>')],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Nmt' }, { type: 'NFKC' }] },
    pre_tokenizer: { type: 'CharDelimiterSplit', delimiter: ' ' },
    post_processor: null, decoder: null,
    model: { type: 'WordLevel', vocab: vocabObject(['<unk>', ...words]), unk_token: '<unk>' },
  };
  const bl = JSON.parse(JSON.stringify(specs['bpe-roberta']));
  bl.normalizer = { type: 'ByteLevel' };
  bl.pre_tokenizer = { type: 'Split', pattern: { Regex: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, behavior: 'Isolated', invert: false };
  specs['bpe-bytelevel-normalizer'] = bl;
}

// ---------------------------------------------------------------- run HF
async function run() {
  for (const [name, spec] of Object.entries(specs)) {
    const json = JSON.stringify(spec);
    const tok = Tokenizer.fromString(json);
    fs.writeFileSync(path.join(outDir, name + '.json'), json);
    // warden-fixture's ModernBERT folders take their tokenizer.json from here.
    if (name === 'bpe-modernbert') {
      fs.writeFileSync(path.join(root, 'tools', 'fixtures', 'data', 'modernbert-bpe-tokenizer.json'), json);
    }
    if (['bpe-qwen3', 'bpe-qwen3-reranker', 'bpe-gemma3', 'bpe-llama', 'bpe-mistral'].includes(name)) {
      fs.writeFileSync(path.join(root, 'tools', 'fixtures', 'data', name.slice(4) + '-bpe-tokenizer.json'), json);
    }
    const lines = [];
    const cases = [];
    for (const t of singles) { cases.push([t, null, true]); }
    for (const t of singles.slice(0, 40)) { cases.push([t, null, false]); }
    for (const [a, b] of pairs) { cases.push([a, b, true]); cases.push([a, b, false]); }
    for (const t of specCases[name.replace('-reranker', '')] || []) { cases.push([t, null, true]); cases.push([t, null, false]); }
    for (const [a, b, add] of cases) {
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
