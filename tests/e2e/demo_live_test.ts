/**
 * The demo's live field end to end at the subgraph: `reviewAdded` on the
 * reviews subgraph, served by the real `graphql-ws` and `graphql-sse`
 * servers on the routing URL, consumed by the real `graphql-ws` and
 * `graphql-sse` clients; each event carries the entity references (product,
 * author) that the other subgraphs resolve, and a client leaving ends the
 * subscription at the subgraph.
 */
import assert from "node:assert/strict";
import { createClient as createWsClient } from "graphql-ws";
import { createClient as createSseClient } from "graphql-sse";
import { startDemoSubgraphs } from "../../demo/subgraphs/mod.ts";
import type { SubgraphStreamEvent } from "../../demo/subgraph.ts";

const SUBSCRIPTION = `subscription OnReview($upc: ID) {
  reviewAdded(productUpc: $upc) { __typename id rating product { __typename upc } author { __typename id username } }
}`;

const ADD = `mutation Add($input: AddReviewInput!) { addReview(input: $input) { id } }`;

async function addReview(url: string, productUpc: string, body: string): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      query: ADD,
      variables: { input: { productUpc, authorId: "1", body, rating: 5 } },
    }),
  });
  const json = await response.json();
  assert.equal(response.status, 200, JSON.stringify(json));
  return json.data.addReview.id;
}

interface Next {
  readonly data?: unknown;
  readonly errors?: unknown;
}

/** Collects a subscription's payloads; `until(n)` resolves once n have come. */
function collector() {
  const seen: Next[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  return {
    seen,
    push(value: Next) {
      seen.push(value);
      for (const waiter of waiters.filter((w) => seen.length >= w.n)) waiter.resolve();
    },
    until(n: number): Promise<void> {
      if (seen.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
  };
}

async function waitFor(what: string, test: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !test(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(test(), `timed out waiting for ${what}`);
}

Deno.test("demo live field: reviewAdded over graphql-ws carries product and author references; leaving ends it at the subgraph", async () => {
  const events: SubgraphStreamEvent[] = [];
  const demo = startDemoSubgraphs({ basePort: 0, onStream: (_name, event) => events.push(event) });
  const reviews = demo.subgraphs.find((s) => s.name === "reviews")!;
  const client = createWsClient({
    url: reviews.url.replace(/^http/, "ws"),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
  });
  try {
    const got = collector();
    const stop = client.subscribe({ query: SUBSCRIPTION, variables: { upc: "2" } }, {
      next: (value) => got.push(value),
      error: (error) => got.push({ errors: [String(error)] }),
      complete: () => {},
    });
    await waitFor("the subscription to start", () => events.some((e) => e.kind === "subscribe"));
    const other = await addReview(reviews.url, "1", "Not this product");
    const id = await addReview(reviews.url, "2", "Sturdy and light");
    await got.until(1);
    assert.notEqual(other, id);
    assert.deepEqual(got.seen[0], {
      data: {
        reviewAdded: {
          __typename: "Review",
          id,
          rating: 5,
          product: { __typename: "Product", upc: "2" },
          author: { __typename: "User", id: "1", username: "ada" },
        },
      },
    });
    stop();
    await waitFor("the subgraph to see the end", () => events.some((e) => e.kind === "complete"));
    assert.deepEqual(events.map((e) => [e.kind, e.transport]), [
      ["subscribe", "graphql-ws"],
      ["complete", "graphql-ws"],
    ]);
  } finally {
    await client.dispose();
    await demo.close();
  }
});

Deno.test("demo live field: reviewAdded over graphql-sse (distinct connections) streams the same events", async () => {
  const events: SubgraphStreamEvent[] = [];
  const demo = startDemoSubgraphs({ basePort: 0, onStream: (_name, event) => events.push(event) });
  const reviews = demo.subgraphs.find((s) => s.name === "reviews")!;
  const client = createSseClient({ url: reviews.url, retryAttempts: 0 });
  try {
    const got = collector();
    const stop = client.subscribe({ query: SUBSCRIPTION }, {
      next: (value) => got.push(value as Next),
      error: (error) => got.push({ errors: [String(error)] }),
      complete: () => {},
    });
    await waitFor("the subscription to start", () => events.some((e) => e.kind === "subscribe"));
    const first = await addReview(reviews.url, "1", "First");
    const second = await addReview(reviews.url, "3", "Second");
    await got.until(2);
    assert.deepEqual(
      got.seen.map((v) => (v.data as { reviewAdded: { id: string } }).reviewAdded.id),
      [first, second],
    );
    stop();
    await waitFor("the subgraph to see the end", () => events.some((e) => e.kind === "complete"));
    assert.deepEqual(events.map((e) => e.transport), ["graphql-sse", "graphql-sse"]);
  } finally {
    client.dispose();
    await demo.close();
  }
});

Deno.test("demo subgraph: a WebSocket upgrade without the graphql-transport-ws subprotocol is refused with 400", async () => {
  const demo = startDemoSubgraphs({ basePort: 0 });
  try {
    const reviews = demo.subgraphs.find((s) => s.name === "reviews")!;
    const response = await fetch(reviews.url, {
      headers: {
        upgrade: "websocket",
        connection: "Upgrade",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-version": "13",
      },
    });
    assert.equal(response.status, 400);
    assert.match(await response.text(), /graphql-transport-ws/);
  } finally {
    await demo.close();
  }
});
