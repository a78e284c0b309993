#!/usr/bin/python3
"""The ONNX reader's reference files (tests/data/onnx/): small ModelProtos written by the
official onnx Python package (Debian's python3-onnx 1.12), and what that package reads back
from them, so that Warden's own wire-format reader (src/model/onnx/) is checked against the
reference serializer rather than against itself.

  reader.onnx + reader.onnx.data   every way a tensor can hold its values (raw_data,
                                   float_data, int32_data for FLOAT16 and INT8, int64_data,
                                   double_data, external data with offset and length), every
                                   attribute kind Warden reads, symbolic and fixed shapes, two
                                   opsets (the default domain and com.microsoft)
  reader.json                      the reference's reading: nodes, attributes, tensors' values

Run: /usr/bin/python3 tools/onnx_fixtures/make_reader_fixtures.py [OUT_DIR]
"""

import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "onnx")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(7)
    w_raw = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w_raw")
    w_float_data = helper.make_tensor("w_float_data", TensorProto.FLOAT, [2, 3], rng.standard_normal(6).tolist(),
                                      raw=False)
    half = rng.standard_normal(5).astype(np.float16)
    w_half = helper.make_tensor("w_half", TensorProto.FLOAT16, [5], half.view(np.uint16).tolist(), raw=False)
    w_int8 = helper.make_tensor("w_int8", TensorProto.INT8, [4], [-128, -1, 0, 127], raw=False)
    w_int64 = helper.make_tensor("w_int64", TensorProto.INT64, [3], [-5, 0, 1 << 40], raw=False)
    w_double = helper.make_tensor("w_double", TensorProto.DOUBLE, [2], [0.1, -2.5], raw=False)
    w_external = numpy_helper.from_array(rng.standard_normal((3, 2)).astype(np.float32), "w_external")
    w_external2 = numpy_helper.from_array(np.arange(4, dtype=np.int64), "w_external2")
    scalar = numpy_helper.from_array(np.array(3.5, dtype=np.float32), "scalar")

    nodes = [
        helper.make_node("MatMul", ["x", "w_raw"], ["y"], name="matmul"),
        helper.make_node("Constant", [], ["c"], name="constant",
                         value=helper.make_tensor("c_value", TensorProto.FLOAT, [2], [1.5, -0.25], raw=False)),
        helper.make_node("Transpose", ["y"], ["yt"], name="transpose", perm=[1, 0]),
        helper.make_node("LayerNormalization", ["y", "w_float_data", ""], ["ln"], name="layernorm", axis=-1,
                         epsilon=1e-12),
        helper.make_node("Cast", ["ln"], ["cast"], name="cast", to=TensorProto.FLOAT16),
        helper.make_node("Attention", ["x", "w_raw"], ["att"], name="contrib", domain="com.microsoft", num_heads=4,
                         scales=[0.5, 0.25], names=["a", "bc"], mode="self"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch_size", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch_size", 3])
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])
    graph = helper.make_graph(nodes, "reader", [x, ids], [y],
                              initializer=[w_raw, w_float_data, w_half, w_int8, w_int64, w_double, w_external,
                                           w_external2, scalar])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="make_reader_fixtures")
    model.ir_version = 8
    # w_external and w_external2 into reader.onnx.data (the second after 8 bytes of padding, as
    # onnx's writer aligns); the other tensors keep their bytes inline.
    data = bytearray()
    for t in model.graph.initializer:
        if t.name not in ("w_external", "w_external2"):
            continue
        data += b"\0" * ((-len(data)) % 8 + (8 if data else 0))
        offset = len(data)
        data += t.raw_data
        onnx.external_data_helper.set_external_data(t, "reader.onnx.data", offset, len(t.raw_data))
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
    with open(os.path.join(OUT, "reader.onnx.data"), "wb") as f:
        f.write(bytes(data))
    onnx.save_model(model, os.path.join(OUT, "reader.onnx"))

    # What the reference reads back.
    back = onnx.load(os.path.join(OUT, "reader.onnx"))  # loads the external data too
    onnx.checker.check_model(back)
    ref = {
        "ir_version": back.ir_version,
        "opsets": {o.domain: o.version for o in back.opset_import},
        "producer_name": back.producer_name,
        "inputs": [{"name": v.name, "elem_type": v.type.tensor_type.elem_type,
                    "dims": [d.dim_param if d.HasField("dim_param") else d.dim_value
                             for d in v.type.tensor_type.shape.dim]} for v in back.graph.input],
        "outputs": [v.name for v in back.graph.output],
        "nodes": [],
        "tensors": {},
    }
    for n in back.graph.node:
        attrs = {}
        for a in n.attribute:
            v = helper.get_attribute_value(a)
            if isinstance(v, TensorProto):
                v = {"tensor": numpy_helper.to_array(v).astype(np.float64).tolist()}
            elif isinstance(v, bytes):
                v = v.decode()
            elif isinstance(v, list):
                v = [x.decode() if isinstance(x, bytes) else x for x in v]
            attrs[a.name] = {"type": a.type, "value": v}
        ref["nodes"].append({"name": n.name, "op_type": n.op_type, "domain": n.domain, "inputs": list(n.input),
                             "outputs": list(n.output), "attributes": attrs})
    for t in back.graph.initializer:
        a = numpy_helper.to_array(t)
        ref["tensors"][t.name] = {"data_type": t.data_type, "dims": list(t.dims),
                                  "values": a.astype(np.float64).flatten().tolist()}
    with open(os.path.join(OUT, "reader.json"), "w", encoding="utf-8") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")
    print(f"wrote reader.onnx ({os.path.getsize(os.path.join(OUT, 'reader.onnx'))} bytes), reader.onnx.data, reader.json")


if __name__ == "__main__":
    main()
