import assert from "node:assert/strict";
import { createSubgraphClient } from "../../lib/engine/subgraph_client.ts";

/** A fetch that never answers until aborted, recording the signals it saw. */
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
