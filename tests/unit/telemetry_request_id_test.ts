import assert from "node:assert/strict";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { createHandler } from "../../lib/http/mod.ts";
import { silentLogger } from "../../lib/log/mod.ts";
import { buildState, type RouterState } from "../../lib/state/mod.ts";
import {
  acceptRequestId,
  MAX_REQUEST_ID_LENGTH,
  REQUEST_ID_HEADER,
} from "../../lib/telemetry/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
const composed = composeSupergraph([{
  name: "greetings",
  url: "http://greetings.invalid/graphql",
  sdl: `${LINK}\ntype Query { hello: String! fail: String }`,
}]);
if (!composed.ok) throw new Error("test supergraph does not compose");

async function stateWith(
  raw: Record<string, unknown>,
  seen: Headers[],
): Promise<RouterState> {
  return await buildState({
    config: parseConfig(raw),
    log: silentLogger,
    supergraphSdl: composed.ok ? composed.supergraphSdl : "",
    operationFiles: [],
    traceKeyPem: null,
    fetch: async (request) => {
      seen.push(request.headers);
      const { query } = await request.json();
      return String(query).includes("fail")
        ? Response.json({ data: { fail: null }, errors: [{ message: "boom", path: ["fail"] }] })
        : Response.json({ data: { hello: "world" } });
    },
  });
}

function post(query: string, headers: Record<string, string> = {}): Request {
  return new Request("http://router.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ query }),
  });
}

Deno.test("issue 16: a client X-Request-Id with allowed characters is echoed as sent", () => {
  assert.equal(
    acceptRequestId("7f1c-AB_9.x:y/z+=@", { generate: () => "new" }),
    "7f1c-AB_9.x:y/z+=@",
  );
});

Deno.test("issue 16: an X-Request-Id with a control character, a space or over the cap is replaced", () => {
  const generate = () => "new";
  assert.equal(acceptRequestId("a\u0000b", { generate }), "new");
  assert.equal(acceptRequestId("a b", { generate }), "new");
  assert.equal(acceptRequestId('a"b', { generate }), "new");
  assert.equal(acceptRequestId("", { generate }), "new");
  assert.equal(acceptRequestId("x".repeat(MAX_REQUEST_ID_LENGTH), { generate }).length, 128);
  assert.equal(acceptRequestId("x".repeat(MAX_REQUEST_ID_LENGTH + 1), { generate }), "new");
});

Deno.test("issue 16: without X-Request-Id the router generates one and echoes it in the response", async () => {
  const state = await stateWith({}, []);
  const handle = createHandler(() => state);
  const a = await handle(post("{ hello }"));
  const b = await handle(post("{ hello }"));
  await a.body?.cancel();
  await b.body?.cancel();
  const idA = a.headers.get(REQUEST_ID_HEADER);
  assert.match(idA ?? "", /^[0-9a-f-]{36}$/);
  assert.notEqual(idA, b.headers.get(REQUEST_ID_HEADER));
});

Deno.test("issue 16: a hostile X-Request-Id is not echoed; a generated id replaces it", async () => {
  const state = await stateWith({}, []);
  const handle = createHandler(() => state);
  const response = await handle(post("{ hello }", { "x-request-id": "x".repeat(500) }));
  await response.body?.cancel();
  const id = response.headers.get(REQUEST_ID_HEADER) ?? "";
  assert.match(id, /^[0-9a-f-]{36}$/);
});

Deno.test("issue 16: every GraphQL error carries extensions.request_id (request, subgraph and edge errors)", async () => {
  const state = await stateWith({}, []);
  const handle = createHandler(() => state);
  const headers = { "x-request-id": "req-1" };
  const invalid = await (await handle(post("{ nope }", headers))).json();
  assert.equal(invalid.errors[0].extensions.request_id, "req-1");
  assert.equal(invalid.errors[0].extensions.code, "GRAPHQL_VALIDATION_FAILED");
  const subgraph = await (await handle(post("{ fail }", headers))).json();
  // subgraph_error_propagation wraps subgraph errors by default (issue 14).
  assert.equal(subgraph.errors[0].message, "Failed to fetch from Subgraph 'greetings'");
  assert.equal(subgraph.errors[0].extensions.request_id, "req-1");
  const notFound = await handle(new Request("http://router.test/nowhere", { headers }));
  assert.equal(notFound.status, 404);
  assert.equal((await notFound.json()).errors[0].extensions.request_id, "req-1");
  const malformed = await (await handle(
    new Request("http://router.test/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: "{",
    }),
  )).json();
  assert.equal(malformed.errors[0].extensions.request_id, "req-1");
});

Deno.test("issue 16: the request id reaches a subgraph only through a header rule", async () => {
  const without: Headers[] = [];
  const plain = await stateWith({}, without);
  await (await createHandler(() => plain)(post("{ hello }", { "x-request-id": "r-9" }))).body
    ?.cancel();
  assert.equal(without[0]?.get("x-request-id"), null);
  const withRule: Headers[] = [];
  const ruled = await stateWith(
    { headers: { all: { request: [{ op: "propagate", named: "X-Request-Id" }] } } },
    withRule,
  );
  await (await createHandler(() => ruled)(post("{ hello }", { "x-request-id": "r-9" }))).body
    ?.cancel();
  assert.equal(withRule[0]?.get("x-request-id"), "r-9");
  // A generated id is what the rule propagates when the client sent none (or a bad one).
  const generated = await createHandler(() => ruled)(post("{ hello }", { "x-request-id": "a b" }));
  await generated.body?.cancel();
  assert.equal(withRule[1]?.get("x-request-id"), generated.headers.get(REQUEST_ID_HEADER));
});
