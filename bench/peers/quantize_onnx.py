#!/usr/bin/python3
"""ONNX Runtime's dynamic int8 quantisation, re-implemented with python3-onnx (no onnxruntime
Python package here), for the int8 peer of the encoder benchmark.

    /usr/bin/python3 bench/peers/quantize_onnx.py IN.onnx OUT.onnx [--per-channel] [--weight-type uint8]

What it reproduces: the graph that
    onnxruntime.quantization.quantize_dynamic(IN, OUT, weight_type=QuantType.QInt8
                                              [, per_channel=True])
(or weight_type=QuantType.QUInt8 with --weight-type uint8: transformers.js's model_uint8.onnx,
and its model_quantized.onnx for models with a Conv)
writes (ORT 1.16+; read from onnxruntime/python/tools/quantization: quantize.py,
onnx_quantizer.py, base_quantizer.py, quant_utils.py, operators/matmul.py, operators/gather.py):

* Which nodes. The op types of IntegerOpsRegistry that occur in a BERT export: MatMul and
  Gather. A MatMul is quantised only when its B is a float initializer (quantize_dynamic sets
  MatMulConstBOnly=True), so the two attention MatMuls per layer (Q.K^T and P.V, both inputs
  activations) stay fp32. A Gather is quantised only when its data is a float initializer (the
  embedding tables); the Gathers on Shape outputs stay as they are. No Gemm occurs in this
  export (torch exports nn.Linear-style layers as MatMul + Add); a Gemm would be left alone, as
  ORT's IntegerOps registry has no Gemm entry either.
* MatMul weights: int8, symmetric (WeightSymmetric defaults to True for QInt8), range
  [-127, 127], zero point 0, scale = max(|min(w,0)|, |max(w,0)|) / 127 (an all-zero weight gets
  scale 1); values round(w / scale) half to even, clipped. reduce_range is False (the
  quantize_dynamic default), so the full 7-bit-plus-sign range is used. Per tensor by default;
  with --per-channel one scale per output column (axis -1 of the [K, N] weight, ORT's default
  axis for MatMul), scale and zero point 1-D of length N. With --weight-type uint8: uint8,
  asymmetric (WeightSymmetric defaults to False for QUInt8): quantised as the embedding tables
  below, per tensor or per column.
* Activations: one DynamicQuantizeLinear (uint8, asymmetric, per tensor, computed at run time)
  per distinct float input, shared by every MatMul that reads it (ORT names it
  <input>_QuantizeLinear and looks it up before creating another), then
  MatMulInteger(x_q, w_q, x_zp, w_zp) -> Cast(to float) -> Mul(Mul(x_scale, w_scale)), the last
  Mul writing the MatMul's original output name. The bias Add that follows stays fp32. ORT's
  level-2 optimiser fuses MatMulInteger+Cast+Mul into MatMulIntegerToFloat and, where the
  DynamicQuantizeLinear feeds a single consumer, DynamicQuantizeLinear+MatMulIntegerToFloat
  into DynamicQuantizeMatMul (MLAS u8s8 GEMM, AVX-512 VNNI where present).
* Gather of an embedding table: the table quantised to uint8 per tensor, asymmetric
  (ActivationSymmetric defaults to False and the table is quantised with the activation type),
  scale = (max(t,0) - min(t,0)) / 255, zero point round(-min(t,0) / scale); the Gather reads
  the uint8 table and a DequantizeLinear (named <output>_DequantizeLinear) restores the float
  output for its fp32 consumer.
* Float initializers no longer used are dropped, as ORT's quantizer does.

Where it may differ:
* This repository's export (bench/peers/export_onnx.py traces tools/golden/reference.py, whose
  weights are plain tensors) stores every weight in a Constant node, not an initializer.
  ORT's quantizer only looks at initializers, so on this file it would quantise nothing; an
  optimum/torch export of the HF model (parameters as initializers) is what it is meant for.
  So Constant nodes holding a tensor are first lifted to initializers of the same name, which
  makes this file look like that export; ORT itself treats Constant nodes as initializers when
  it loads a model, so the fp32 graph ORT runs is unchanged by the lift.
* Node and tensor names follow ORT's scheme but are not guaranteed identical; ORT also runs
  shape inference and adds a "pre-process" warning, and for an opset below 11 it would use
  ReduceMin/ReduceMax instead of DynamicQuantizeLinear (the export is opset 14).
* The embedding tables follow current ORT (GatherQuant -> quantize_activation: the activation
  type uint8, asymmetric). Older releases went through quantize_inputs with the weight type
  (int8, symmetric) or, between the two, quantised uint8 symmetrically (zero point 128); the
  difference is within one quantisation step on the embeddings.
* Ops outside this BERT export (Conv, Attention, LSTM, EmbedLayerNormalization, Transpose of a
  quantised tensor, subgraphs) are not handled; the script refuses none of them, it just leaves
  them fp32.
"""

import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def lift_constants(graph):
    """Constant nodes with a tensor `value` become initializers (the form an HF export has)."""
    kept = []
    for node in graph.node:
        if node.op_type == "Constant" and len(node.attribute) == 1 and node.attribute[0].name == "value":
            t = onnx.TensorProto()
            t.CopyFrom(node.attribute[0].t)
            t.name = node.output[0]
            graph.initializer.append(t)
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)


def quantize_int8_symmetric(w):
    """ORT's compute_scale_zp + quantize_nparray for QInt8, symmetric, reduce_range False."""
    w = w.astype(np.float32)
    absmax = max(abs(min(float(w.min()), 0.0)), abs(max(float(w.max()), 0.0)))
    scale = np.float32(np.float64(2 * absmax) / 254.0)
    if scale < np.finfo(np.float32).tiny:
        scale = np.float32(1.0)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale, np.int8(0)


def quantize_uint8_asymmetric(w):
    """ORT's compute_scale_zp + quantize_nparray for QUInt8, asymmetric (the embedding tables)."""
    w = w.astype(np.float32)
    rmin, rmax = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    scale = np.float64(rmax - rmin) / 255.0
    if scale < np.finfo(np.float32).tiny:
        scale, zp = 1.0, 0
    else:
        zp = int(np.rint(0 - rmin / scale))
    scale = np.float32(scale)
    q = np.clip(np.rint(w / scale) + zp, 0, 255).astype(np.uint8)
    return q, scale, np.uint8(zp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--per-channel", action="store_true",
                    help="one weight scale per output column, as quantize_dynamic(per_channel=True)")
    ap.add_argument("--weight-type", choices=("int8", "uint8"), default="int8",
                    help="QInt8 (symmetric) or QUInt8 (asymmetric) MatMul weights")
    args = ap.parse_args()

    model = onnx.load(args.inp)
    graph = model.graph
    lift_constants(graph)
    inits = {t.name: t for t in graph.initializer}
    new_inits = []
    quantized = {}     # original initializer name -> (q name, scale name, zp name)
    dql = {}           # activation name -> (q, scale, zp) from its DynamicQuantizeLinear
    nodes = []
    counts = {"MatMul": 0, "MatMul_skipped": 0, "Gather": 0}

    def is_float_init(name):
        return name in inits and inits[name].data_type == TensorProto.FLOAT

    def add_init(name, array):
        new_inits.append(numpy_helper.from_array(np.asarray(array), name))

    def quantize_weight(name):
        if name in quantized:
            return quantized[name]
        w = numpy_helper.to_array(inits[name])
        qn, sn, zn = name + "_quantized", name + "_scale", name + "_zero_point"
        quantize = quantize_uint8_asymmetric if args.weight_type == "uint8" else quantize_int8_symmetric
        if args.per_channel and w.ndim == 2:
            cols = [quantize(w[:, j]) for j in range(w.shape[1])]
            add_init(qn, np.stack([c[0] for c in cols], axis=1))
            add_init(sn, np.array([c[1] for c in cols], dtype=np.float32))
            add_init(zn, np.array([c[2] for c in cols]))
        else:
            q, s, z = quantize(w)
            add_init(qn, q)
            add_init(sn, np.array(s, dtype=np.float32))
            add_init(zn, np.array(z))
        quantized[name] = (qn, sn, zn)
        return quantized[name]

    for node in graph.node:
        if node.op_type == "MatMul":
            if not is_float_init(node.input[1]):
                counts["MatMul_skipped"] += 1
                nodes.append(node)
                continue
            x = node.input[0]
            if x not in dql:
                dql[x] = (x + "_quantized", x + "_scale", x + "_zero_point")
                nodes.append(helper.make_node("DynamicQuantizeLinear", [x], list(dql[x]), x + "_QuantizeLinear"))
            xq, xs, xz = dql[x]
            wq, ws, wz = quantize_weight(node.input[1])
            out = node.output[0]
            base = node.name + "_quant" if node.name else out
            mmi = out + "_output_quantized"
            nodes.append(helper.make_node("MatMulInteger", [xq, wq, xz, wz], [mmi], base))
            nodes.append(helper.make_node("Cast", [mmi], [mmi + "_cast_output"], mmi + "_cast",
                                          to=TensorProto.FLOAT))
            nodes.append(helper.make_node("Mul", [xs, ws], [base + "_scales_mul:0"], base + "_scales_mul"))
            nodes.append(helper.make_node("Mul", [mmi + "_cast_output", base + "_scales_mul:0"], [out],
                                          base + "_output_scale_mul"))
            counts["MatMul"] += 1
        elif node.op_type == "Gather" and is_float_init(node.input[0]):
            table = node.input[0]
            if table not in quantized:
                q, s, z = quantize_uint8_asymmetric(numpy_helper.to_array(inits[table]))
                quantized[table] = (table + "_quantized", table + "_scale", table + "_zero_point")
                add_init(quantized[table][0], q)
                add_init(quantized[table][1], np.array(s, dtype=np.float32))
                add_init(quantized[table][2], np.array(z, dtype=np.uint8))
            tq, ts, tz = quantized[table]
            out = node.output[0]
            g = onnx.NodeProto()
            g.CopyFrom(node)
            g.input[0] = tq
            g.output[0] = out + "_quantized"
            nodes.append(g)
            nodes.append(helper.make_node("DequantizeLinear", [out + "_quantized", ts, tz], [out],
                                          out + "_DequantizeLinear"))
            counts["Gather"] += 1
        else:
            nodes.append(node)

    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(new_inits)
    used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
    keep = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    # MatMulInteger / DynamicQuantizeLinear are opset 10/11 ops; the export is opset 14.
    onnx.checker.check_model(model)
    onnx.save(model, args.out)
    print(f"{args.out}: {counts['MatMul']} MatMul -> MatMulInteger "
          f"({'per channel' if args.per_channel else 'per tensor'}), "
          f"{counts['MatMul_skipped']} MatMul between activations left fp32, "
          f"{counts['Gather']} embedding Gather -> uint8, "
          f"{len(dql)} DynamicQuantizeLinear", file=sys.stderr)


if __name__ == "__main__":
    main()
