/**
 * Issue 39: every stream works under the production defaults. The router runs
 * with `config.production.yaml`'s settings (the fixture's production profile:
 * dev mode off, access logs written, metrics and tracing on), where the access
 * log's wrapper used to read every multipart and Connect body whole before
 * sending a byte. Real clients (a curl-like `fetch`, Apollo Client's
 * multipart subscriptions, connect-es) get each event while the stream is
 * open; clients that stop reading are dropped and their subscriptions end,
 * while a reading client beside them keeps getting every event. Every read has
 * a deadline, so a regression fails here instead of hanging.
 */
import assert from "node:assert/strict";
import { ApolloClient, gql, HttpLink, InMemoryCache } from "@apollo/client";
import { review, type SubscriptionFixture, until, withFixture } from "./_subscription_fixture.ts";

/**
 * The longest wait for an event that was published: generous for a loaded
 * machine; a buffered stream never delivers it at all.
 */
const EVENT_DEADLINE_MS = 5_000;

const FEED = "subscription { reviewAdded { id body } }";

function deadline<T>(what: string, promise: Promise<T>, ms = EVENT_DEADLINE_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A multipart subscription request, as the issue's `curl -N` sends it. */
function multipartRequest(fixture: SubscriptionFixture, signal?: AbortSignal): Promise<Response> {
  return fetch(fixture.httpUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: 'multipart/mixed;subscriptionSpec="1.0"',
    },
    body: JSON.stringify({ query: FEED }),
    ...(signal ? { signal } : {}),
  });
}

/** Reads a stream's text as it arrives; `wait(text)` resolves once the text read contains it. */
function textReader(response: Response): {
  wait(needle: string): Promise<void>;
  cancel(): Promise<void>;
} {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  return {
    async wait(needle) {
      while (!text.includes(needle)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`The stream ended before ${JSON.stringify(needle)}`);
        text += value;
      }
    },
    cancel: () => reader.cancel(),
  };
}

Deno.test("issue 39: a multipart subscription (curl -N) gets its head at once and each event while the stream is open, access logs on", async () => {
  await withFixture({}, async (fixture) => {
    const controller = new AbortController();
    const response = await deadline(
      "the response head",
      multipartRequest(fixture, controller.signal),
    );
    assert.equal(response.status, 200);
    const stream = textReader(response);
    try {
      await until(() => fixture.feed.open === 1, "the upstream subscription");
      for (const id of ["r1", "r2", "r3"]) {
        fixture.feed.publish(review(id));
        await deadline(`event ${id}`, stream.wait(`"id":"${id}"`));
      }
    } finally {
      await stream.cancel();
    }
    // The client left: its subscription ends and the upstream closes at once.
    await until(() => fixture.feed.open === 0, "the upstream to close after the client left");
    assert.equal(fixture.router.state().engine.subscriptions.active.size, 0);
  });
});

Deno.test("issue 39: Apollo Client's multipart subscriptions (HttpLink) get each event as it is published, access logs on", async () => {
  await withFixture({}, async (fixture) => {
    const client = new ApolloClient({
      link: new HttpLink({ uri: fixture.httpUrl }),
      cache: new InMemoryCache(),
    });
    const seen: string[] = [];
    const failures: unknown[] = [];
    const subscription = client.subscribe<{ reviewAdded: { id: string; body: string } }>({
      query: gql(FEED),
    }).subscribe({
      next: (result) => {
        const id = result.data?.reviewAdded?.id;
        if (id) seen.push(id);
      },
      error: (error) => failures.push(error),
    });
    try {
      await until(() => fixture.feed.open === 1, "the upstream subscription");
      for (const [i, id] of ["a1", "a2", "a3"].entries()) {
        fixture.feed.publish(review(id));
        await deadline(`Apollo Client's event ${id}`, until(() => seen.length === i + 1, id));
      }
      assert.deepEqual(seen, ["a1", "a2", "a3"]);
      assert.deepEqual(failures, []);
    } finally {
      subscription.unsubscribe();
      client.stop();
    }
    await until(() => fixture.feed.open === 0, "the upstream to close after unsubscribe");
  });
});

Deno.test("issue 39: a multipart client that stops reading is dropped; a reading one beside it gets every event", async () => {
  await withFixture({ subscriptions: { max_buffered_events: 4 } }, async (fixture) => {
    const stalled = await deadline("the stalled client's head", multipartRequest(fixture));
    const healthy = textReader(
      await deadline("the healthy client's head", multipartRequest(fixture)),
    );
    try {
      await until(() => fixture.router.state().engine.subscriptions.active.size === 2, "both");
      // Large events fill the stalled client's socket buffers, then its own bound.
      const body = "x".repeat(64_000);
      let i = 0;
      for (; i < 400 && fixture.router.state().engine.subscriptions.active.size === 2; i++) {
        fixture.feed.publish(review(`s${i}`, { body }));
        await deadline(`the healthy client's event s${i}`, healthy.wait(`"id":"s${i}"`));
      }
      assert.ok(i < 400, "the stalled client was dropped");
      await until(
        () => fixture.router.state().engine.subscriptions.active.size === 1,
        "the stalled client's subscription to end",
      );
      // The reading client still gets what comes next.
      fixture.feed.publish(review("after"));
      await deadline("the healthy client's next event", healthy.wait(`"id":"after"`));
      const rest = await deadline("the stalled client's body", stalled.text(), 20_000);
      // Dropped for its own slowness, or, on a machine so loaded that the router is behind
      // too, for the router's (issue 39: a reader is not blamed for the router's lag).
      assert.match(rest, /"code":"(SUBSCRIPTION_CLIENT_TOO_SLOW|SUBSCRIPTION_LIMIT_REACHED)"/);
    } finally {
      await healthy.cancel();
      await stalled.body?.cancel().catch(() => {});
    }
    await until(() => fixture.feed.open === 0, "the upstream to close");
  });
});
