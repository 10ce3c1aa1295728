/**
 * Issue 15/16: a GraphQL answer is sent as a string and carries its UTF-8 size,
 * so the access log needs no copy of the body and `engine.max_response_bytes`
 * is checked in bytes, not UTF-16 code units.
 */
import assert from "node:assert/strict";
import { knownBodySize } from "../../../lib/telemetry/mod.ts";
import { edgeState, graphqlPost, handlerOf } from "../_edge_fixture.ts";

const NAME = "é€😀".repeat(10); // 90 bytes as UTF-8, 40 UTF-16 code units

Deno.test("issue 16: a GraphQL answer carries its UTF-8 byte size (the access log reads it, no copy)", async () => {
  const handle = handlerOf(
    await edgeState({}, { answer: () => ({ data: { users: [{ id: "1", name: NAME }] } }) }),
  );
  const response = await handle(graphqlPost({ query: "{ users { id name } }" }));
  assert.equal(response.status, 200);
  const size = knownBodySize(response);
  const sent = new Uint8Array(await response.arrayBuffer()).byteLength;
  assert.equal(size, sent);
});

Deno.test("issue 15: engine.max_response_bytes counts UTF-8 bytes of the answer", async () => {
  // One review entity answer fans out to ten products: the client answer is ~10x what the
  // subgraphs sent, so the in-flight budget (subgraph bytes) lets it through and only the
  // answer's own check can refuse it.
  const body = NAME.repeat(10);
  const answer = (subgraph: string) =>
    subgraph === "products"
      ? {
        data: {
          topProducts: Array.from({ length: 10 }, () => ({ __typename: "Product", upc: "1" })),
        },
      }
      : { data: { _entities: [{ reviews: [{ body }] }] } };
  const query = "{ topProducts { upc reviews { body } } }";
  const text = JSON.stringify({
    data: { topProducts: Array.from({ length: 10 }, () => ({ upc: "1", reviews: [{ body }] })) },
  });
  const bytes = new TextEncoder().encode(text).length;
  // Between the UTF-16 length and the UTF-8 size: only a byte count refuses it.
  const limit = text.length + 100;
  assert.ok(limit < bytes);
  const tight = handlerOf(await edgeState({ engine: { max_response_bytes: limit } }, { answer }));
  const refused = await tight(graphqlPost({ query }));
  assert.equal(refused.status, 502);
  assert.equal((await refused.json()).errors[0].extensions.code, "RESPONSE_TOO_LARGE");
  const roomy = handlerOf(await edgeState({ engine: { max_response_bytes: bytes } }, { answer }));
  const ok = await roomy(graphqlPost({ query }));
  assert.equal(ok.status, 200);
  assert.equal(await ok.text(), text);
});
