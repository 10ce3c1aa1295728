import assert from "node:assert/strict";
import { createSubgraphClient } from "../../../lib/engine/fetch/subgraph_client.ts";
import type { HeaderSink } from "../../../lib/engine/fetch/headers.ts";

/** A fetch that never answers until aborted, recording the signals it saw. */
/** A client of one subgraph "a" whose every fetch gets `answer()`. */
function clientAnswering(answer: () => Response) {
  return createSubgraphClient({
    subgraphs: new Map([["a", { name: "a", url: "http://a.test/graphql", enumValue: "A" }]]),
    propagators: new Map(),
    fetch: () => Promise.resolve(answer()),
    singleFlight: true,
    timeoutMs: 60_000,
  });
}

function hangingClient() {
  const signals: AbortSignal[] = [];
  const client = createSubgraphClient({
    subgraphs: new Map([["a", { name: "a", url: "http://a.test/graphql", enumValue: "A" }]]),
    propagators: new Map(),
    fetch: (request) => {
      signals.push(request.signal);
      return new Promise((_, reject) => {
        request.signal.addEventListener("abort", () => reject(request.signal.reason));
      });
    },
    singleFlight: true,
    timeoutMs: 60_000,
  });
  return { client, signals };
}

Deno.test("single flight: a shared fetch keeps running while one caller is still waiting", async () => {
  const { client, signals } = hangingClient();
  const first = new AbortController();
  const second = new AbortController();
  const a = client.send("a", "{}", { signal: first.signal });
  const b = client.send("a", "{}", { signal: second.signal });
  assert.equal(signals.length, 1);
  first.abort(new Error("first gone"));
  await assert.rejects(a, /first gone/);
  assert.equal(signals[0]?.aborted, false);
  second.abort(new Error("second gone"));
  await assert.rejects(b, /second gone/);
  assert.equal(signals[0]?.aborted, true);
});

Deno.test("single flight: after every caller aborted, a new identical request starts a new fetch", async () => {
  const { client, signals } = hangingClient();
  const only = new AbortController();
  const a = client.send("a", "{}", { signal: only.signal });
  only.abort(new Error("gone"));
  await assert.rejects(a, /gone/);
  const again = new AbortController();
  const b = client.send("a", "{}", { signal: again.signal });
  assert.equal(signals.length, 2);
  assert.equal(signals[1]?.aborted, false);
  again.abort(new Error("done"));
  await assert.rejects(b, /done/);
});

Deno.test("issue 15: a gzip answer is capped after decompression: its Content-Length is not trusted", async () => {
  // What Deno's fetch hands over for `Content-Encoding: gzip`: the inflated
  // body under the compressed length.
  const inflated = JSON.stringify({ data: { a: "x".repeat(5_000) } });
  const client = createSubgraphClient({
    subgraphs: new Map([["a", { name: "a", url: "http://a.test/graphql", enumValue: "A" }]]),
    propagators: new Map(),
    fetch: () =>
      Promise.resolve(
        new Response(inflated, {
          headers: { "content-encoding": "gzip", "content-length": "60" },
        }),
      ),
    singleFlight: false,
    timeoutMs: 60_000,
    maxResponseBytes: 1_000,
  });
  await assert.rejects(client.send("a", "{}", {}), {
    code: "SUBGRAPH_ERROR",
    message: /answered more than 1000 bytes \(engine\.max_subgraph_response_bytes\)/,
  });
});

Deno.test("issue 15: subgraph answer bytes are charged to the operation's budget ticket as they stream", async () => {
  const { createMemoryBudget } = await import("../../../lib/engine/admission/memory_budget.ts");
  const budget = createMemoryBudget({
    maxBytes: 0,
    maxTicketBytes: 100,
    tooLarge: (limit) => new RangeError(`over ${limit}`),
  });
  const client = createSubgraphClient({
    subgraphs: new Map([["a", { name: "a", url: "http://a.test/graphql", enumValue: "A" }]]),
    propagators: new Map(),
    fetch: (request) => request.text().then((n) => new Response("x".repeat(Number(n)))),
    singleFlight: true,
    timeoutMs: 60_000,
    budget,
  });
  const ticket = budget.open();
  await client.send("a", "60", { ticket });
  assert.equal(ticket.bytes, 60);
  assert.equal(budget.used, 60);
  await assert.rejects(client.send("a", "50", { ticket }), /over 100/);
  assert.equal(ticket.exceeded, true);
  ticket.close();
  assert.equal(budget.used, 0);
});

Deno.test("a subgraph answer that is not valid UTF-8 is a SUBGRAPH_ERROR, never data with U+FFFD in it", async () => {
  // `"name":"<0xFF 0xFE>"`: declared (Content-Length) and streamed in two chunks.
  const head = new TextEncoder().encode('{"data":{"name":"');
  const tail = new TextEncoder().encode('"}}');
  const bad = new Uint8Array([...head, 0xff, 0xfe, ...tail]);
  const streamed = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bad.slice(0, head.length + 1));
        controller.enqueue(bad.slice(head.length + 1));
        controller.close();
      },
    });
  const declared = () => new Response(bad, { headers: { "content-length": String(bad.length) } });
  for (const answer of [declared, () => new Response(streamed())]) {
    const client = clientAnswering(answer);
    await assert.rejects(
      client.send("a", "{}", {}),
      (error: Error & { code?: string }) =>
        error.code === "SUBGRAPH_ERROR" &&
        error.message === 'The subgraph "a" answered a body that is not valid UTF-8',
    );
  }
});

Deno.test('a repeated Content-Length ("5000, 5000") is not trusted: the body is counted, the limit and the budget hold', async () => {
  const { createMemoryBudget } = await import("../../../lib/engine/admission/memory_budget.ts");
  const budget = createMemoryBudget({
    maxBytes: 1_000_000,
    maxTicketBytes: 1_000_000,
    tooLarge: (limit) => new RangeError(`over ${limit}`),
  });
  // What Deno's fetch hands over for two identical Content-Length headers.
  const answer = (body: string) =>
    new Response(body, { headers: { "content-length": `${body.length}, ${body.length}` } });
  const client = createSubgraphClient({
    subgraphs: new Map([["a", { name: "a", url: "http://a.test/graphql", enumValue: "A" }]]),
    propagators: new Map(),
    fetch: (request) => request.text().then((n) => answer("x".repeat(Number(n)))),
    singleFlight: false,
    timeoutMs: 60_000,
    maxResponseBytes: 1_000,
    budget,
  });
  const ticket = budget.open();
  await assert.rejects(client.send("a", "5000", { ticket }), {
    code: "SUBGRAPH_ERROR",
    message: /answered more than 1000 bytes \(engine\.max_subgraph_response_bytes\)/,
  });
  assert.equal((await client.send("a", "60", { ticket })).body.length, 60);
  assert.ok(Number.isFinite(budget.used), "the budget's count stays a number");
  ticket.close();
  assert.equal(budget.used, 0);
});

Deno.test("a body that breaks off after the status is a SUBGRAPH_ERROR saying so, not 'Cannot reach' (SUBGRAPH_UNREACHABLE)", async () => {
  const head = new TextEncoder().encode('{"data":{"na');
  const broken = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head);
        queueMicrotask(() => controller.error(new TypeError("connection reset by peer")));
      },
    });
  const answers = [
    () => new Response(broken()),
    () => new Response(broken(), { headers: { "content-length": "100" } }),
  ];
  for (const answer of answers) {
    const client = clientAnswering(answer);
    await assert.rejects(
      client.send("a", "{}", {}),
      (error: Error & { code?: string }) =>
        error.code === "SUBGRAPH_ERROR" &&
        error.message ===
          'The subgraph "a" answered HTTP 200, but its body broke off or could not be decoded',
    );
  }
});

Deno.test("issue 33: a request's forwarded headers are worked out once per subgraph, every fetch carries them", async () => {
  const seen: string[] = [];
  let propagations = 0;
  const client = createSubgraphClient({
    subgraphs: new Map([
      ["a", { name: "a", url: "http://a.test/graphql", enumValue: "A" }],
      ["b", { name: "b", url: "http://b.test/graphql", enumValue: "B" }],
    ]),
    propagators: new Map(
      ["a", "b"].map((name) => [name, (client: Headers | undefined, out: HeaderSink) => {
        propagations++;
        out.set("authorization", `${client?.get("authorization")} for ${name}`);
      }]),
    ),
    fetch: (request) => {
      seen.push(
        `${new URL(request.url).host} ${request.headers.get("authorization")} ${
          request.headers.get("content-type")
        }`,
      );
      return Promise.resolve(Response.json({ data: {} }));
    },
    singleFlight: true,
    timeoutMs: 60_000,
  });
  const headers = new Headers({ authorization: "Bearer one" });
  const forwarded = new Map();
  for (const [subgraph, body] of [["a", "1"], ["b", "1"], ["a", "2"], ["b", "2"], ["a", "3"]]) {
    await client.send(subgraph!, body!, { headers, forwarded });
  }
  assert.equal(propagations, 2);
  assert.deepEqual(seen, [
    "a.test Bearer one for a application/json",
    "b.test Bearer one for b application/json",
    "a.test Bearer one for a application/json",
    "b.test Bearer one for b application/json",
    "a.test Bearer one for a application/json",
  ]);
  // Another request (another memo) gets its own headers, and no memo: one propagation per fetch.
  await client.send("a", "1", {
    headers: new Headers({ authorization: "Bearer two" }),
    forwarded: new Map(),
  });
  await client.send("a", "1", { headers: new Headers({ authorization: "Bearer three" }) });
  await client.send("a", "1", { headers: new Headers({ authorization: "Bearer three" }) });
  assert.equal(propagations, 5);
  assert.deepEqual(seen.slice(5), [
    "a.test Bearer two for a application/json",
    "a.test Bearer three for a application/json",
    "a.test Bearer three for a application/json",
  ]);
});
