#!/usr/bin/python3
"""ONNX exports of the BERT, XLM-RoBERTa and DistilBERT fixtures (tests/data/onnx/<family>/),
written by Debian's torch.onnx.export from modules that follow transformers' eager modelling
code (v4.46) statement for statement, so that the graphs have the shapes an `optimum` export of
the HF classes has:

  BertModel            modeling_bert.py: BertEmbeddings (position_ids buffer sliced to the
                       length; word + token type, += position; LayerNorm), get_extended_attention_mask
                       ((1 - mask) · finfo.min), BertSelfAttention (transpose_for_scores, QKᵀ / √d
                       + mask, softmax, PV, permute + view back), BertSelfOutput / BertOutput
                       (dense, LayerNorm(h + input)), BertIntermediate (dense, gelu)
  XLMRobertaModel      modeling_xlm_roberta.py: create_position_ids_from_input_ids (cumsum of
                       input_ids != padding_idx, times the mask, + padding_idx), token types from
                       the zero buffer (optimum exports no token_type_ids input for it); the
                       layers as BERT's
  DistilBertModel      modeling_distilbert.py: Embeddings (position_ids buffer sliced; word +
                       position; LayerNorm eps 1e-12), MultiHeadSelfAttention (q / √d before QKᵀ,
                       masked_fill of mask == 0 with finfo.min), TransformerBlock (sa_layer_norm,
                       FFN lin1 / gelu / lin2, output_layer_norm)

Each folder gets config.json and model_opset14.onnx / model_opset17.onnx (weights as
initializers, inputs as optimum names them, output last_hidden_state), and model_int8.onnx:
model_opset14.onnx after ONNX Runtime's dynamic int8 quantisation (quantize_dynamic's graph,
redone with python3-onnx by bench/peers/quantize_onnx.py: int8 symmetric weights per tensor,
DynamicQuantizeLinear + MatMulInteger, uint8 embedding tables), and model_uint8.onnx the same
with asymmetric uint8 weights (QUInt8, transformers.js's model_uint8.onnx). The weights are
warden-fixture's tiny ones (seed 1) with the vocabulary cut to 512 rows and the positions to 64,
so that the committed files stay small; config.json says so.

With --fuzz-seeds DIR it writes instead the seeds of the ONNX graph fuzzer
(fuzz/corpus/onnx_graph): the same three classes at a few KB each (hidden 8, 2 heads, 1 layer,
16 tokens, 8 positions, seeded random weights), at opsets 14 and 17 and int8.

Run: /usr/bin/python3 tools/onnx_fixtures/make_encoder_fixtures.py WARDEN_FIXTURE [OUT_DIR]
     /usr/bin/python3 tools/onnx_fixtures/make_encoder_fixtures.py --fuzz-seeds fuzz/corpus/onnx_graph
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))
import reference  # noqa: E402

VOCAB = 512
POSITIONS = 64
FAMILIES = {"bert": "bert", "xlm-roberta": "xlm-roberta", "distilbert": "distilbert"}


def gelu(x):  # transformers.activations.GELUActivation: nn.functional.gelu (erf)
    return torch.nn.functional.gelu(x)


class BertEmbeddings(torch.nn.Module):
    def __init__(self, c, roberta):
        super().__init__()
        self.word_embeddings = torch.nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.position_embeddings = torch.nn.Embedding(c["max_position_embeddings"], c["hidden_size"])
        self.token_type_embeddings = torch.nn.Embedding(c["type_vocab_size"], c["hidden_size"])
        self.LayerNorm = torch.nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])
        self.register_buffer("position_ids", torch.arange(c["max_position_embeddings"]).expand((1, -1)), persistent=False)
        self.register_buffer("token_type_ids", torch.zeros((1, c["max_position_embeddings"]), dtype=torch.long),
                             persistent=False)
        self.roberta = roberta
        self.padding_idx = c["pad_token_id"]

    def forward(self, input_ids, token_type_ids):
        input_shape = input_ids.size()
        seq_length = input_shape[1]
        if self.roberta:
            # create_position_ids_from_input_ids(input_ids, padding_idx, past_key_values_length=0)
            mask = input_ids.ne(self.padding_idx).int()
            incremental_indices = (torch.cumsum(mask, dim=1).type_as(mask) + 0) * mask
            position_ids = incremental_indices.long() + self.padding_idx
        else:
            position_ids = self.position_ids[:, 0:seq_length + 0]
        if token_type_ids is None:
            buffered_token_type_ids = self.token_type_ids[:, :seq_length]
            token_type_ids = buffered_token_type_ids.expand(input_shape[0], seq_length)
        inputs_embeds = self.word_embeddings(input_ids)
        token_type_embeddings = self.token_type_embeddings(token_type_ids)
        embeddings = inputs_embeds + token_type_embeddings
        position_embeddings = self.position_embeddings(position_ids)
        embeddings += position_embeddings
        return self.LayerNorm(embeddings)


class BertSelfAttention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_attention_heads = c["num_attention_heads"]
        self.attention_head_size = c["hidden_size"] // c["num_attention_heads"]
        self.all_head_size = c["hidden_size"]
        self.query = torch.nn.Linear(c["hidden_size"], c["hidden_size"])
        self.key = torch.nn.Linear(c["hidden_size"], c["hidden_size"])
        self.value = torch.nn.Linear(c["hidden_size"], c["hidden_size"])

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_scores = attention_scores + attention_mask
        attention_probs = torch.nn.functional.softmax(attention_scores, dim=-1)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        return context_layer.view(new_context_layer_shape)


class DenseNorm(torch.nn.Module):  # BertSelfOutput and BertOutput
    def __init__(self, c, n_in):
        super().__init__()
        self.dense = torch.nn.Linear(n_in, c["hidden_size"])
        self.LayerNorm = torch.nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dense(hidden_states) + input_tensor)


class BertAttention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = DenseNorm(c, c["hidden_size"])

    def forward(self, hidden_states, attention_mask):
        return self.output(self.self(hidden_states, attention_mask), hidden_states)


class BertIntermediate(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = torch.nn.Linear(c["hidden_size"], c["intermediate_size"])

    def forward(self, hidden_states):
        return gelu(self.dense(hidden_states))


class BertLayer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = DenseNorm(c, c["intermediate_size"])

    def forward(self, hidden_states, attention_mask):
        attention_output = self.attention(hidden_states, attention_mask)
        return self.output(self.intermediate(attention_output), attention_output)


class BertEncoder(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = torch.nn.ModuleList([BertLayer(c) for _ in range(c["num_hidden_layers"])])

    def forward(self, hidden_states, attention_mask):
        for layer in self.layer:
            hidden_states = layer(hidden_states, attention_mask)
        return hidden_states


class BertModel(torch.nn.Module):
    def __init__(self, c, roberta=False):
        super().__init__()
        self.embeddings = BertEmbeddings(c, roberta)
        self.encoder = BertEncoder(c)

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        # get_extended_attention_mask, dtype float32
        extended_attention_mask = attention_mask[:, None, None, :]
        extended_attention_mask = extended_attention_mask.to(dtype=torch.float32)
        extended_attention_mask = (1.0 - extended_attention_mask) * torch.finfo(torch.float32).min
        return self.encoder(self.embeddings(input_ids, token_type_ids), extended_attention_mask)


class DistilEmbeddings(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = torch.nn.Embedding(c["vocab_size"], c["dim"])
        self.position_embeddings = torch.nn.Embedding(c["max_position_embeddings"], c["dim"])
        self.LayerNorm = torch.nn.LayerNorm(c["dim"], eps=1e-12)
        self.register_buffer("position_ids", torch.arange(c["max_position_embeddings"]).expand((1, -1)), persistent=False)

    def forward(self, input_ids):
        input_embeds = self.word_embeddings(input_ids)
        seq_length = input_embeds.size(1)
        position_ids = self.position_ids[:, :seq_length]
        position_embeddings = self.position_embeddings(position_ids)
        return self.LayerNorm(input_embeds + position_embeddings)


class MultiHeadSelfAttention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_heads, self.dim = c["n_heads"], c["dim"]
        self.q_lin = torch.nn.Linear(c["dim"], c["dim"])
        self.k_lin = torch.nn.Linear(c["dim"], c["dim"])
        self.v_lin = torch.nn.Linear(c["dim"], c["dim"])
        self.out_lin = torch.nn.Linear(c["dim"], c["dim"])

    def forward(self, query, key, value, mask):
        bs, q_length, dim = query.size()
        k_length = key.size(1)
        dim_per_head = self.dim // self.n_heads
        mask_reshp = (bs, 1, 1, k_length)

        def shape(x):
            return x.view(bs, -1, self.n_heads, dim_per_head).transpose(1, 2)

        def unshape(x):
            return x.transpose(1, 2).contiguous().view(bs, -1, self.n_heads * dim_per_head)

        q = shape(self.q_lin(query))
        k = shape(self.k_lin(key))
        v = shape(self.v_lin(value))
        q = q / math.sqrt(dim_per_head)
        scores = torch.matmul(q, k.transpose(2, 3))
        mask = (mask == 0).view(mask_reshp).expand_as(scores)
        scores = scores.masked_fill(mask, torch.tensor(torch.finfo(scores.dtype).min))
        weights = torch.nn.functional.softmax(scores, dim=-1)
        context = unshape(torch.matmul(weights, v))
        return self.out_lin(context)


class FFN(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.lin1 = torch.nn.Linear(c["dim"], c["hidden_dim"])
        self.lin2 = torch.nn.Linear(c["hidden_dim"], c["dim"])

    def forward(self, x):
        return self.lin2(gelu(self.lin1(x)))


class TransformerBlock(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = MultiHeadSelfAttention(c)
        self.sa_layer_norm = torch.nn.LayerNorm(c["dim"], eps=1e-12)
        self.ffn = FFN(c)
        self.output_layer_norm = torch.nn.LayerNorm(c["dim"], eps=1e-12)

    def forward(self, x, attn_mask):
        sa_output = self.sa_layer_norm(self.attention(x, x, x, attn_mask) + x)
        return self.output_layer_norm(self.ffn(sa_output) + sa_output)


class Transformer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = torch.nn.ModuleList([TransformerBlock(c) for _ in range(c["n_layers"])])

    def forward(self, x, attn_mask):
        for layer in self.layer:
            x = layer(x, attn_mask)
        return x


class DistilBertModel(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = DistilEmbeddings(c)
        self.transformer = Transformer(c)

    def forward(self, input_ids, attention_mask):
        return self.transformer(self.embeddings(input_ids), attention_mask)


class BertPooler(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = torch.nn.Linear(c["hidden_size"], c["hidden_size"])

    def forward(self, hidden_states):
        first_token_tensor = hidden_states[:, 0]
        return torch.tanh(self.dense(first_token_tensor))


class BertForSequenceClassification(torch.nn.Module):
    """BertModel with its pooler (tanh(dense) of [CLS]), then the classifier."""

    def __init__(self, c):
        super().__init__()
        self.bert = BertModel(c)
        self.bert.pooler = BertPooler(c)
        self.classifier = torch.nn.Linear(c["hidden_size"], len(c["id2label"]))

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        return self.classifier(self.bert.pooler(self.bert(input_ids, attention_mask, token_type_ids)))


class XLMRobertaClassificationHead(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = torch.nn.Linear(c["hidden_size"], c["hidden_size"])
        self.out_proj = torch.nn.Linear(c["hidden_size"], len(c["id2label"]))

    def forward(self, features):
        x = features[:, 0, :]
        return self.out_proj(torch.tanh(self.dense(x)))


class XLMRobertaForSequenceClassification(torch.nn.Module):
    """XLMRobertaModel without a pooler, then the head on <s>."""

    def __init__(self, c):
        super().__init__()
        self.roberta = BertModel(c, roberta=True)
        self.classifier = XLMRobertaClassificationHead(c)

    def forward(self, input_ids, attention_mask):
        return self.classifier(self.roberta(input_ids, attention_mask))


class DistilBertForSequenceClassification(torch.nn.Module):
    """hidden_state[:, 0], pre_classifier, ReLU, classifier."""

    def __init__(self, c):
        super().__init__()
        self.distilbert = DistilBertModel(c)
        self.pre_classifier = torch.nn.Linear(c["dim"], c["dim"])
        self.classifier = torch.nn.Linear(c["dim"], len(c["id2label"]))

    def forward(self, input_ids, attention_mask):
        pooled_output = self.distilbert(input_ids, attention_mask)[:, 0]
        pooled_output = torch.nn.ReLU()(self.pre_classifier(pooled_output))
        return self.classifier(pooled_output)


class SentenceTransformer(torch.nn.Module):
    """An encoder, sentence-transformers' Pooling (mean: the masked sum over the clamped mask
    count; cls: the first token) and Normalize (F.normalize(p=2, dim=1)), with the outputs an
    optimum export of a SentenceTransformer has: token_embeddings and sentence_embedding."""

    def __init__(self, encoder, mode):
        super().__init__()
        self.encoder, self.mode = encoder, mode

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        args = (input_ids, attention_mask) + ((token_type_ids,) if token_type_ids is not None else ())
        token_embeddings = self.encoder(*args)
        if self.mode == "cls":
            pooled = token_embeddings[:, 0]
        else:
            input_mask_expanded = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).to(token_embeddings.dtype)
            sum_embeddings = torch.sum(token_embeddings * input_mask_expanded, 1)
            sum_mask = input_mask_expanded.sum(1)
            sum_mask = torch.clamp(sum_mask, min=1e-9)
            pooled = sum_embeddings / sum_mask
        return token_embeddings, torch.nn.functional.normalize(pooled, p=2, dim=1)


def build(family, fixture_dir, cut=True):
    """The module of `family` ("bert", "xlm-roberta", "distilbert") holding the weights of the
    model folder `fixture_dir`, its config (cut: the vocabulary to VOCAB rows and the positions
    to POSITIONS) and its input names."""
    with open(os.path.join(fixture_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    if cut:
        config["vocab_size"] = VOCAB
        config["max_position_embeddings"] = POSITIONS
    weights = reference.load_model_weights(fixture_dir)
    state = {}
    for name, array in weights.items():
        t = torch.from_numpy(array.copy())
        if cut and name.endswith("word_embeddings.weight"):
            t = t[:VOCAB]
        if cut and name.endswith("position_embeddings.weight"):
            t = t[:POSITIONS]
        state[name] = t
    classifier = "ForSequenceClassification" in config["architectures"][0]
    if family == "distilbert":
        module = (DistilBertForSequenceClassification if classifier else DistilBertModel)(config)
        inputs = ["input_ids", "attention_mask"]
    elif classifier:
        module = (BertForSequenceClassification if family == "bert" else XLMRobertaForSequenceClassification)(config)
        inputs = ["input_ids", "attention_mask"] + (["token_type_ids"] if family == "bert" else [])
    else:
        module = BertModel(config, roberta=family == "xlm-roberta")
        inputs = ["input_ids", "attention_mask"] + (["token_type_ids"] if family == "bert" else [])
    missing, unexpected = module.load_state_dict(state, strict=False)
    if missing:
        raise SystemExit(f"{family}: the fixture lacks {missing}")
    return module.eval(), config, inputs


def write_config(out, config):
    """The folder `out` (made) and its config.json, as the fixtures' folders hold it."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")


def export(module, inputs, path, opset, vocab=512, output="last_hidden_state"):
    """torch.onnx.export as optimum calls it: dynamic batch and sequence axes, the output
    last_hidden_state (or a classifier's logits, [batch_size, labels])."""
    ids = torch.tensor([[2, 40, 300, 7, 3, 0], [2, 9, 3, 0, 0, 0]]) % vocab
    mask = (ids != 0).long()
    args = (ids, mask) + ((torch.zeros_like(ids),) if "token_type_ids" in inputs else ())
    dynamic = {0: "batch_size", 1: "sequence_length"}
    axes = {name: dynamic for name in inputs}
    axes[output] = dynamic if output == "last_hidden_state" else {0: "batch_size"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, path, input_names=inputs, output_names=[output],
                          opset_version=opset, dynamic_axes=axes, do_constant_folding=True)


def fuzz_seeds(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(5)
    bert = {"vocab_size": 16, "hidden_size": 8, "max_position_embeddings": 8, "type_vocab_size": 2,
            "layer_norm_eps": 1e-12, "num_attention_heads": 2, "intermediate_size": 16, "num_hidden_layers": 1,
            "pad_token_id": 1}
    distil = {"vocab_size": 16, "dim": 8, "max_position_embeddings": 8, "n_heads": 2, "hidden_dim": 16,
              "n_layers": 1}
    for family, module, inputs in (
            ("bert", BertModel(bert), ["input_ids", "attention_mask", "token_type_ids"]),
            ("xlm-roberta", BertModel(dict(bert, type_vocab_size=1), roberta=True), ["input_ids", "attention_mask"]),
            ("distilbert", DistilBertModel(distil), ["input_ids", "attention_mask"])):
        module.eval()
        for opset in (14, 17):
            export(module, inputs, os.path.join(out, f"{family}_opset{opset}.onnx"), opset, vocab=16)
        subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "bench", "peers", "quantize_onnx.py"),
                        os.path.join(out, f"{family}_opset14.onnx"), os.path.join(out, f"{family}_int8.onnx")],
                       check=True, stdout=subprocess.DEVNULL)
        if family == "bert":  # asymmetric uint8 weights, one scale and zero point per column
            subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "bench", "peers", "quantize_onnx.py"),
                            os.path.join(out, "bert_opset14.onnx"), os.path.join(out, "bert_uint8.onnx"),
                            "--weight-type", "uint8", "--per-channel"], check=True, stdout=subprocess.DEVNULL)
        if family != "distilbert":  # pooled outputs: mean for BERT, CLS for XLM-R
            st = SentenceTransformer(module, "mean" if family == "bert" else "cls").eval()
            export_sentence_transformer(st, inputs, os.path.join(out, f"{family}_st.onnx"), vocab=16)
    for name in sorted(os.listdir(out)):
        print(f"wrote {os.path.join(out, name)} ({os.path.getsize(os.path.join(out, name))} bytes)")


def export_sentence_transformer(module, inputs, path, vocab=512):
    """An optimum export of a SentenceTransformer, opset 14."""
    ids = torch.tensor([[2, 40, 300, 7, 3, 0], [2, 9, 3, 0, 0, 0]]) % vocab
    mask = (ids != 0).long()
    args = (ids, mask) + ((torch.zeros_like(ids),) if "token_type_ids" in inputs else ())
    dynamic = {0: "batch_size", 1: "sequence_length"}
    axes = {name: dynamic for name in inputs + ["token_embeddings"]}
    axes["sentence_embedding"] = {0: "batch_size"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, path, input_names=inputs,
                          output_names=["token_embeddings", "sentence_embedding"], opset_version=14,
                          dynamic_axes=axes, do_constant_folding=True)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--fuzz-seeds":
        fuzz_seeds(sys.argv[2])
        return
    fixture_tool = sys.argv[1]
    out_root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "..", "tests", "data", "onnx")
    for family, arch in FAMILIES.items():
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([fixture_tool, "--arch", arch, "--seed", "1", "--out", tmp + "/m"], check=True,
                           stdout=subprocess.DEVNULL)
            module, config, inputs = build(family, tmp + "/m")
        out = os.path.join(out_root, family)
        write_config(out, config)
        for opset in (14, 17):
            path = os.path.join(out, f"model_opset{opset}.onnx")
            export(module, inputs, path, opset)
            print(f"wrote {path} ({os.path.getsize(path)} bytes)")
        for name, extra in (("model_int8.onnx", []), ("model_uint8.onnx", ["--weight-type", "uint8"])):
            path = os.path.join(out, name)
            subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "bench", "peers", "quantize_onnx.py"),
                            os.path.join(out, "model_opset14.onnx"), path] + extra, check=True,
                           stdout=subprocess.DEVNULL)
            print(f"wrote {path} ({os.path.getsize(path)} bytes)")
        # The *ForSequenceClassification class of the family (warden-fixture --head classifier: 3
        # labels), its logits output; opset 14.
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([fixture_tool, "--arch", arch, "--head", "classifier", "--seed", "1", "--out", tmp + "/m"],
                           check=True, stdout=subprocess.DEVNULL)
            module, config, inputs = build(family, tmp + "/m")
        out = os.path.join(out_root, family + "-classifier")
        write_config(out, config)
        path = os.path.join(out, "model_opset14.onnx")
        export(module, inputs, path, 14, output="logits")
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")
        # A SentenceTransformer's export with its pooling and normalisation in the graph: BERT
        # with mean pooling, XLM-R with CLS pooling (bge-m3's).
        if family in ("bert", "xlm-roberta"):
            with tempfile.TemporaryDirectory() as tmp:
                subprocess.run([fixture_tool, "--arch", arch, "--seed", "1", "--out", tmp + "/m"], check=True,
                               stdout=subprocess.DEVNULL)
                module, config, inputs = build(family, tmp + "/m")
            out = os.path.join(out_root, family + "-st")
            write_config(out, config)
            path = os.path.join(out, "model_opset14.onnx")
            export_sentence_transformer(SentenceTransformer(module, "mean" if family == "bert" else "cls").eval(),
                                        inputs, path)
            print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
