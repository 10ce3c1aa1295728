/**
 * Issue 15: the request a facet gets no longer carries the admitted signal
 * (a dependent signal per request cost WeakRefs and a FinalizationRegistry
 * cell); each facet follows it through `signalOf`. A client that goes away
 * cancels the subgraph fetch of a GraphQL request, a Connect call and an MCP
 * tool call alike.
 */
import assert from "node:assert/strict";
import { BASE, edgeState, graphqlPost, handlerOf, mcpExecute } from "./_edge_fixture.ts";

const OPERATION = {
  path: "GetUser.graphql",
  text: "query GetUser($id: ID!) { user(id: $id) { id } }",
};

const REQUESTS: Record<string, (signal: AbortSignal) => Request> = {
  graphql: (signal) => new Request(graphqlPost({ query: "{ user(id: 1) { id } }" }), { signal }),
  connect: (signal) =>
    new Request(`${BASE}/service.v1.GraphService/GetUser`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: '{"id":"1"}',
      signal,
    }),
  mcp: (signal) => new Request(mcpExecute("{ user(id: 1) { id } }"), { signal }),
};

for (const [facet, build] of Object.entries(REQUESTS)) {
  Deno.test(`issue 15: a client that goes away cancels the subgraph fetch (${facet})`, async () => {
    const signals: AbortSignal[] = [];
    const fetched = Promise.withResolvers<void>();
    const state = await edgeState({}, {
      operations: [OPERATION],
      signals,
      // Never answers unless cancelled.
      answer: () => {
        fetched.resolve();
        return new Promise((_, reject) => signals.at(-1)!.addEventListener("abort", reject));
      },
    });
    const client = new AbortController();
    const pending = handlerOf(state)(build(client.signal));
    await fetched.promise;
    assert.equal(signals.length, 1);
    assert.equal(signals[0]!.aborted, false);
    client.abort();
    const response = await pending;
    await response.body?.cancel();
    assert.equal(signals[0]!.aborted, true, "the subgraph fetch was cancelled");
    assert.equal(state.engine.admission.active, 0);
  });
}
