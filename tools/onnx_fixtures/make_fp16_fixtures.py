#!/usr/bin/python3
"""The fp16 files of the encoder fixtures: tests/data/onnx/<family>/model_fp16.onnx from that
folder's model_opset14.onnx, as transformers.js's `--modes fp16` writes a repo's
onnx/model_fp16.onnx (scripts/quantize.py: quantize_fp16 -> scripts/float16.py
convert_float_to_float16 with keep_io_types=True and its DEFAULT_OP_BLOCK_LIST). onnxconverter's
float16 module is not installable here, so its steps are redone with python3-onnx:

  - every FLOAT initializer, and every FLOAT tensor in an attribute of a node not on the block
    list (Constant's value, ConstantOfShape's value), becomes FLOAT16; values are first clamped
    as convert_np_to_float16 clamps them (|x| < 1e-7 to +-1e-7, |x| > 1e4 to +-1e4, 0 / inf kept):
    so a LayerNorm epsilon of 1e-12 becomes 1e-7 and finfo(float32).min becomes -1e4;
  - a node on the block list (Cast, CumSum, Min, Max, TopK, ...) keeps float32: a Cast to
    FLOAT is put before each of its float16 inputs and a Cast to FLOAT16 after each of its
    float outputs (the attention mask's Cast(int64 -> FLOAT) thus gets a Cast to FLOAT16 after it);
  - initializers only the blocked nodes read stay FLOAT;
  - keep_io_types: each FLOAT graph output is produced as `<name>_fp16` and cast back to FLOAT.

With --fuzz-seeds DIR it converts the fuzzer's seeds there instead (<family>_opset14.onnx ->
<family>_fp16.onnx, written by make_encoder_fixtures.py --fuzz-seeds).

Run: /usr/bin/python3 tools/onnx_fixtures/make_fp16_fixtures.py [DATA_DIR]
     /usr/bin/python3 tools/onnx_fixtures/make_fp16_fixtures.py --fuzz-seeds fuzz/corpus/onnx_graph
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCKED = {"ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer",
           "FeatureVectorizer", "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor",
           "Normalizer", "OneHotEncoder", "RandomUniformLike", "SVMClassifier", "SVMRegressor", "Scaler",
           "TreeEnsembleClassifier", "TreeEnsembleRegressor", "ZipMap", "NonMaxSuppression", "TopK",
           "RoiAlign", "Resize", "CumSum", "Min", "Max", "Upsample", "RandomNormalLike", "Cast"}


def to_fp16(array, min_positive=1e-7, max_finite=1e4):
    """convert_np_to_float16's clamping, then the rounding to float16."""
    a = np.asarray(array, dtype=np.float32)
    a = np.where((0 < a) & (a < min_positive), min_positive, a)
    a = np.where((-min_positive < a) & (a < 0), -min_positive, a)
    a = np.where((max_finite < a) & (a < np.inf), max_finite, a)
    a = np.where((-np.inf < a) & (a < -max_finite), -max_finite, a)
    return a.astype(np.float16)


def tensor_to_fp16(t):
    if t.data_type != TensorProto.FLOAT:
        return t
    out = numpy_helper.from_array(to_fp16(numpy_helper.to_array(t)), t.name)
    t.CopyFrom(out)
    return t


def convert(model):
    model = onnx.shape_inference.infer_shapes(model)
    g = model.graph
    types = {v.name: v.type.tensor_type.elem_type for v in list(g.value_info) + list(g.input) + list(g.output)}
    for t in g.initializer:
        types[t.name] = t.data_type
    blocked_inputs = {name for n in g.node if n.op_type in BLOCKED for name in n.input}
    for t in g.initializer:
        if t.name not in blocked_inputs:
            tensor_to_fp16(t)
    nodes = []
    for n in g.node:
        if n.op_type not in BLOCKED:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR:
                    tensor_to_fp16(a.t)
            nodes.append(n)
            continue
        for i, name in enumerate(n.input):  # float16 now (unless a kept float initializer)
            if types.get(name) == TensorProto.FLOAT and name not in {t.name for t in g.initializer}:
                cast = f"{n.name}_input_cast_{i}"
                nodes.append(helper.make_node("Cast", [name], [cast], name=f"{n.name}_input_cast{i}",
                                              to=TensorProto.FLOAT))
                n.input[i] = cast
        nodes.append(n)
        for i, name in enumerate(n.output):
            if types.get(name) == TensorProto.FLOAT:
                cast = f"{n.name}_output_cast_{i}"
                n.output[i] = cast
                nodes.append(helper.make_node("Cast", [cast], [name], name=f"{n.name}_output_cast{i}",
                                              to=TensorProto.FLOAT16))
    for out in g.output:
        if out.type.tensor_type.elem_type != TensorProto.FLOAT:
            continue
        for n in nodes:
            n.output[:] = [f"{out.name}_fp16" if o == out.name else o for o in n.output]
            n.input[:] = [f"{out.name}_fp16" if i == out.name else i for i in n.input]
        nodes.append(helper.make_node("Cast", [f"{out.name}_fp16"], [out.name],
                                      name=f"{out.name}_fp16_input_cast0", to=TensorProto.FLOAT))
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]  # stale float32 types; ORT infers them again
    onnx.checker.check_model(model)
    return model


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--fuzz-seeds":
        pairs = [(os.path.join(sys.argv[2], f"{f}_opset14.onnx"), os.path.join(sys.argv[2], f"{f}_fp16.onnx"))
                 for f in ("bert", "xlm-roberta", "distilbert")]
    else:
        data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "tests", "data", "onnx")
        pairs = [(os.path.join(data, f, "model_opset14.onnx"), os.path.join(data, f, "model_fp16.onnx"))
                 for f in ("bert", "xlm-roberta", "distilbert", "bert-st")]
    for src, dst in pairs:
        onnx.save(convert(onnx.load(src)), dst)
        print(f"wrote {dst} ({os.path.getsize(dst)} bytes)")


if __name__ == "__main__":
    main()
