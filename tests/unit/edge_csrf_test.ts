import assert from "node:assert/strict";
import { BASE, edgeState, graphqlPost, handlerOf, mcpPost } from "./_edge_fixture.ts";

const QUERY = encodeURIComponent("{ __typename }");

async function handler(raw: Record<string, unknown> = {}) {
  return handlerOf(
    await edgeState(raw, {
      operations: [{ path: "GetTypename.graphql", text: "query GetTypename { __typename }" }],
    }),
  );
}

function get(headers: Record<string, string> = {}): Request {
  return new Request(`${BASE}/graphql?query=${QUERY}`, { headers });
}

Deno.test("issue 14: a GET without a preflight header is refused with 400 naming the headers", async () => {
  const handle = await handler();
  const response = await handle(get());
  assert.equal(response.status, 400);
  const error = (await response.json()).errors[0];
  assert.equal(error.extensions.code, "BAD_REQUEST");
  assert.match(error.message, /Cross-Site Request Forgery/);
  assert.match(
    error.message,
    /apollo-require-preflight, x-apollo-operation-name, graphql-preflight/,
  );
});

Deno.test("issue 14: a GET with any one required header, non-empty, runs", async () => {
  const handle = await handler();
  for (const name of ["apollo-require-preflight", "x-apollo-operation-name", "graphql-preflight"]) {
    const response = await handle(get({ [name]: "1" }));
    assert.equal(response.status, 200, name);
    assert.deepEqual(await response.json(), { data: { __typename: "Query" } });
  }
  const empty = await handle(get({ "apollo-require-preflight": " " }));
  assert.equal(empty.status, 400);
  await empty.body?.cancel();
});

Deno.test("issue 14: a POST with a CORS-simple or missing Content-Type needs a preflight header", async () => {
  const handle = await handler();
  const body = JSON.stringify({ query: "{ __typename }" });
  for (
    const type of [
      "text/plain",
      "text/plain; charset=utf-8",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      null,
    ]
  ) {
    const headers: Record<string, string> = type === null ? {} : { "content-type": type };
    const refused = await handle(
      new Request(`${BASE}/graphql`, { method: "POST", headers, body: new Blob([body]) }),
    );
    assert.equal(refused.status, 400, String(type));
    assert.match((await refused.json()).errors[0].message, /CSRF/);
    const marked = await handle(
      new Request(`${BASE}/graphql`, {
        method: "POST",
        headers: { ...headers, "graphql-preflight": "1" },
        body: new Blob([body]),
      }),
    );
    // Past the guard: the media type check answers (these are not JSON).
    assert.equal(marked.status, 415, String(type));
    await marked.body?.cancel();
  }
});

Deno.test("issue 14: a JSON POST needs no preflight header (browsers preflight it)", async () => {
  const handle = await handler();
  const response = await handle(graphqlPost({ query: "{ __typename }" }));
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { data: { __typename: "Query" } });
});

Deno.test("issue 14: csrf_prevention.enabled false and custom required_headers are honoured", async () => {
  const off = await handler({ csrf_prevention: { enabled: false } });
  assert.equal((await off(get())).status, 200);
  const custom = await handler({ csrf_prevention: { required_headers: ["x-my-preflight"] } });
  const refused = await custom(get({ "apollo-require-preflight": "1" }));
  assert.equal(refused.status, 400);
  assert.match((await refused.json()).errors[0].message, /x-my-preflight$/);
  assert.equal((await custom(get({ "x-my-preflight": "1" }))).status, 200);
});

Deno.test("issue 14: Connect GET stays allowed without a preflight header (queries only)", async () => {
  const handle = await handler();
  const url = `${BASE}/service.v1.GraphService/GetTypename?connect=v1&encoding=json&message=${
    encodeURIComponent("{}")
  }`;
  const response = await handle(new Request(url));
  assert.equal(response.status, 200);
  await response.body?.cancel();
});

Deno.test("issue 14: MCP refuses a text/plain POST (it is never a CORS-simple request that runs)", async () => {
  const handle = await handler();
  const response = await handle(
    mcpPost('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { "content-type": "text/plain" }),
  );
  assert.equal(response.status, 415);
  await response.body?.cancel();
});
