#!/usr/bin/env python3
"""Keeps README.md's capability tables from going stale (standard library only).

Fails, naming each problem, when:

* routes: the README's route table (the table whose header starts `| method | path |`) and
  the route table of src/http/routes.cpp (one `Route{"/path", "METHOD", ...}` per route)
  differ: a route missing from the README, or a README row naming a route that does not exist.
  A README row may give several methods ("GET, POST") and several `paths`: it stands for
  every pair.
* models: docs/model-files.md and the README's capability section (between
  `<!-- capabilities: begin -->` and `<!-- capabilities: end -->`) disagree. The names
  docs/model-files.md lists are read from the first column of its tables, chosen by header:
    - `architectures`: every backticked class name (outside parentheses);
    - template: every backticked template name;
    - layout (static models, ColBERT): the layout's name (the text before a parenthesis);
    - file (the retrieval-head files): every backticked file name;
    - kind (the "What a folder may hold" table): the kind's name, and the backticked file
      names (those with a dot) of its files column.
  Each backticked name must be a backticked span of the README section, and each plain name
  words of it (in any case). The other way, every name in the first two columns of the README section's
  tables (the text of the first column before a parenthesis, split at commas and "and"; and
  every backticked name of both columns) must occur in docs/model-files.md.
* links: a relative link or image in the README names a file that does not exist, or an
  anchor that no heading of the target file produces (GitHub's slugs: lowercase, punctuation
  dropped, spaces to hyphens, -1, -2 ... for repeats).

Usage: readme_test.py [--root DIR] [--readme FILE] [--model-files FILE] [--routes FILE]
(each path defaults to the file in the repository holding this script).
"""

import argparse
import itertools
import os
import re
import sys
import unicodedata
import urllib.parse

CAP_BEGIN = "<!-- capabilities: begin -->"
CAP_END = "<!-- capabilities: end -->"


# ---------------------------------------------------------------- markdown ----

def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def strip_fences(text):
    """The lines of text outside fenced code blocks, as (line number, line)."""
    out, fence = [], None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            continue
        if fence is None:
            out.append((n, line))
    return out


def split_row(line):
    """The cells of a table row; `|` inside code spans and `\\|` do not split."""
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    cells, cur, i, tick = [], [], 0, 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s) and s[i + 1] == "|":
            cur.append("|")
            i += 2
            continue
        if c == "`":
            j = i
            while j < len(s) and s[j] == "`":
                j += 1
            run = j - i
            if tick == 0:
                tick = run
            elif tick == run:
                tick = 0
            cur.append(s[i:j])
            i = j
            continue
        if c == "|" and tick == 0:
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    cells.append("".join(cur).strip())
    return cells


def tables(lines):
    """Markdown tables in (line number, line) pairs: a list of (line number, header, rows)."""
    found, i = [], 0
    while i < len(lines):
        n, line = lines[i]
        if (line.lstrip().startswith("|") and i + 1 < len(lines)
                and re.match(r"^\s*\|?\s*:?-{3,}", lines[i + 1][1])):
            header = split_row(line)
            rows, j = [], i + 2
            while j < len(lines) and lines[j][1].lstrip().startswith("|"):
                rows.append((lines[j][0], split_row(lines[j][1])))
                j += 1
            found.append((n, header, rows))
            i = j
        else:
            i += 1
    return found


def code_spans(text):
    return [m.group(2).strip() for m in re.finditer(r"(`+)(.+?)\1", text)]


def without_parens(text):
    """Text with parenthesised parts (nested too) removed."""
    out, depth = [], 0
    for c in text:
        if c == "(":
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def plain(text):
    """Text with code-span backticks, emphasis and link syntax removed."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return text.replace("`", "").replace("**", "")


def github_slug(heading):
    """The anchor GitHub gives a heading's text (github-slugger)."""
    text = re.sub(r"<[^>]+>", "", heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text).lower()
    kept = []
    for c in text:
        if c in " -_" or unicodedata.category(c)[0] in "LNM":
            kept.append(c)
    return "".join(kept).replace(" ", "-")


def anchors(path):
    """Every anchor a markdown file's headings (and explicit HTML anchors) produce."""
    text = read(path)
    seen, result = {}, set()
    for _, line in strip_fences(text):
        m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = github_slug(m.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            result.add(base if count == 0 else f"{base}-{count}")
        for a in re.finditer(r"<a\s+[^>]*(?:name|id)=\"([^\"]+)\"", line):
            result.add(a.group(1))
    return result


def links(text):
    """(line number, target) of every link and image outside code."""
    found = []
    for n, line in strip_fences(text):
        line = re.sub(r"(`+).+?\1", "CODE", line)
        for m in re.finditer(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", line):
            found.append((n, m.group(1)))
        for m in re.finditer(r"\b(?:href|src)=\"([^\"]+)\"", line):
            found.append((n, m.group(1)))
    return found


# ------------------------------------------------------------------ checks ----

def check_routes(readme_text, routes_path, problems):
    source = read(routes_path)
    actual = set(re.findall(r"Route\{\s*\"([^\"]*)\"\s*,\s*\"([A-Z]+)\"", source))
    actual = {(method, path) for path, method in actual}
    if not actual:
        problems.append(f"{routes_path}: no Route{{\"/path\", \"METHOD\", ...}} lines found "
                        "(has the route table's format changed? update tests/docs/readme_test.py)")
        return 0
    route_tables = [t for t in tables(strip_fences(readme_text))
                    if [c.lower() for c in t[1][:2]] == ["method", "path"]]
    if len(route_tables) != 1:
        problems.append(f"README: expected one route table (header `| method | path | ...`), "
                        f"found {len(route_tables)}")
        return len(actual)
    listed = {}
    for n, cells in route_tables[0][2]:
        methods = [m.strip().strip("`") for m in cells[0].split(",") if m.strip()]
        paths = code_spans(cells[1]) if len(cells) > 1 else []
        if not methods or not paths:
            problems.append(f"README line {n}: a route row needs methods and `paths`: {cells}")
            continue
        for method, path in itertools.product(methods, paths):
            if (method, path) in listed:
                problems.append(f"README line {n}: {method} {path} listed twice "
                                f"(also line {listed[(method, path)]})")
            listed.setdefault((method, path), n)
    for method, path in sorted(actual - set(listed), key=lambda r: (r[1], r[0])):
        problems.append(f"README: route {method} {path} is in {os.path.basename(routes_path)} "
                        "but not in the README's route table")
    for method, path in sorted(set(listed) - actual, key=lambda r: (r[1], r[0])):
        problems.append(f"README line {listed[(method, path)]}: route {method} {path} is not in "
                        f"{os.path.basename(routes_path)} (a route that does not exist)")
    return len(actual)


def model_files_names(text):
    """(name, is_code, source line) of each name docs/model-files.md's tables list."""
    names = []
    for n, header, rows in tables(strip_fences(text)):
        kind = plain(header[0]).strip().lower()
        for line, cells in rows:
            first = without_parens(cells[0])
            if kind == "architectures":
                names += [(c, True, line) for c in code_spans(first)
                          if re.fullmatch(r"[A-Z][A-Za-z0-9_]*", c)]
            elif kind in ("template", "file"):
                names += [(c, True, line) for c in code_spans(first)]
            elif kind == "layout":
                names.append((plain(first).strip(), False, line))
            elif kind == "kind":
                names.append((plain(first).strip(), False, line))
                if len(cells) > 1:
                    names += [(c, True, line) for c in code_spans(cells[1])
                              if "." in c and " " not in c]
    return names


def readme_names(section):
    """(name, is_code, line) from the first two columns of the capability section's tables."""
    names = []
    for n, header, rows in tables(section):
        for line, cells in rows:
            words = plain(without_parens(cells[0]))
            for w in re.split(r",\s*|\s+and\s+", words):
                if w.strip():
                    names.append((w.strip(), False, line))
            for cell in cells[:2]:
                names += [(c, True, line) for c in code_spans(cell)
                          if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_./-]*", c)]
    return names


def occurs(name, text, ignore_case=False):
    """Whether name occurs in text as a whole word (a plain name in any case)."""
    pattern = r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])"
    return re.search(pattern, text, re.IGNORECASE if ignore_case else 0) is not None


def check_models(readme_text, model_files_path, problems):
    mf_text = read(model_files_path)
    mf = os.path.basename(model_files_path)
    lines = strip_fences(readme_text)
    begin = [n for n, l in lines if l.strip() == CAP_BEGIN]
    end = [n for n, l in lines if l.strip() == CAP_END]
    if len(begin) != 1 or len(end) != 1 or begin[0] > end[0]:
        problems.append(f"README: the capability section must be marked once by {CAP_BEGIN} ... "
                        f"{CAP_END}")
        return 0
    section = [(n, l) for n, l in lines if begin[0] < n < end[0]]
    section_code = set()
    for _, l in section:
        section_code.update(code_spans(l))
    section_words = plain("\n".join(l for _, l in section))

    wanted = model_files_names(mf_text)
    if not any(code for _, code, _ in wanted):
        problems.append(f"{mf}: no names found in its tables (has the architectures table's "
                        "header changed? update tests/docs/readme_test.py)")
    for name, code, line in wanted:
        found = name in section_code if code else occurs(name, section_words, ignore_case=True)
        if not found:
            shown = f"`{name}`" if code else f'"{name}"'
            problems.append(f"README: {shown} ({mf} line {line}) is missing from the capability "
                            "section" + (" (as a backticked name)" if code else ""))

    mf_plain = plain(mf_text)
    listed = readme_names(section)
    for name, code, line in listed:
        if not occurs(name, mf_text, not code) and not occurs(name, mf_plain, not code):
            shown = f"`{name}`" if code else f'"{name}"'
            problems.append(f"README line {line}: {shown} is not named anywhere in {mf} "
                            "(a family or file the docs do not list)")
    return len(wanted)


def check_links(readme_path, readme_text, problems):
    base = os.path.dirname(os.path.abspath(readme_path))
    cache = {}
    count = 0
    for n, target in links(readme_text):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
            continue  # http:, https:, mailto: ...
        count += 1
        path, _, anchor = target.partition("#")
        path = urllib.parse.unquote(path)
        full = os.path.normpath(os.path.join(base, path)) if path else os.path.abspath(readme_path)
        if not os.path.exists(full):
            problems.append(f"README line {n}: link to {target}: {path} does not exist")
            continue
        if anchor:
            if not full.endswith(".md") or os.path.isdir(full):
                problems.append(f"README line {n}: link to {target}: an anchor into a file "
                                "that is not markdown")
                continue
            if full not in cache:
                cache[full] = anchors(full)
            if urllib.parse.unquote(anchor) not in cache[full]:
                problems.append(f"README line {n}: link to {target}: no heading of "
                                f"{path or 'README.md'} makes the anchor #{anchor}")
    return count


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=root)
    ap.add_argument("--readme")
    ap.add_argument("--model-files")
    ap.add_argument("--routes")
    args = ap.parse_args()
    readme = args.readme or os.path.join(args.root, "README.md")
    model_files = args.model_files or os.path.join(args.root, "docs", "model-files.md")
    routes = args.routes or os.path.join(args.root, "src", "http", "routes.cpp")

    readme_text = read(readme)
    problems = []
    n_routes = check_routes(readme_text, routes, problems)
    n_names = check_models(readme_text, model_files, problems)
    n_links = check_links(readme, readme_text, problems)
    if problems:
        print(f"readme_test: {len(problems)} problem(s) in {readme}:", file=sys.stderr)
        for p in problems:
            print("  FAIL " + p, file=sys.stderr)
        return 1
    print(f"readme_test: ok — {n_routes} routes, {n_names} names from "
          f"{os.path.basename(model_files)}, {n_links} relative links checked in {readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
