/**
 * Issue 43: how a batch's items run (lib/http/batch.ts): on the batch's signal
 * (one deadline), with their own text as body, `Accept` narrowed to the batch's
 * media type, concurrently, answered in order.
 */
import assert from "node:assert/strict";
import { handleBatch, splitBatch } from "../../lib/http/batch.ts";
import { signalOf } from "../../lib/cancellation.ts";
import { readBodyOf, requestIdOf, withContext } from "../../lib/request/context.ts";

const BATCHING = { enabled: true, mode: "batch_http_link", maximum_size: 10 } as const;

Deno.test("issue 43: a batch's items share its signal and id, each with its own body, answered in order", async () => {
  const text = '[{"query":"{ a }"}, {"query":"{ b }","variables":{"n":12345678901234567890}}]';
  const request = new Request("http://r.test/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream, */*" },
    body: text,
  });
  await request.bytes();
  const deadline = new AbortController();
  withContext(request, {
    body: new TextEncoder().encode(text),
    requestId: "batch-1",
    signal: deadline.signal,
  });
  const seen: { body: string; signal: AbortSignal; id: string | null; accept: string | null }[] =
    [];
  let running = 0;
  let most = 0;
  const response = await handleBatch(request, {
    config: { batching: BATCHING },
    maxResponseBytes: Infinity,
  }, {
    text,
    size: 2,
    mediaType: "application/json",
    single: async (one) => {
      running++;
      most = Math.max(most, running);
      const body = new TextDecoder().decode(readBodyOf(one));
      seen.push({
        body,
        signal: signalOf(one),
        id: requestIdOf(one),
        accept: one.headers.get("accept"),
      });
      // The first item answers last: the array keeps the items' order.
      await new Promise((resolve) => setTimeout(resolve, body.includes("{ a }") ? 20 : 0));
      running--;
      return Response.json({ data: { body } });
    },
  });
  assert.equal(response.status, 200);
  assert.equal(most, 2, "the items ran at once");
  assert.deepEqual(await response.json(), [
    { data: { body: '{"query":"{ a }"}' } },
    { data: { body: '{"query":"{ b }","variables":{"n":12345678901234567890}}' } },
  ]);
  for (const item of seen) {
    assert.equal(item.signal, deadline.signal, "one deadline for the batch");
    assert.equal(item.id, "batch-1");
    assert.equal(item.accept, "application/json", "no streams inside a batch");
  }
});

Deno.test("issue 43: a batch's answer is held to engine.max_response_bytes as a whole", async () => {
  const text = '[{"query":"{ a }"},{"query":"{ a }"}]';
  const request = new Request("http://r.test/graphql", { method: "POST" });
  const response = await handleBatch(request, {
    config: { batching: BATCHING },
    maxResponseBytes: 30,
  }, {
    text,
    size: 2,
    mediaType: "application/json",
    single: () => Promise.resolve(Response.json({ data: { a: "0123456789" } })),
  });
  assert.equal(response.status, 502);
  assert.equal((await response.json()).errors[0].extensions.code, "RESPONSE_TOO_LARGE");
});

Deno.test("issue 43: splitBatch keeps brackets, braces and commas inside strings", () => {
  const items = [{ query: '{ a(s: "[{,}]\\\\") }' }, {
    query: "{ b }",
    variables: { x: [1, { y: "]" }] },
  }];
  assert.deepEqual(splitBatch(JSON.stringify(items)).map((t) => JSON.parse(t)), items);
});

Deno.test("issue 43: a batch is cacheable only when each item is (the most restrictive Cache-Control)", async () => {
  const text = '[{"query":"{ a }"},{"query":"{ b }"}]';
  const batch = (controls: readonly (string | null)[]) =>
    handleBatch(new Request("http://r.test/graphql", { method: "POST" }), {
      config: { batching: BATCHING },
      maxResponseBytes: Infinity,
    }, {
      text,
      size: 2,
      mediaType: "application/json",
      single: (one) => {
        const control = controls[readBodyOf(one)?.includes(0x61) ? 0 : 1] ?? null;
        return Promise.resolve(
          Response.json(
            { data: {} },
            control === null ? {} : { headers: { "cache-control": control } },
          ),
        );
      },
    });
  const both = await batch(["public, max-age=60", "public, max-age=30"]);
  assert.equal(both.headers.get("cache-control"), "public, max-age=30");
  await both.body?.cancel();
  // The second item's answer (an error, a user's data) says nothing: the first's policy is not the batch's.
  const one = await batch(["public, max-age=60", null]);
  assert.equal(one.headers.get("cache-control"), null);
  await one.body?.cancel();
});
