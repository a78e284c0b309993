#!/usr/bin/env node
// Tokenizes a list of inputs with HuggingFace `tokenizers` itself (the Rust crate, through the
// native Node binding `@anush008/tokenizers` 0.6.0), for the golden outputs of tools/golden.
//
//   node tools/golden/tokenize.mjs TOKENIZER_JSON INPUTS_JSON [--no-special-tokens] > tokens.json
//
// INPUTS_JSON is a JSON list whose items are a text ("...") or a pair (["text", "text_pair"]).
// Output (stdout, JSON): {"tokenizers_binding": "...", "encodings": [{"ids", "type_ids",
// "attention_mask", "tokens", "offsets"}, ...]} with one encoding per input, special tokens added
// (the post-processor of the tokenizer.json: [CLS] A [SEP] B [SEP], <s> A </s></s> B </s>, ...),
// or none with --no-special-tokens (add_special_tokens=False, as static embedders encode).
// Padding is disabled (each input is encoded alone, so the attention mask is all ones);
// truncation is whatever the tokenizer.json says.
//
// The binding is not a project dependency: it lives in a cache directory outside the repository,
// installed by scripts/setup-reference. It is looked up in $WARDEN_TOKREF_DIR, then
// ${XDG_CACHE_HOME:-~/.cache}/warden/tokref, then /tmp/tokref (each a directory holding
// node_modules/@anush008/tokenizers).
import { createRequire } from "node:module";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

function findBinding() {
  const candidates = [];
  if (process.env.WARDEN_TOKREF_DIR) candidates.push(process.env.WARDEN_TOKREF_DIR);
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  candidates.push(join(cache, "warden", "tokref"), "/tmp/tokref");
  for (const dir of candidates) {
    const pkg = join(dir, "node_modules", "@anush008", "tokenizers", "package.json");
    if (existsSync(pkg)) {
      const require = createRequire(join(dir, "package.json"));
      const version = JSON.parse(readFileSync(pkg, "utf8")).version;
      return { mod: require("@anush008/tokenizers"), where: dir, version };
    }
  }
  throw new Error(
    `@anush008/tokenizers not found in any of: ${candidates.join(", ")} ` +
      "(run scripts/setup-reference, or set WARDEN_TOKREF_DIR)");
}

async function main() {
  let args = process.argv.slice(2);
  const addSpecialTokens = !args.includes("--no-special-tokens");
  args = args.filter((a) => a !== "--no-special-tokens");
  if (args.length !== 2) {
    process.stderr.write("usage: tokenize.mjs TOKENIZER_JSON INPUTS_JSON [--no-special-tokens]\n");
    process.exit(2);
  }
  const [tokenizerPath, inputsPath] = args;
  const inputs = JSON.parse(readFileSync(inputsPath, "utf8"));
  if (!Array.isArray(inputs)) throw new Error("INPUTS_JSON must be a JSON list");

  const { mod, version } = findBinding();
  const tokenizer = mod.Tokenizer.fromFile(tokenizerPath);
  tokenizer.disablePadding();

  const encodings = [];
  for (const [i, item] of inputs.entries()) {
    let enc;
    if (typeof item === "string") {
      enc = await tokenizer.encode(item, null, { addSpecialTokens });
    } else if (Array.isArray(item) && item.length === 2 &&
               typeof item[0] === "string" && typeof item[1] === "string") {
      enc = await tokenizer.encode(item[0], item[1], { addSpecialTokens });
    } else {
      throw new Error(`input ${i}: expected a string or a [text, text_pair] list`);
    }
    encodings.push({
      ids: enc.getIds(),
      type_ids: enc.getTypeIds(),
      attention_mask: enc.getAttentionMask(),
      tokens: enc.getTokens(),
      offsets: enc.getOffsets(),
    });
  }
  process.stdout.write(JSON.stringify({
    tokenizers_binding: `@anush008/tokenizers ${version}`,
    encodings,
  }) + "\n");
}

main().catch((e) => {
  process.stderr.write(`tokenize.mjs: ${e.message}\n`);
  process.exit(1);
});
