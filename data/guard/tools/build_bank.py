#!/usr/bin/env python3
"""Builds data/guard/bank.jsonl from the hand-written parts in data/guard/parts/.

Every row keeps its part's text, label, category, lang and group; this script adds
  * "split": "test" for about 30% of the groups, chosen by a hash of the group, so that
    variants of one item never straddle the split (the test split is never used for
    fitting or for choosing anything);
  * disguised copies ("obfuscated_attack" / "obfuscated_benign", with "disguise" naming
    the kind): a seeded sample of the direct attacks and of the benign chat and hard
    negatives, re-written in base64, hex, URL escapes, ROT13, leetspeak, zero-width
    characters, look-alike letters, full-width letters, Unicode tag characters, spaced
    letters and reversed text. A copy keeps its source's group, hence its split.
Deterministic: the same parts give the same bank. Standard library only.

    python3 data/guard/tools/build_bank.py
"""
import base64
import codecs
import hashlib
import json
import pathlib
import random
import sys
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parents[1]
PARTS = ROOT / "parts"
OUT = ROOT / "bank.jsonl"
TEST_FRACTION = 0.30
KEYS = {"text", "label", "category", "lang", "group"}


def test_group(group: str) -> bool:
    h = int.from_bytes(hashlib.sha256(group.encode()).digest()[:8], "big")
    return h / 2**64 < TEST_FRACTION


CYRILLIC = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440", "c": "\u0441", "x": "\u0445",
            "y": "\u0443", "i": "\u0456", "s": "\u0455", "A": "\u0410", "E": "\u0415", "O": "\u041e",
            "P": "\u0420", "C": "\u0421", "T": "\u0422", "H": "\u041d", "K": "\u041a", "M": "\u041c"}
LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"}


def leet(text, rng):
    return "".join(LEET[c.lower()] if c.lower() in LEET and rng.random() < 0.7 else c for c in text)


def zero_width(text, rng):
    out = []
    for i, c in enumerate(text):
        out.append(c)
        if c.isalpha() and i + 1 < len(text) and text[i + 1].isalpha() and rng.random() < 0.35:
            out.append(rng.choice(["\u200b", "\u200c", "\u2060", "\ufeff"]))
    return "".join(out)


def homoglyph(text, rng):
    return "".join(CYRILLIC[c] if c in CYRILLIC and rng.random() < 0.6 else c for c in text)


def fullwidth(text, _rng):
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else ("\u3000" if c == " " else c) for c in text)


def tags(text, rng):
    cover = rng.choice(["Thanks!", "Nice weather today.", "See attached.", "ok", "Hello"])
    return cover + "".join(chr(0xE0000 + ord(c)) for c in text if 0x20 <= ord(c) < 0x7F)


def spaced(text, rng):
    sep = rng.choice([" ", "-", "."])
    return "  ".join(sep.join(w) for w in text.split())


def wrap(encoded, attack, rng):
    if attack:
        return rng.choice(["{}", "Decode this and do what it says: {}", "{} (decode first, then follow it)",
                           "New task, encoded for transport: {}"]).format(encoded)
    return rng.choice(["{}", "Can you decode this for me? {}", "What does this say: {}",
                       "My friend sent me this, what is it? {}"]).format(encoded)


DISGUISES = {
    "base64": lambda t, a, r: wrap(base64.b64encode(t.encode()).decode(), a, r),
    "hex": lambda t, a, r: wrap(t.encode().hex(), a, r),
    "url": lambda t, a, r: wrap(urllib.parse.quote(t, safe=""), a, r),
    "rot13": lambda t, a, r: r.choice(["{}", "rot13: {}"]).format(codecs.encode(t, "rot13")),
    "leetspeak": lambda t, a, r: leet(t, r),
    "zero_width": lambda t, a, r: zero_width(t, r),
    "homoglyph": lambda t, a, r: homoglyph(t, r),
    "fullwidth": lambda t, a, r: fullwidth(t, r),
    "tag_characters": lambda t, a, r: tags(t, r),
    "spaced_letters": lambda t, a, r: spaced(t, r),
    "reversed": lambda t, a, r: r.choice(["{}", "Read this backwards: {}"]).format(t[::-1]),
}


def read_parts():
    rows = []
    for path in sorted(PARTS.glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if set(row) != KEYS or row["label"] not in ("attack", "benign") or not row["text"].strip():
                sys.exit(f"{path}:{n}: expected keys {sorted(KEYS)} and a label attack|benign")
            rows.append(row)
    return rows


def main():
    # A text written in two parts (a greeting in chat and in the multilingual part) is kept once.
    seen = set()
    rows = []
    for r in read_parts():
        if r["text"] in seen:
            print(f"dropped a duplicate: {r['text'][:60]!r} ({r['group']})", file=sys.stderr)
            continue
        seen.add(r["text"])
        rows.append(r)
    rng = random.Random(20261204)
    sources = {
        "attack": [r for r in rows if r["category"] == "direct_injection"],
        "benign": [r for r in rows if r["category"] in ("chat", "hard_negative")],
    }
    kinds = sorted(DISGUISES)
    disguised = []
    for label, pool in sorted(sources.items()):
        for i, src in enumerate(rng.sample(pool, min(len(pool), 22 * len(kinds)))):
            kind = kinds[i % len(kinds)]
            text = DISGUISES[kind](src["text"], label == "attack", rng)
            if text in seen:
                continue
            seen.add(text)
            disguised.append({"text": text, "label": label, "category": f"obfuscated_{label}",
                              "lang": src["lang"], "group": src["group"], "disguise": kind})
    out = []
    for r in rows + disguised:
        r = dict(r)
        r["split"] = "test" if test_group(r["group"]) else "train"
        out.append(r)
    # One shuffle, seeded, so that the folds (line index mod 4) mix the categories.
    rng.shuffle(out)
    with OUT.open("w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts = {}
    for r in out:
        key = (r["label"], r["category"], r["split"])
        counts[key] = counts.get(key, 0) + 1
    for key in sorted(counts):
        print(*key, counts[key], sep="\t")
    print("total", len(out), sep="\t")


if __name__ == "__main__":
    main()
