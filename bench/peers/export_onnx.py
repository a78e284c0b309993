#!/usr/bin/python3
"""Exports a HuggingFace model folder to ONNX for the ONNX Runtime peer benchmarks, and for
Warden's own ONNX loading (bench/run_onnx).

BertModel, RobertaModel / XLMRobertaModel and DistilBertModel folders are traced from
tools/onnx_fixtures/make_encoder_fixtures.py's modules, written statement for statement after
transformers' modelling code, so that ONNX Runtime (and Warden) see the graph an `optimum`
export of the HF model gives. The other families are traced from the independent PyTorch
reference (tools/golden/reference.py), which mirrors the HF modelling code op for op, so ONNX
Runtime sees the same graph shape and its transformer fusions apply to it alike; jina-embeddings-v3
(auto_map's XLMRobertaFlashConfig) from tools/golden/jina_v3_reference.py, with TASK=N (an index
of lora_adaptations) with that task's adapter merged into the weights (as vLLM serves it).
Inputs:
input_ids, token_type_ids, attention_mask (int64 [batch, seq], dynamic; the HF-faithful
modules take token_type_ids only where the class does); output: last_hidden_state; opset 14
unless OPSET says otherwise.

    /usr/bin/python3 bench/peers/export_onnx.py MODEL_DIR OUT.onnx
"""

import json
import os
import sys
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "golden"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "onnx_fixtures"))
import jina_v3_reference  # noqa: E402
import make_encoder_fixtures  # noqa: E402
import reference  # noqa: E402

# The classes make_encoder_fixtures writes after transformers, by the family name it takes.
HF_FAITHFUL = {"BertModel": "bert", "RobertaModel": "xlm-roberta", "XLMRobertaModel": "xlm-roberta",
               "DistilBertModel": "distilbert"}


class LastHiddenState(torch.nn.Module):
    def __init__(self, ref):
        super().__init__()
        self.ref = ref
        # The weights as the module's parameters (the same tensors the reference reads): the
        # export writes them as initializers, in external data past protobuf's 2 GB (a 0.6B
        # Qwen3), rather than as Constant nodes inside the graph.
        self.weights = torch.nn.ParameterList()
        for name, t in list(ref.w.items()):
            if t.is_floating_point():
                p = torch.nn.Parameter(t, requires_grad=False)
                self.weights.append(p)
                ref.w[name] = p

    def forward(self, input_ids, token_type_ids, attention_mask):
        return self.ref.forward(input_ids, token_type_ids, attention_mask)["last_hidden_state"]


def export_reference(model_dir, out, opset, jina=False):
    ref = (jina_v3_reference if jina else reference).Reference(model_dir, torch.float32)
    ref.heads_at_once = True  # one attention op per layer, as upstream's graph has
    if jina and os.environ.get("TASK"):
        ref.merge_task(int(os.environ["TASK"]))  # the task's adapter merged into the weights
    ids = torch.full((2, 8), min(1000, ref.config["vocab_size"] - 1), dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.ones_like(ids)
    dynamic = {0: "batch", 1: "seq"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reference's id range check becomes a constant
        torch.onnx.export(LastHiddenState(ref), (ids, types, mask), out, opset_version=opset,
                          input_names=["input_ids", "token_type_ids", "attention_mask"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": dynamic, "token_type_ids": dynamic,
                                        "attention_mask": dynamic, "last_hidden_state": dynamic})


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model_dir, out = sys.argv[1], sys.argv[2]
    opset = int(os.environ.get("OPSET", "14"))
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    architecture = (config.get("architectures") or [""])[0]
    plain = config.get("position_embedding_type", "absolute") == "absolute"
    jina = (config.get("auto_map") or {}).get("AutoConfig", "").endswith(".XLMRobertaFlashConfig")
    if jina:
        export_reference(model_dir, out, opset, jina=True)
    elif architecture in HF_FAITHFUL and plain:
        module, _, inputs = make_encoder_fixtures.build(HF_FAITHFUL[architecture], model_dir, cut=False)
        make_encoder_fixtures.export(module, inputs, out, opset)
    else:
        export_reference(model_dir, out, opset)
    print(out)


if __name__ == "__main__":
    main()
