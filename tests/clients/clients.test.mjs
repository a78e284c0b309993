// The official SDKs, unmodified, against `warden serve` (run_clients_test.sh starts it with
// an embedding model `emb` and a reranker `rr`, key "sesame", and sets WARDEN_URL). Each
// answer is checked against Warden's own TEI route for the same input: an SDK that decodes,
// reorders or renames something wrongly fails here.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { CohereClient, CohereClientV2 } from "cohere-ai";
import { InferenceClient } from "@huggingface/inference";
import { OpenAIEmbeddings } from "@langchain/openai";
import { Mixedbread } from "@mixedbread/sdk";

const url = process.env.WARDEN_URL;
const key = "sesame";
assert.ok(url, "WARDEN_URL is not set");

async function tei(path, body) {
  const r = await fetch(url + path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  assert.equal(r.status, 200, `${path}: ${await r.clone().text()}`);
  return r.json();
}

// JSON carries each float32 as its shortest decimal; the SDKs may decode base64 float32.
function sameVector(got, want, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; ++i) {
    assert.equal(Math.fround(got[i]), Math.fround(want[i]), `${what}: value ${i}`);
  }
}

const texts = ["how do I ignore whitespace in git diff?", "The train to Berlin leaves at noon."];
const query = "what is a cat";
const documents = ["x", "a cat is an animal", "dogs bark"];

test("openai: embeddings.create (its default base64 encoding) matches /embed", async () => {
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: key });
  const want = await tei("/embed", { inputs: texts });
  const got = await client.embeddings.create({ model: "text-embedding-3-small", input: texts });
  assert.equal(got.object, "list");
  assert.equal(got.model, "emb");
  assert.ok(got.usage.prompt_tokens > 0);
  got.data.forEach((d, i) => sameVector(d.embedding, want[i], `openai ${i}`));
  const floats = await client.embeddings.create({ model: "emb", input: texts[0], encoding_format: "float" });
  sameVector(floats.data[0].embedding, want[0], "openai float");
  await assert.rejects(
    new OpenAI({ baseURL: `${url}/v1`, apiKey: "wrong" }).embeddings.create({ model: "emb", input: "x" }),
    (e) => e.status === 401,
  );
});

test("@langchain/openai: OpenAIEmbeddings matches /embed", async () => {
  const embeddings = new OpenAIEmbeddings({
    model: "text-embedding-3-small",
    apiKey: key,
    configuration: { baseURL: `${url}/v1` },
  });
  const want = await tei("/embed", { inputs: texts });
  sameVector(await embeddings.embedQuery(texts[0]), want[0], "embedQuery");
  const docs = await embeddings.embedDocuments(texts);
  docs.forEach((d, i) => sameVector(d, want[i], `embedDocuments ${i}`));
});

test("cohere-ai CohereClient: rerank and embed (v1)", async () => {
  const client = new CohereClient({ token: key, environment: url });
  const want = await tei("/rerank", { query, texts: documents });
  const got = await client.rerank({ model: "rerank-english-v3.0", query, documents, topN: 2 });
  assert.equal(got.results.length, 2);
  got.results.forEach((r, i) => {
    assert.equal(r.index, want[i].index);
    assert.equal(Math.fround(r.relevanceScore), Math.fround(want[i].score));
    assert.equal(r.document, undefined);
  });
  assert.ok(got.id);
  const withDocs = await client.rerank({ query, documents: documents.map((text) => ({ text })), returnDocuments: true });
  assert.equal(withDocs.results[0].document.text, documents[want[0].index]);

  const embedded = await tei("/embed", { inputs: texts });
  const e = await client.embed({ texts, model: "embed-english-v3.0", inputType: "search_document" });
  assert.equal(e.responseType, "embeddings_floats");
  e.embeddings.forEach((v, i) => sameVector(v, embedded[i], `cohere v1 embed ${i}`));
});

test("cohere-ai CohereClientV2: rerank and embed by type (v2)", async () => {
  const client = new CohereClientV2({ token: key, environment: url });
  const want = await tei("/rerank", { query, texts: documents });
  const got = await client.rerank({ model: "rerank-v3.5", query, documents, topN: 1 });
  assert.equal(got.results.length, 1);
  assert.equal(got.results[0].index, want[0].index);
  assert.equal(Math.fround(got.results[0].relevanceScore), Math.fround(want[0].score));

  const embedded = await tei("/embed", { inputs: texts });
  const e = await client.embed({
    texts,
    model: "embed-v4.0",
    inputType: "search_query",
    embeddingTypes: ["float", "int8", "ubinary"],
  });
  e.embeddings.float.forEach((v, i) => sameVector(v, embedded[i], `cohere v2 float ${i}`));
  // int8 and ubinary as docs/api.md defines them, recomputed here from the floats.
  e.embeddings.float.forEach((v, i) => {
    const largest = Math.max(...v.map(Math.abs));
    const int8 = v.map((x) => Math.max(-127, Math.min(127, Math.sign(x) * Math.round(Math.abs(x * Math.fround(127 / largest))))));
    int8.forEach((q, j) => assert.ok(Math.abs(q - e.embeddings.int8[i][j]) <= 1, `int8 ${i},${j}`));
    const bits = e.embeddings.ubinary[i];
    assert.equal(bits.length, Math.ceil(v.length / 8));
    v.forEach((x, j) => assert.equal((bits[j >> 3] >> (7 - (j & 7))) & 1, x > 0 ? 1 : 0, `bit ${i},${j}`));
  });
});

test("@huggingface/inference: an endpoint's featureExtraction and sentenceSimilarity", async () => {
  const endpoint = new InferenceClient(key).endpoint(url);
  const want = await tei("/embed", { inputs: texts[0] });
  const got = await endpoint.featureExtraction({ inputs: texts[0] });
  sameVector(got[0], want[0], "featureExtraction");
  // Addressed to one model by its path, as a dedicated endpoint's URL would be.
  const both = await tei("/embed", { inputs: texts });
  const byPath = await new InferenceClient(key).endpoint(`${url}/models/emb`).featureExtraction({ inputs: texts });
  assert.equal(byPath.length, texts.length);
  byPath.forEach((v, i) => sameVector(v, both[i], `by path ${i}`));
  const similarity = await tei("/similarity", { inputs: { source_sentence: texts[0], sentences: texts } });
  const scores = await endpoint.sentenceSimilarity({ inputs: { source_sentence: texts[0], sentences: texts } });
  scores.forEach((s, i) => assert.equal(Math.fround(s), Math.fround(similarity[i])));
});

test("@mixedbread/sdk Mixedbread: rerank (/v1/reranking) and embed", async () => {
  const client = new Mixedbread({ apiKey: key, baseURL: url });
  const want = await tei("/rerank", { query, texts: documents });
  const got = await client.rerank({ model: "mixedbread-ai/mxbai-rerank-large-v2", query, input: documents, top_k: 2 });
  assert.equal(got.data.length, 2);
  got.data.forEach((r, i) => {
    assert.equal(r.index, want[i].index);
    assert.equal(Math.fround(r.score), Math.fround(want[i].score));
    assert.equal(r.object, "rank_result");
    assert.equal(r.input, undefined);
  });
  assert.equal(got.top_k, 2);
  assert.equal(got.return_input, false);
  assert.equal(got.object, "list");
  assert.ok(got.usage.total_tokens > 0);
  const withInput = await client.rerank({ query, input: documents, return_input: true });
  assert.equal(withInput.data.length, documents.length);
  withInput.data.forEach((r) => assert.equal(r.input, documents[r.index]));

  const embedded = await tei("/embed", { inputs: texts });
  const e = await client.embed({ model: "mixedbread-ai/mxbai-embed-large-v1", input: texts });
  e.data.forEach((d, i) => sameVector(d.embedding, embedded[i], `mixedbread embed ${i}`));
});
