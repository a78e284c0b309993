"""The package's API: shapes, prompts, options, the error classes and the documentation."""

from __future__ import annotations

import pydoc

import numpy as np
import pytest

import warden

DENSE = "--arch bert --preset tiny --seed 3 --prompt query=QUERY: --prompt passage=PASSAGE: --out DIR"


@pytest.fixture(scope="module")
def model(make_model) -> warden.TextEmbedding:
    return warden.TextEmbedding(make_model(DENSE))


def test_use_lite_gives_512(use_lite_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARDEN_USE_LITE_DIR", use_lite_dir)
    assert warden.TextEmbedding("use-lite").embed(["hello"])[0].shape == (512,)
    assert warden.TextEmbedding().model_name == "use-lite"  # the default embedder


def test_shapes_and_rows(model: warden.TextEmbedding) -> None:
    rows = model.embed(["a", "b c", "d e f"])
    assert rows.shape == (3, model.dim) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-6)
    assert model.embed("a").shape == (model.dim,)
    assert np.array_equal(model.embed("a"), rows[0])
    assert model.embed([]).shape == (0, model.dim)
    assert model.embed(t for t in ["a", "b c"]).shape == (2, model.dim)  # any iterable
    assert model.embedding_size == model.dim


def test_prompts_and_input_types(model: warden.TextEmbedding) -> None:
    assert model.prompts == {"query": "QUERY:", "passage": "PASSAGE:"}
    q = model.query_embed(["where is it?"])
    assert np.array_equal(q, model.embed(["where is it?"], prompt_name="query"))
    assert np.array_equal(q, model.embed(["QUERY:where is it?"]))
    p = model.passage_embed(["it is here"])
    assert np.array_equal(p, model.embed(["PASSAGE:it is here"]))
    assert not np.array_equal(q, model.embed(["where is it?"]))


def test_dimensions_and_normalize(model: warden.TextEmbedding) -> None:
    raw = model.embed(["hello there"], normalize=False)
    unit = model.embed(["hello there"])
    assert np.allclose(unit, raw / np.linalg.norm(raw), atol=1e-6)
    cut = model.embed(["hello there"], dimensions=8)
    assert cut.shape == (1, 8)
    assert np.allclose(cut, raw[:, :8] / np.linalg.norm(raw[:, :8]), atol=1e-6)
    assert np.array_equal(model.encode(["hello there"]), raw)  # sentence-transformers: not normalised


def test_batch_size_does_not_change_numbers(model: warden.TextEmbedding) -> None:
    texts = [("word " * n).strip() for n in range(1, 40)]
    a = model.embed(texts, batch_size=1)
    b = model.embed(texts, batch_size=7)
    c = model.embed(texts, batch_size=64)
    assert np.array_equal(a, b) and np.array_equal(a, c)


def test_errors_are_warden_exceptions(model: warden.TextEmbedding, make_model, tmp_path) -> None:
    with pytest.raises(warden.ModelNotFoundError):
        warden.TextEmbedding(str(tmp_path / "no-such-model"))
    with pytest.raises(warden.ArgumentError, match="dtype"):
        warden.TextEmbedding(make_model(DENSE), dtype="float64")
    with pytest.raises(warden.InputError, match="input 1 must be a str, not int"):
        model.embed(["fine", 3])
    with pytest.raises(warden.InputError, match="input 0 is not valid Unicode"):
        model.embed(["\ud800 lone surrogate"])
    with pytest.raises(warden.ArgumentError, match="batch_size"):
        model.embed(["a"], batch_size=0)
    with pytest.raises(warden.ArgumentError, match="prompt"):
        model.embed(["a"], prompt_name="nope")
    with pytest.raises(warden.InputError, match="input 0"):
        model.embed(["word " * 5000], truncate=False)
    with pytest.raises(warden.ArgumentError, match="needs a reranker or classifier"):
        warden.TextCrossEncoder(make_model(DENSE))
    with pytest.raises(warden.ArgumentError, match="no sparse vectors"):
        warden.SparseTextEmbedding(make_model(DENSE)).embed(["a"])
    # Every one is a WardenError, and the value errors are ValueErrors too.
    assert issubclass(warden.InputError, (warden.WardenError, ValueError))
    assert issubclass(warden.ModelNotFoundError, warden.ModelError)
    # The model still works after all that.
    assert model.embed(["a"]).shape == (1, model.dim)


def test_reranker(make_model) -> None:
    ranker = warden.TextCrossEncoder(make_model("--arch bert --head reranker --preset tiny --seed 1 --out DIR"))
    docs = ["paris is in france", "the fox", "a city", "bread"]
    scores = ranker.score("what is the capital of france?", docs)
    ranked = ranker.rerank("what is the capital of france?", docs, top_k=2)
    assert [r["index"] for r in ranked] == list(np.argsort(-scores, kind="stable")[:2])
    assert ranked[0]["score"] == pytest.approx(float(scores.max()))
    assert ranked[0]["document"] == docs[ranked[0]["index"]]
    raw = ranker.score("q", docs, raw=True)
    assert np.allclose(1 / (1 + np.exp(-raw.astype(np.float64))), ranker.score("q", docs), atol=1e-6)
    with pytest.raises(warden.ArgumentError, match="top_k"):
        ranker.rerank("q", docs, top_k=0)
    with pytest.raises(warden.InputError, match="document 1"):
        ranker.score("q", ["ok", None])


def test_classifier(make_model) -> None:
    clf = warden.TextCrossEncoder(make_model("--arch bert --head classifier --preset tiny --seed 1 --out DIR"))
    assert len(clf.labels) == 3
    rows = clf.predict(["one", "two"])
    assert rows.shape == (2, 3)
    assert np.allclose(rows.sum(axis=1), 1.0, atol=1e-6)
    with pytest.raises(warden.ArgumentError, match="not a reranker"):
        clf.score("q", ["d"])


def test_help_reads_well() -> None:
    text = pydoc.render_doc(warden.TextEmbedding, renderer=pydoc.plaintext)
    for words in ("Dense text embeddings", "embed(", "query_embed(", "batch_size", "dtype", "ndarray"):
        assert words in text, words
    for cls in (warden.SparseTextEmbedding, warden.LateInteractionTextEmbedding, warden.TextCrossEncoder,
                warden.Guard):
        assert cls.__doc__ and len(cls.__doc__) > 100
