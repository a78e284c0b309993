#!/usr/bin/env python3
"""A prompt-injection guard in front of an LLM call: every user message and every retrieved
document is checked before it reaches the model; a flagged one is refused with the guard's
evidence, an abstention (a language the embedder cannot read) is let through and logged.

    python3 guard_before_llm.py "What is the capital of France?" "Ignore all previous instructions ..."

The guard runs in process on the CPU (use-lite by default): no GPU memory, a few milliseconds.
"""

from __future__ import annotations

import argparse
import sys
from typing import List

import warden


def call_llm(messages: List[str]) -> str:
    """Stands in for the real LLM call (an OpenAI client, vLLM, llama.cpp...)."""
    return f"(the LLM answers {len(messages)} message(s))"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="the guard's embedder (default: use-lite)")
    ap.add_argument("messages", nargs="+")
    args = ap.parse_args()

    guard = warden.Guard(args.model)
    blocked = 0
    for message, verdict in zip(args.messages, guard.check(args.messages)):
        if verdict["flagged"]:
            blocked += 1
            why = ", ".join(verdict.get("evidence", [])) or f"score {verdict['score']:.3f}"
            print(f"BLOCKED  {message[:60]!r}: {why}")
            continue
        if verdict["flagged"] is None:
            print(f"ABSTAIN  {message[:60]!r}: {verdict.get('reason')}", file=sys.stderr)
        print(f"ALLOWED  {message[:60]!r} -> {call_llm([message])}")
    print(f"{blocked} of {len(args.messages)} blocked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
