/**
 * Issue 34: a subgraph answer that is no GraphQL response says which way
 * (invalid JSON and where, an empty body, JSON without `data` or `errors`),
 * a non-2xx status is named whatever the body, and the data of a 5xx answer
 * is kept while the fetch is reported failed. Messages never quote the body.
 */
import assert from "node:assert/strict";
import { edgeState, graphqlPost, handlerOf } from "./_edge_fixture.ts";

/** Retries off: each case is one answer. */
const NO_RETRY = { traffic_shaping: { all: { retry: { enabled: false } } } };

async function run(answer: () => unknown) {
  const handle = handlerOf(await edgeState(NO_RETRY, { answer }));
  const response = await handle(graphqlPost({ query: "{ users { id name } }" }));
  const text = await response.text();
  return { text, body: JSON.parse(text) };
}

function raw(body: string, status = 200): Response {
  return new Response(body, { status, headers: { "content-type": "application/json" } });
}

Deno.test("issue 34: invalid JSON is named with the position where it goes wrong, without quoting it", async () => {
  const { body, text } = await run(() => raw('{"data": tru}'));
  assert.equal(
    body.errors[0].message,
    'The subgraph "accounts" answered HTTP 200 with a body that is not JSON (invalid at position 9)',
  );
  assert.equal(body.errors[0].extensions.code, "SUBGRAPH_ERROR");
  assert.doesNotMatch(text, /tru\}/);
});

Deno.test("issue 34: an empty body is named as such", async () => {
  for (const empty of ["", "  \n"]) {
    const { body } = await run(() => raw(empty));
    assert.equal(
      body.errors[0].message,
      'The subgraph "accounts" answered HTTP 200 with an empty body',
    );
  }
});

Deno.test("issue 34: JSON with neither data nor errors, or not an object, is named as such", async () => {
  const object = await run(() => raw('{"result": 1}'));
  assert.equal(
    object.body.errors[0].message,
    'The subgraph "accounts" answered HTTP 200 with a JSON object holding neither "data" nor "errors"',
  );
  const list = await run(() => raw("[1, 2]"));
  assert.equal(
    list.body.errors[0].message,
    'The subgraph "accounts" answered HTTP 200 with JSON that is not an object, not a GraphQL response',
  );
});

Deno.test("issue 34: a non-2xx status is named whatever the body: HTML, empty, or GraphQL errors", async () => {
  const html = await run(() => raw("<html>Bad Gateway</html>", 502));
  assert.equal(
    html.body.errors[0].message,
    'The subgraph "accounts" answered HTTP 502 with a body that is not JSON (invalid at position 0)',
  );
  assert.equal(html.body.errors[0].extensions.statusCode, 502);
  const empty = await run(() => raw("", 504));
  assert.equal(
    empty.body.errors[0].message,
    'The subgraph "accounts" answered HTTP 504 with an empty body',
  );
  const graphql = await run(() =>
    Response.json({ errors: [{ message: "upstream down" }] }, { status: 502 })
  );
  const messages = graphql.body.errors.map((e: { message: string }) => e.message);
  assert.equal(messages[0], 'The subgraph "accounts" answered HTTP 502, an error status');
  assert.equal(graphql.body.errors[0].extensions.code, "SUBGRAPH_ERROR");
  assert.equal(graphql.body.errors[0].extensions.statusCode, 502);
  assert.equal(messages[1], "Failed to fetch from Subgraph 'accounts'", "its own error is kept");
  assert.equal(graphql.body.errors[1].extensions.errors[0].message, "upstream down");
});

Deno.test("issue 34: the data of a 5xx answer is kept, and the fetch is reported failed", async () => {
  const { body } = await run(() =>
    Response.json({ data: { users: [{ id: "1", name: "Ada" }] } }, { status: 503 })
  );
  assert.deepEqual(body.data, { users: [{ id: "1", name: "Ada" }] });
  assert.equal(body.errors.length, 1);
  assert.equal(
    body.errors[0].message,
    'The subgraph "accounts" answered HTTP 503, an error status',
  );
  assert.equal(body.errors[0].extensions.statusCode, 503);
});
