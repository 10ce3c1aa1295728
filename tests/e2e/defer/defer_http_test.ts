/**
 * Issue 31: `@defer` over GraphQL over HTTP, read by Apollo Client (npm `@apollo/client`,
 * its `HttpLink` reads `multipart/mixed; deferSpec=20220824`) and by hand: the primary part
 * comes first with `hasNext: true`, the deferred fields follow in `incremental` entries; a
 * client whose `Accept` does not allow multipart gets the whole answer at once.
 */
import assert from "node:assert/strict";
import { ApolloClient, gql, HttpLink, InMemoryCache } from "@apollo/client";
import { Defer20220824Handler } from "@apollo/client/incremental";
import { createClient as createSseClient } from "graphql-sse";
import { mergeParts, readParts, root, startDeferRouter } from "./_graph.ts";
import { STREAM_DEADLINE_MS, within } from "../_deadline.ts";

const QUERY = `{ products { id name ... @defer(label: "more") { price deal reviews { body } } } }`;

const WHOLE = {
  data: {
    products: root.products.map((p) => ({
      id: p.id,
      name: p.name,
      price: p.price,
      deal: p.deal,
      reviews: p.reviews.map((r) => ({ body: r.body })),
    })),
  },
};

/** The data without the `__typename`s Apollo Client adds to the query. */
function withoutTypename(data: unknown): unknown {
  return JSON.parse(JSON.stringify(data, (k, v) => (k === "__typename" ? undefined : v)));
}

function post(url: string, query: string, accept: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept },
    body: JSON.stringify({ query }),
    // A stream that never ends fails the test (issue 39), never hangs it.
    signal: AbortSignal.timeout(STREAM_DEADLINE_MS),
  });
}

Deno.test("issue 31: multipart/mixed deferSpec=20220824: primary part first, then the deferred entries per object", async () => {
  const router = await startDeferRouter({ pricesDelayMs: 50 });
  try {
    const response = await post(
      router.url,
      QUERY,
      "multipart/mixed;deferSpec=20220824,application/json",
    );
    assert.equal(response.status, 200);
    assert.equal(
      response.headers.get("content-type"),
      'multipart/mixed; boundary="-"; deferSpec=20220824',
    );
    const parts = await readParts(response);
    assert.deepEqual(parts[0], {
      data: { products: root.products.map((p) => ({ id: p.id, name: p.name })) },
      hasNext: true,
    });
    const last = parts.at(-1)!;
    assert.equal(last.hasNext, false);
    const entries = parts.slice(1).flatMap((p) =>
      (p.incremental ?? []) as { path: unknown[]; label: string }[]
    );
    assert.deepEqual(entries.map((e) => [e.path, e.label]), [
      [["products", 0], "more"],
      [["products", 1], "more"],
      [["products", 2], "more"],
    ]);
    assert.deepEqual(mergeParts(parts), WHOLE);
  } finally {
    await router.close();
  }
});

Deno.test("issue 31: Accept without multipart/mixed: the whole answer at once (@defer ignored)", async () => {
  const router = await startDeferRouter();
  try {
    for (
      const accept of [
        "application/json",
        "application/graphql-response+json",
        "multipart/mixed;deferSpec=20220824;q=0, application/json",
      ]
    ) {
      const response = await post(router.url, QUERY, accept);
      assert.equal(response.status, 200);
      assert.match(response.headers.get("content-type") ?? "", /json/);
      assert.deepEqual(await response.json(), WHOLE);
    }
  } finally {
    await router.close();
  }
});

Deno.test("issue 31: a deferred fragment from the primary fetch is delivered with it: one part, hasNext false", async () => {
  const router = await startDeferRouter();
  try {
    const response = await post(
      router.url,
      `{ products { name ... @defer { id } } }`,
      "multipart/mixed;deferSpec=20220824",
    );
    const parts = await readParts(response);
    assert.deepEqual(parts, [{
      data: { products: root.products.map((p) => ({ name: p.name, id: p.id })) },
      hasNext: false,
    }]);
  } finally {
    await router.close();
  }
});

Deno.test("issue 31: Apollo Client (HttpLink, Defer20220824Handler) reads the deferred parts: first the primary data, then all", async () => {
  const router = await startDeferRouter({ pricesDelayMs: 100 });
  const client = new ApolloClient({
    link: new HttpLink({ uri: router.url }),
    cache: new InMemoryCache(),
    incrementalHandler: new Defer20220824Handler(),
  });
  try {
    const seen: unknown[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no complete answer: ${JSON.stringify(seen)}`)),
        5000,
      );
      const sub = client.watchQuery({ query: gql(QUERY), fetchPolicy: "no-cache" }).subscribe({
        next: (result) => {
          if (result.data !== undefined) seen.push(withoutTypename(result.data));
          if (result.dataState === "complete") {
            clearTimeout(timer);
            sub.unsubscribe();
            resolve();
          }
        },
        error: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
    });
    // The primary part alone first (no price yet), the whole answer last.
    assert.deepEqual(seen[0], { products: root.products.map((p) => ({ id: p.id, name: p.name })) });
    assert.deepEqual(seen.at(-1), WHOLE.data);
  } finally {
    client.stop();
    await router.close();
  }
});

Deno.test("issue 31: @defer over GraphQL over SSE: the graphql-sse client gets the primary part, then the deferred entries, as next events", async () => {
  const router = await startDeferRouter({ pricesDelayMs: 50 });
  const client = createSseClient({ url: router.url, retryAttempts: 0 });
  try {
    const parts: Record<string, unknown>[] = [];
    await within(
      new Promise<void>((resolve, reject) => {
        client.subscribe({ query: QUERY }, {
          next: (part) => void parts.push(part as Record<string, unknown>),
          error: reject,
          complete: resolve,
        });
      }),
      "the graphql-sse client's complete",
    );
    assert.deepEqual(parts[0], {
      data: { products: root.products.map((p) => ({ id: p.id, name: p.name })) },
      hasNext: true,
    });
    assert.ok(parts.length > 1, "deferred parts follow the primary one");
    assert.equal(parts.at(-1)!.hasNext, false);
    assert.deepEqual(mergeParts(parts as never), WHOLE);
  } finally {
    client.dispose();
    await router.close();
  }
});

Deno.test("GraphQL over SSE: the graphql-sse client gets a query's whole answer as one next event, then complete", async () => {
  const router = await startDeferRouter();
  const client = createSseClient({ url: router.url, retryAttempts: 0 });
  try {
    const results: unknown[] = [];
    await within(
      new Promise<void>((resolve, reject) => {
        client.subscribe({ query: `{ products { id name } }` }, {
          next: (result) => void results.push(result),
          error: reject,
          complete: resolve,
        });
      }),
      "the graphql-sse client's complete",
    );
    assert.deepEqual(results, [{
      data: { products: root.products.map((p) => ({ id: p.id, name: p.name })) },
    }]);
  } finally {
    client.dispose();
    await router.close();
  }
});
