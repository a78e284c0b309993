// Prompt-injection detectors from npm, scored text by text on a guard bank so that they can be
// compared with Warden's guard on the same held-out rows (bench/run_guard_peers).
//
//   node bench/peers/guard_peers.mjs PEER FILE.jsonl      PEER: vard | llm_guardrail | aidefence
//
// FILE holds {"text", "label": "attack"|"benign", "category", "split"} lines; only the rows with
// split "test" are read (all rows when no row has a split). One JSON line per row on stdout:
// {"peer", "index" (0-based among the rows read), "label", "category", "score" (higher = more
// likely an attack), "flagged" (the peer's own default decision), "ms" (that one call), "detail"};
// a peer that throws gives score and flagged null and "error". The packages are looked up in
// $GUARD_PEERS_DIR/node_modules, then in each NODE_PATH folder, then in
// ~/.cache/warden/guard-peers/node_modules. All three run offline, with what the package ships.
//
// vard — @andersmyrmel/vard 1.2.0, regular expressions in 5 threat types, each match carrying a
//   fixed severity in [0.6, 0.95].
//   flagged: !vard.safe(text).safe, the default ("moderate") preset: threshold 0.7, blocks
//     instructionOverride, roleManipulation and systemPromptLeak; delimiterInjection and
//     encoding are only sanitised (a block comes from them only if the sanitised text is).
//     Texts over 10,000 characters are blocked too.
//   score: the highest severity of any match, every type counted and no threshold, from
//     vard().threshold(0).block(<all 5 types>).safeParse(text); 0 when nothing matches. (So
//     score >= 0.7 need not mean flagged: a delimiter match alone is not blocked by default.)
//   ms: the vard.safe call alone (the scoring pass is a second, untimed call).
// llm_guardrail — llm_guardrail 2.1.2, three TF-IDF (1-2 grams, ASCII \w tokens) + logistic
//   regression models (prompt_injection, jailbreak, malicious) whose weights ship in the package
//   (model/*.json, 3 MB); nothing is downloaded.
//   flagged: !checkAll(text).allowed, i.e. any of the three probabilities >= 0.5.
//   score: the highest of the three probabilities (checkAll's .injection/.jailbreak/.malicious
//     .confidence; its maxThreatConfidence is 0 unless a model fires, so it is not used).
//   detail: the three probabilities. The models load on first use: one warm-up call before timing.
// aidefence — @claude-flow/aidefence 3.0.3, 28 regular expressions on NFKC-normalised text, each
//   with a base confidence (0.35 to 0.98) adjusted by context (+0.05 per other pattern matching,
//   x0.9 under 50 characters, +0.05 when the match starts in the first 20 characters).
//   flagged: !checkThreats(text).safe: any match at all flags (the documented
//     confidenceThreshold option is not read by the 3.0.3 code).
//   score: the highest threat confidence in checkThreats(text).threats; 0 when none.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

// The packages are ES modules with "import"-only exports, so require() cannot load them and ESM
// import ignores NODE_PATH: find the folder, then import the entry point by file URL.
async function load(name) {
  const dirs = [
    process.env.GUARD_PEERS_DIR && path.join(process.env.GUARD_PEERS_DIR, "node_modules"),
    ...(process.env.NODE_PATH || "").split(path.delimiter),
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "warden", "guard-peers", "node_modules"),
  ].filter(Boolean);
  for (const dir of dirs) {
    const pkgDir = path.join(dir, name);
    if (!fs.existsSync(path.join(pkgDir, "package.json"))) continue;
    const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
    const exp = pkg.exports?.["."];
    const entry = (typeof exp === "string" ? exp : exp?.import ?? exp?.default) ?? pkg.main ?? "index.js";
    return import(pathToFileURL(path.join(pkgDir, entry)).href);
  }
  throw new Error(`${name} not found in ${dirs.join(", ")} (bench/run_guard_peers installs it)`);
}

const maxOf = (xs) => xs.reduce((m, x) => Math.max(m, x), 0);

// Each peer: async () => (text) => {score, flagged, detail, ms?} (or a promise of one); ms, when
// given, replaces the time of the whole call.
const peers = {
  async vard() {
    const { default: vard } = await load("@andersmyrmel/vard");
    const everything = ["instructionOverride", "roleManipulation", "delimiterInjection", "systemPromptLeak", "encoding"]
      .reduce((v, type) => v.block(type), vard().threshold(0));
    return (text) => {
      const t0 = performance.now();
      const flagged = !vard.safe(text).safe;
      const ms = performance.now() - t0; // the default call alone, not the scoring pass
      const all = everything.safeParse(text);
      const threats = all.safe ? [] : all.threats;
      return { score: maxOf(threats.map((t) => t.severity)), flagged, ms, detail: { types: [...new Set(threats.map((t) => t.type))] } };
    };
  },
  async llm_guardrail() {
    const { checkAll } = await load("llm_guardrail");
    await checkAll("warm-up"); // loads the three models
    return async (text) => {
      const r = await checkAll(text);
      const p = { injection: r.injection.confidence, jailbreak: r.jailbreak.confidence, malicious: r.malicious.confidence };
      return { score: maxOf(Object.values(p)), flagged: !r.allowed, detail: p };
    };
  },
  async aidefence() {
    const { checkThreats } = await load("@claude-flow/aidefence");
    return (text) => {
      const r = checkThreats(text);
      return { score: maxOf(r.threats.map((t) => t.confidence)), flagged: !r.safe, detail: { types: r.threats.map((t) => t.type) } };
    };
  },
};

const [peer, file] = process.argv.slice(2);
if (!peers[peer] || !file) {
  console.error(`usage: node bench/peers/guard_peers.mjs ${Object.keys(peers).join("|")} FILE.jsonl`);
  process.exit(2);
}
const all = fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
const rows = all.some((r) => "split" in r) ? all.filter((r) => r.split === "test") : all;
let judge;
try {
  judge = await peers[peer]();
} catch (e) {
  console.error(`guard_peers: ${peer}: ${e?.message ?? e}`);
  process.exit(1);
}
for (const [index, row] of rows.entries()) {
  const line = { peer, index, label: row.label, category: row.category };
  const t0 = performance.now();
  try {
    const { score, flagged, ms, detail } = await judge(row.text);
    Object.assign(line, { score, flagged, ms: ms ?? performance.now() - t0, detail });
  } catch (e) {
    Object.assign(line, { score: null, flagged: null, ms: performance.now() - t0, error: String(e?.message ?? e) });
  }
  line.ms = Math.round(line.ms * 1000) / 1000;
  process.stdout.write(JSON.stringify(line) + "\n");
}
