#!/usr/bin/python3
"""Self-test of tools/golden/reference.py against a second, differently built implementation.

The reference is hand-written tensor code. This test rebuilds every encoder from stock
`torch.nn` modules instead -- `nn.Embedding`, `nn.LayerNorm` and `nn.TransformerEncoderLayer`
(post-LN: `norm_first=False`, `activation="gelu"` which is the erf GELU, `dropout=0`,
`src_key_padding_mask` for padding, fused in_proj = cat(query, key, value)) plus `nn.Linear`
heads and a plain-Python loop for RoBERTa's position ids (padding_idx + 1 + i for real tokens)
-- loads the same weights into it, and checks that both agree, in float64 (to 1e-9) and in
float32 (to 1e-5), on last hidden states (real tokens only) and logits, for every
architecture and head, on a padded batch of mixed lengths. It also checks the safetensors
reader on F16 and BF16 files against torch's own float16 / bfloat16 rounding of the F32
weights (bit-exact).

    /usr/bin/python3 tools/golden/selftest.py [--fixture-bin build/release/bin/warden-fixture]

It needs node + the tokenizers binding, and uses tools/golden/pyfixture.py for the model
directories, so it runs without warden-fixture. With --fixture-bin it also reads
warden-fixture's `--dtype float16|bfloat16` and `--max-shard-size` outputs and checks them
against its float32 single-file output (bit-exact after torch's rounding; same tensors).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_goldens  # noqa: E402
import reference  # noqa: E402

CASES = [("bert", "none"), ("bert", "reranker"), ("bert", "classifier"),
         ("xlm-roberta", "none"), ("xlm-roberta", "reranker"), ("xlm-roberta", "classifier"),
         ("distilbert", "none"), ("distilbert", "reranker"), ("distilbert", "classifier")]


class TorchNNModel(nn.Module):
    """The same forward pass assembled from torch.nn modules."""

    def __init__(self, ref: reference.Reference):
        super().__init__()
        self.ref = ref
        w = {k: v for k, v in ref.w.items()}
        p = ref.prefix
        H = ref.hidden
        distil = ref.family == "distilbert"

        def emb(name):
            t = w[p + name]
            e = nn.Embedding(t.shape[0], t.shape[1])
            e.weight.data.copy_(t)
            return e

        def lin(name, base=True):
            k = (p + name) if base else name
            wt = w[k + ".weight"]
            layer = nn.Linear(wt.shape[1], wt.shape[0])
            layer.weight.data.copy_(wt)
            layer.bias.data.copy_(w[k + ".bias"])
            return layer

        def ln(name):
            layer = nn.LayerNorm(H, eps=ref.eps)
            layer.weight.data.copy_(w[p + name + ".weight"])
            layer.bias.data.copy_(w[p + name + ".bias"])
            return layer

        self.word = emb("embeddings.word_embeddings.weight")
        self.pos = emb("embeddings.position_embeddings.weight")
        self.types = None if distil else emb("embeddings.token_type_embeddings.weight")
        self.emb_ln = ln("embeddings.LayerNorm")
        self.layers = nn.ModuleList()
        for i in range(ref.layers):
            inter = (w[p + f"transformer.layer.{i}.ffn.lin1.weight"] if distil
                     else w[p + f"encoder.layer.{i}.intermediate.dense.weight"]).shape[0]
            L = nn.TransformerEncoderLayer(H, ref.heads, dim_feedforward=inter, dropout=0.0,
                                           activation="gelu", layer_norm_eps=ref.eps,
                                           batch_first=True, norm_first=False)
            if distil:
                q = f"transformer.layer.{i}."
                names = dict(q=q + "attention.q_lin", k=q + "attention.k_lin", v=q + "attention.v_lin",
                             o=q + "attention.out_lin", n1=q + "sa_layer_norm", f1=q + "ffn.lin1",
                             f2=q + "ffn.lin2", n2=q + "output_layer_norm")
            else:
                q = f"encoder.layer.{i}."
                names = dict(q=q + "attention.self.query", k=q + "attention.self.key",
                             v=q + "attention.self.value", o=q + "attention.output.dense",
                             n1=q + "attention.output.LayerNorm", f1=q + "intermediate.dense",
                             f2=q + "output.dense", n2=q + "output.LayerNorm")
            g = lambda n, s: w[p + names[n] + s]  # noqa: E731
            L.self_attn.in_proj_weight.data.copy_(torch.cat([g("q", ".weight"), g("k", ".weight"), g("v", ".weight")]))
            L.self_attn.in_proj_bias.data.copy_(torch.cat([g("q", ".bias"), g("k", ".bias"), g("v", ".bias")]))
            L.self_attn.out_proj.weight.data.copy_(g("o", ".weight"))
            L.self_attn.out_proj.bias.data.copy_(g("o", ".bias"))
            L.norm1.weight.data.copy_(g("n1", ".weight"))
            L.norm1.bias.data.copy_(g("n1", ".bias"))
            L.linear1.weight.data.copy_(g("f1", ".weight"))
            L.linear1.bias.data.copy_(g("f1", ".bias"))
            L.linear2.weight.data.copy_(g("f2", ".weight"))
            L.linear2.bias.data.copy_(g("f2", ".bias"))
            L.norm2.weight.data.copy_(g("n2", ".weight"))
            L.norm2.bias.data.copy_(g("n2", ".bias"))
            self.layers.append(L)
        self.head = None
        if ref.has_head:
            if ref.family == "bert":
                self.head = nn.Sequential(lin("pooler.dense"), nn.Tanh(), lin("classifier", False))
            elif ref.family == "roberta":
                self.head = nn.Sequential(lin("classifier.dense", False), nn.Tanh(),
                                          lin("classifier.out_proj", False))
            else:
                self.head = nn.Sequential(lin("pre_classifier", False), nn.ReLU(), lin("classifier", False))

    @torch.no_grad()
    def forward(self, ids, type_ids, mask):
        B, L = ids.shape
        if self.ref.family == "roberta":
            pos = torch.full((B, L), self.ref.pad_id, dtype=torch.long)
            for b in range(B):
                n = 0
                for t in range(L):
                    if int(ids[b, t]) != self.ref.pad_id:
                        n += 1
                        pos[b, t] = self.ref.pad_id + n
        else:
            pos = torch.arange(L).repeat(B, 1)
        x = self.word(ids) + self.pos(pos)
        if self.types is not None:
            x = x + self.types(type_ids if self.ref.family == "bert" else torch.zeros_like(ids))
        x = self.emb_ln(x)
        pad = mask == 0
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=pad)
        logits = self.head(x[:, 0]) if self.head is not None else None
        return x, logits


def fixture(arch, head, dtype, out):
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "pyfixture.py"), "--arch", arch, "--head", head,
                    "--seed", "7", "--dtype", dtype, "--out", out], check=True)


def check_warden_fixture(binary, tmp):
    """warden-fixture's F16 / BF16 / sharded files read back as its F32 file says they should."""
    failures = 0

    def wf(out, *extra):
        subprocess.run([binary, "--arch", "bert", "--head", "none", "--preset", "tiny", "--seed", "1",
                        *extra, "--out", out], check=True)
        return reference.load_model_weights(out)

    w32 = wf(os.path.join(tmp, "wf-f32"))
    for flag, tdt in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
        w = wf(os.path.join(tmp, "wf-" + flag), "--dtype", flag)
        same = set(w) == set(w32) and all(
            torch.equal(torch.from_numpy(w[k]).float(), torch.from_numpy(w32[k]).to(tdt).float()) for k in w32)
        failures += not same
        print(f"{'ok  ' if same else 'FAIL'} warden-fixture --dtype {flag} reads back as torch's rounding of float32")
    shard_dir = os.path.join(tmp, "wf-sharded")
    w = wf(shard_dir, "--max-shard-size", "1000000")
    shards = [f for f in os.listdir(shard_dir) if f.endswith(".safetensors")]
    same = len(shards) > 1 and set(w) == set(w32) and all((w[k] == w32[k]).all() for k in w32)
    failures += not same
    print(f"{'ok  ' if same else 'FAIL'} warden-fixture --max-shard-size: {len(shards)} shards, same tensors")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixture-bin", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    inputs = make_goldens.SINGLES + make_goldens.PAIRS
    failures = 0
    with tempfile.TemporaryDirectory(prefix="warden-selftest-") as tmp:
        for arch, head in CASES:
            d = os.path.join(tmp, f"{arch}-{head}")
            fixture(arch, head, "F32", d)
            enc = make_goldens.tokenize(os.path.join(d, "tokenizer.json"), inputs)["encodings"]
            for dtype, tol in ((torch.float64, 1e-9), (torch.float32, 1e-5)):
                ref = reference.Reference(d, dtype)
                ids, tt, mask = reference.make_batch(enc, ref.pad_id)
                got = ref.forward(ids, tt, mask)
                other = TorchNNModel(ref).to(dtype).eval()
                h, logits = other(ids, tt, mask)
                real = mask.bool()
                dh = float((got["last_hidden_state"][real] - h[real]).abs().max())
                dl = float((got["logits"] - logits).abs().max()) if logits is not None else 0.0
                ok = dh <= tol and dl <= tol
                failures += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {arch:12s} {head:10s} {str(dtype):14s} "
                      f"hidden {dh:.2e} logits {dl:.2e} (tol {tol:g})")
        # safetensors reader: F16 / BF16 against torch's rounding of the F32 weights
        f32dir = os.path.join(tmp, "bert-none")
        w32 = reference.load_safetensors(os.path.join(f32dir, "model.safetensors"))
        for st, tdt in (("F16", torch.float16), ("BF16", torch.bfloat16)):
            d = os.path.join(tmp, f"bert-none-{st}")
            fixture("bert", "none", st, d)
            w = reference.load_safetensors(os.path.join(d, "model.safetensors"))
            same = set(w) == set(w32) and all(
                torch.equal(torch.from_numpy(w[k]).float(), torch.from_numpy(w32[k]).to(tdt).float())
                for k in w32)
            failures += not same
            print(f"{'ok  ' if same else 'FAIL'} safetensors {st} reads back as torch's {tdt} rounding")
        if args.fixture_bin:
            failures += check_warden_fixture(args.fixture_bin, tmp)
    print("selftest:", "FAILED" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
