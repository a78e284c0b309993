#!/usr/bin/python3
"""Op-type counts of ONNX graphs (e.g. the optimised graphs ort_int8_check.mjs saves), one line
per file, most frequent first. Needs python3-onnx.

    /usr/bin/python3 bench/peers/onnx_ops.py MODEL.onnx...
"""

import collections
import sys

import onnx


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        graph = onnx.load(path, load_external_data=False).graph
        ops = collections.Counter(n.op_type for n in graph.node)
        print(f"{path}: " + ", ".join(f"{op} {c}" for op, c in ops.most_common()))


if __name__ == "__main__":
    main()
