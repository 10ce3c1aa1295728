/**
 * Property test of the request edge (issue 14): whatever a client sends to
 * `/graphql`, Connect or MCP — arbitrary bytes, JSON, generated GraphQL
 * documents (hostile shapes included), any method, content type and
 * encoding — the answer has a documented status (never 500), a JSON body
 * without stack text, and comes within a bound.
 *
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { BASE, deepChain, edgeState, fragmentBomb, handlerOf } from "./_edge_fixture.ts";
import { MODERN_PROTOCOL_VERSION } from "../../lib/mcp/mod.ts";

/** Statuses each facet documents (README "Security defaults"). */
const STATUSES = {
  graphql: new Set([200, 400, 405, 406, 413, 415]),
  mcp: new Set([200, 202, 400, 404, 405, 406, 413, 415]),
  connect: new Set([200, 304, 400, 404, 405, 409, 413, 415, 429, 501, 504]),
} as const;

/** Each request must be answered within this bound (not a speed assertion: a hang guard). */
const BOUND_MS = 10_000;

const STACK_TEXT = /RangeError|Maximum call stack|\bat [^\s]+ \(|file:\/\/|\.ts:\d+:\d+/;

const LEAVES = [
  "id",
  "name",
  "username",
  "upc",
  "__typename",
  "nope",
  "id @skip(if: true)",
  "rating",
];
const OBJECTS = [
  "users",
  'user(id: "1")',
  "reviews",
  "author",
  "product",
  "products(first: 2)",
  "__schema",
  '__type(name: "User")',
  "me",
  'search(text: "x")',
];

const documents: fc.Arbitrary<string> = (() => {
  const { set } = fc.letrec<{ sel: string; set: string }>((tie) => ({
    sel: fc.oneof(
      { depthSize: "small" },
      fc.constantFrom(...LEAVES),
      fc.tuple(fc.constantFrom(...OBJECTS), tie("set")).map(([f, s]) => `${f} ${s}`),
      fc.tuple(fc.constantFrom("a", "b", "x1"), tie("sel")).map(([a, s]) => `${a}: ${s}`),
      tie("set").map((s) => `... on Query ${s}`),
      tie("set").map((s) => `... on User ${s}`),
      fc.constant("...F"),
    ),
    set: fc.array(tie("sel"), { minLength: 1, maxLength: 4 }).map((a) => `{ ${a.join(" ")} }`),
  }));
  return fc.oneof(
    fc.tuple(set, fc.option(set)).map(([op, fragment]) =>
      fragment === null ? op : `${op}\nfragment F on Query ${fragment}`
    ),
    fc.integer({ min: 1, max: 3000 }).map(deepChain),
    fc.integer({ min: 1, max: 32 }).map(fragmentBomb),
    fc.integer({ min: 1, max: 4000 }).map((n) =>
      `{ ${"... on Query { ".repeat(n)}__typename${" }".repeat(n)} }`
    ),
    fc.string(),
    fc.constantFrom(
      "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }",
      "mutation { addReview(input: {}) { id } }",
      "subscription { x }",
      "query Q($a: Int!) { user(id: $a) { id } }",
    ),
  );
})();

/** A body: a GraphQL request (generated document) or anything at all. */
const bodies: fc.Arbitrary<string | Uint8Array<ArrayBuffer>> = fc.oneof(
  fc.record({
    query: documents,
    variables: fc.option(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }))),
    operationName: fc.option(fc.constantFrom("Q", "", "Bomb")),
  }).map((r) => JSON.stringify(r)),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.string(),
  fc.uint8Array({ maxLength: 256 }).map((b) => new Uint8Array(b)),
);

const contentTypes = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/graphql-response+json",
  "application/x-www-form-urlencoded",
  null,
);

const encodings = fc.constantFrom("gzip", "br", "identity", null);

async function encode(
  body: string | Uint8Array<ArrayBuffer>,
  encoding: string | null,
): Promise<Uint8Array<ArrayBuffer> | string> {
  if (encoding !== "gzip") return body;
  const stream = new Blob([body]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

interface Sent {
  readonly method: "GET" | "POST" | "PUT";
  readonly body: string | Uint8Array<ArrayBuffer>;
  readonly contentType: string | null;
  readonly encoding: string | null;
  readonly preflight: boolean;
}

const sent: fc.Arbitrary<Sent> = fc.record({
  method: fc.constantFrom("GET", "POST", "POST", "POST", "PUT"),
  body: bodies,
  contentType: contentTypes,
  encoding: encodings,
  preflight: fc.boolean(),
});

async function requestFor(path: string, s: Sent, extra: Record<string, string> = {}) {
  const headers = new Headers(extra);
  if (s.contentType !== null) headers.set("content-type", s.contentType);
  if (s.preflight) headers.set("graphql-preflight", "1");
  if (s.method === "GET") {
    const text = typeof s.body === "string" ? s.body : new TextDecoder().decode(s.body);
    return new Request(`${BASE}${path}?query=${encodeURIComponent(text)}`, { headers });
  }
  if (s.encoding !== null) headers.set("content-encoding", s.encoding);
  return new Request(`${BASE}${path}`, {
    method: s.method,
    headers,
    body: await encode(s.body, s.encoding),
  });
}

async function check(
  handle: (request: Request) => Promise<Response>,
  request: Request,
  allowed: ReadonlySet<number>,
): Promise<void> {
  const signal = AbortSignal.timeout(BOUND_MS);
  const answered = await Promise.race([
    handle(request),
    new Promise<null>((resolve) => signal.addEventListener("abort", () => resolve(null))),
  ]);
  assert.notEqual(answered, null, `no answer within ${BOUND_MS} ms`);
  const response = answered!;
  const text = await response.text();
  assert.ok(allowed.has(response.status), `status ${response.status}: ${text.slice(0, 300)}`);
  assert.doesNotMatch(text, STACK_TEXT);
  if (text !== "") {
    const json = text.startsWith("event:") ? text.slice(text.indexOf("data: ") + 6) : text;
    JSON.parse(json);
  }
}

const state = await edgeState({}, {
  operations: [
    { path: "GetUser.graphql", text: "query GetUser($id: ID!) { user(id: $id) { id name } }" },
  ],
  answer: () => ({ data: { user: { id: "1", name: "Ada" }, users: [] } }),
});
const handle = handlerOf(state);

Deno.test("issue 14 (property): /graphql answers anything with a documented status, JSON, no stack text, within a bound", async () => {
  await fc.assert(
    fc.asyncProperty(
      sent,
      fc.constantFrom("application/json", "application/graphql-response+json", "*/*"),
      async (s, accept) => {
        await check(handle, await requestFor("/graphql", s, { accept }), STATUSES.graphql);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("issue 14 (property): MCP execute_graphql and arbitrary MCP bodies never give a 500 or stack text", async () => {
  const mcpBody = fc.oneof(
    documents.map((query) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "execute_graphql", arguments: { query } },
      })
    ),
    bodies,
  );
  await fc.assert(
    fc.asyncProperty(sent, mcpBody, async (s, body) => {
      const request = await requestFor("/mcp", { ...s, body }, {
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN_PROTOCOL_VERSION,
      });
      await check(handle, request, STATUSES.mcp);
    }),
    { numRuns: 300 },
  );
});

Deno.test("issue 14 (property): Connect answers any body, method and encoding with a Connect status, never 500", async () => {
  await fc.assert(
    fc.asyncProperty(
      sent,
      fc.constantFrom("GetUser", "Unknown"),
      fc.option(fc.constantFrom("1", "9999999999", "x", "0")),
      async (s, method, timeout) => {
        const extra: Record<string, string> = { "connect-protocol-version": "1" };
        if (timeout !== null) extra["connect-timeout-ms"] = timeout;
        const request = s.method === "GET"
          ? new Request(
            `${BASE}/service.v1.GraphService/${method}?connect=v1&encoding=json&message=${
              encodeURIComponent(typeof s.body === "string" ? s.body : "{}")
            }`,
            { headers: extra },
          )
          : await requestFor(`/service.v1.GraphService/${method}`, s, extra);
        await check(handle, request, STATUSES.connect);
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("issue 14 (property): whatever a subgraph answers, the client gets only its selection, never a 500", async () => {
  const query = "{ users { id name username reviews { id body rating } } }";
  const selected = new Set(["users", "id", "name", "username", "reviews", "body", "rating"]);
  let answer: unknown = null;
  const fuzzed = handlerOf(await edgeState({}, { answer: () => answer }));
  const value = fc.jsonValue({ maxDepth: 4 });
  const user = fc.record({
    id: value,
    name: value,
    username: value,
    reviews: fc.oneof(
      value,
      fc.array(fc.dictionary(fc.constantFrom("id", "body", "rating", "secret"), value)),
    ),
    secret: value,
  }, { requiredKeys: [] });
  const answers = fc.oneof(
    value,
    fc.record({
      data: fc.record({ users: fc.oneof(value, fc.array(user)) }, { requiredKeys: [] }),
    }),
  );
  await fc.assert(
    fc.asyncProperty(answers, async (generated) => {
      answer = generated;
      const response = await fuzzed(
        new Request(`${BASE}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query }),
        }),
      );
      const text = await response.text();
      assert.equal(response.status, 200, text);
      assert.doesNotMatch(text, STACK_TEXT);
      const body = JSON.parse(text);
      const stack: unknown[] = [body.data];
      while (stack.length > 0) {
        const node = stack.pop();
        if (Array.isArray(node)) stack.push(...node);
        else if (typeof node === "object" && node !== null) {
          for (const [key, child] of Object.entries(node)) {
            assert.ok(selected.has(key), `unselected key "${key}" reached the client: ${text}`);
            stack.push(child);
          }
        }
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("edge: a method token of 10 000 characters is quoted clipped on /graphql, MCP and Connect", async () => {
  const method = "X".repeat(10_000);
  for (const path of ["/graphql", "/mcp", "/service.v1.GraphService/GetUser"]) {
    const response = await handle(new Request(`${BASE}${path}`, { method }));
    const text = await response.text();
    assert.equal(response.status, 405, `${path}: ${text.slice(0, 200)}`);
    assert.ok(text.length < 1_000, `${path} echoes the method whole: ${text.length} bytes`);
    assert.match(text, /X{100}…/, path);
  }
});
