/**
 * Issue 41: demand control on subscriptions — the estimate (the primary stream's operation plus
 * each event's entity fetches) refused over `max` before the upstream is opened, and each event's
 * actual cost measured (`extensions.cost`), with the real `graphql-sse` client against the
 * subscription fixture's federation subgraphs.
 */
import assert from "node:assert/strict";
import { createClient as createSseClient } from "graphql-sse";
import { review, until, withFixture } from "./_subscription_fixture.ts";

// Primary: reviewAdded (1) + product (1) in the reviews subgraph; per event: products'
// `_entities` sized by list_size 10 × Product (1). Estimate 12.
const FEED = "subscription { reviewAdded { id product { name } } }";

type Result = {
  data?: unknown;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  extensions?: Record<string, unknown>;
};

function subscribeSse(url: string) {
  const client = createSseClient({ url, retryAttempts: 0 });
  const results: Result[] = [];
  const failures: unknown[] = [];
  const unsubscribe = client.subscribe({ query: FEED }, {
    next: (value: unknown) => void results.push(value as Result),
    error: (error) => void failures.push(error),
    complete: () => {},
  });
  return { results, failures, close: () => (unsubscribe(), client.dispose()) };
}

const demandControl = (max: number) => ({
  demand_control: {
    enabled: true,
    mode: "enforce",
    strategy: { static_estimated: { list_size: 10, max } },
    expose_in_extensions: true,
  },
});

Deno.test("issue 41: a subscription at exactly max runs; each event carries its actual cost", async () => {
  await withFixture({ config: demandControl(12) }, async (fixture) => {
    const sub = subscribeSse(fixture.httpUrl);
    try {
      await until(() => fixture.feed.open === 1, "the upstream");
      fixture.feed.publish(review("r1"));
      fixture.feed.publish(review("r2"));
      await until(() => sub.results.length === 2, "two events");
      for (const result of sub.results) {
        assert.deepEqual(result.extensions?.cost, {
          estimated: 12,
          actual: 2,
          max: 12,
          result: "COST_OK",
          strategy: "static_estimated",
        });
      }
      assert.deepEqual(sub.results[0]?.data, {
        reviewAdded: { id: "r1", product: { name: "Table" } },
      });
    } finally {
      sub.close();
    }
  });
});

Deno.test("issue 41: a subscription over max is refused before the upstream opens", async () => {
  await withFixture({ config: demandControl(11) }, async (fixture) => {
    const response = await fetch(fixture.httpUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query: FEED }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    assert.match(text, /COST_ESTIMATED_TOO_EXPENSIVE/);
    assert.match(text, /estimated cost 12 is above the maximum 11/);
    assert.equal(fixture.feed.opened, 0);
  });
});
