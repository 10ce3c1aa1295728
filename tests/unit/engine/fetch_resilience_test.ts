/**
 * Issue 15: subgraph retries (`retry.ts`, `resilient_fetch.ts`) and the
 * circuit breaker (`circuit_breaker.ts`), with fake time: nothing waits.
 */
import assert from "node:assert/strict";
import { createCircuitBreaker } from "../../../lib/engine/fetch/circuit_breaker.ts";
import {
  type Resilience,
  resilientFetch,
  SubgraphTimeout,
} from "../../../lib/engine/fetch/resilient_fetch.ts";
import { retryDelay } from "../../../lib/engine/fetch/retry.ts";
import { createSubgraphClient } from "../../../lib/engine/fetch/subgraph_client.ts";

const RETRY = { enabled: true, maxAttempts: 3, intervalMs: 100, maxDurationMs: 1_000 };
/** The breaker policy of these tests (a test changes what it needs). */
const BREAKER = {
  enabled: true,
  errorThresholdPercentage: 50,
  requestThreshold: 4,
  sleepWindowMs: 5_000,
  halfOpenAttempts: 2,
  rollingDurationMs: 10_000,
};

/** A send answering the given statuses in turn ("error" = connection error). */
function scripted(outcomes: (number | "error")[], headers: HeadersInit = {}) {
  let sent = 0;
  const send = () => {
    const outcome = outcomes[sent++] ?? 200;
    return outcome === "error"
      ? Promise.reject(new TypeError("connection refused"))
      : Promise.resolve(new Response(null, { status: outcome, headers }));
  };
  return { send, sent: () => sent };
}

function run(
  send: () => Promise<Response>,
  resilience: Resilience,
  extra: { idempotent?: boolean; signal?: AbortSignal } = {},
) {
  const slept: number[] = [];
  const result = resilientFetch(send, {
    subgraph: "products",
    resilience,
    idempotent: extra.idempotent ?? true,
    signal: extra.signal ?? new AbortController().signal,
    sleep: (ms) => {
      slept.push(ms);
      return Promise.resolve();
    },
    random: () => 1,
    nowMs: () => 0,
  });
  return { result, slept };
}

Deno.test("issue 15: a query is retried after connection errors and 502/503/504, with capped exponential back-off", async () => {
  const { send, sent } = scripted(["error", 502, 503, 200]);
  const { result, slept } = run(send, { retry: RETRY, breaker: null });
  assert.equal((await result).status, 200);
  assert.equal(sent(), 4);
  assert.deepEqual(slept, [100, 200, 400]);
  // Attempts run out: the last answer stands.
  const out = scripted([503, 503, 503, 503, 503]);
  const exhausted = run(out.send, { retry: RETRY, breaker: null });
  assert.equal((await exhausted.result).status, 503);
  assert.equal(out.sent(), 4, "the first attempt + max_attempts retries");
  assert.equal(
    retryDelay({ ...RETRY, maxAttempts: 10 }, {
      attempts: 8,
      outcome: { kind: "connection_error" },
      random: () => 1,
    }),
    1_000,
    "capped at max_duration",
  );
});

Deno.test("issue 15: a mutation is never retried; a 400 or 500 is never retried", async () => {
  for (
    const [outcomes, idempotent] of [[[503], false], [["error"], false], [[400], true], [
      [500],
      true,
    ]] as const
  ) {
    const { send, sent } = scripted([...outcomes]);
    const { result } = run(send, { retry: RETRY, breaker: null }, { idempotent });
    if (outcomes[0] === "error") await assert.rejects(result, /connection refused/);
    else assert.equal((await result).status, outcomes[0]);
    assert.equal(sent(), 1, `${outcomes[0]} idempotent=${idempotent}`);
  }
});

Deno.test("issue 15: a 429 is retried after its Retry-After, and not without one", async () => {
  const told = scripted([429, 200], { "retry-after": "1" });
  const { result, slept } = run(told.send, { retry: RETRY, breaker: null });
  assert.equal((await result).status, 200);
  assert.deepEqual(slept, [1_000]);
  const untold = scripted([429, 200]);
  assert.equal((await run(untold.send, { retry: RETRY, breaker: null }).result).status, 429);
  assert.equal(untold.sent(), 1);
});

Deno.test("issue 15: the fetch's signal (the subgraph timeout) ends retries, back-off included", async () => {
  const controller = new AbortController();
  const { send, sent } = scripted([503, 503, 503]);
  const result = resilientFetch(send, {
    subgraph: "products",
    resilience: { retry: RETRY, breaker: null },
    idempotent: true,
    signal: controller.signal,
    sleep: (_ms, signal) =>
      new Promise((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener("abort", () => reject(signal.reason));
      }),
  });
  await Promise.resolve();
  controller.abort(new DOMException("The subgraph request timed out", "TimeoutError"));
  await assert.rejects(result, /timed out/);
  assert.equal(sent(), 1);
});

Deno.test("issue 15: the circuit breaker opens on the error rate, fails fast, half-opens and closes or reopens", async () => {
  let now = 0;
  const policy = { ...BREAKER };
  const breaker = createCircuitBreaker(policy, { now: () => now });
  const noRetry = { ...RETRY, enabled: false };
  const { send, sent } = scripted([200, 500, 200, 500, 200, 200, 500, 200, 200]);
  const fetchOnce = () => run(send, { retry: noRetry, breaker }).result;
  for (let i = 0; i < 3; i++) await fetchOnce();
  assert.equal(breaker.state, "closed", "below request_threshold");
  await fetchOnce(); // 2 of 4 failed: 50 %
  assert.equal(breaker.state, "open");
  await assert.rejects(fetchOnce(), { code: "SUBGRAPH_CIRCUIT_OPEN" });
  assert.equal(sent(), 4, "an open breaker sends nothing");
  now = 5_000;
  assert.equal((await fetchOnce()).status, 200, "the first probe");
  assert.equal(breaker.state, "half_open");
  assert.equal((await fetchOnce()).status, 200, "the second probe");
  assert.equal(breaker.state, "closed");
  // Old failures left the window: closed stays closed below the threshold.
  now = 20_000;
  assert.equal((await fetchOnce()).status, 500);
  assert.equal(breaker.state, "closed");
  // A failed probe reopens.
  const probe = createCircuitBreaker({ ...policy, requestThreshold: 1 }, { now: () => now });
  probe.record(false);
  now += 5_000;
  assert.equal(probe.allow(), true);
  probe.record(false);
  assert.equal(probe.state, "open");
  assert.equal(probe.allow(), false);
});

/** A fetch through `breaker` whose subgraph never answers, ended by an abort with `reason`. */
async function hangUntilAborted(
  breaker: ReturnType<typeof createCircuitBreaker>,
  reason: unknown,
): Promise<void> {
  const controller = new AbortController();
  const result = run(
    () =>
      new Promise<Response>((_, reject) =>
        controller.signal.addEventListener("abort", () => reject(controller.signal.reason))
      ),
    { retry: { ...RETRY, enabled: false }, breaker },
    { signal: controller.signal },
  ).result;
  controller.abort(reason);
  await assert.rejects(result);
}

Deno.test("a half-open probe that never reports (the deadline or the client ended it) does not keep the breaker open for good", async () => {
  let now = 0;
  const policy = { ...BREAKER, requestThreshold: 1, halfOpenAttempts: 1 };
  const breaker = createCircuitBreaker(policy, { now: () => now });
  const noRetry = { ...RETRY, enabled: false };
  breaker.record(false);
  assert.equal(breaker.state, "open");
  now = 5_000;
  // The probe hangs until its request is aborted: it reports nothing.
  await hangUntilAborted(breaker, new DOMException("gone", "AbortError"));
  assert.equal(breaker.allow(), false, "within the sleep window: still refused");
  // The subgraph is back: after another sleep window a new probe is let through.
  now = 10_000;
  const { send } = scripted([200]);
  assert.equal((await run(send, { retry: noRetry, breaker }).result).status, 200);
  assert.equal(breaker.state, "closed");
});

Deno.test("a subgraph that never answers (each fetch ended by its deadline) opens the breaker; a client going away counts for nothing", async () => {
  const policy = { ...BREAKER, requestThreshold: 2, halfOpenAttempts: 1 };
  const timedOut = createCircuitBreaker(policy, { now: () => 0 });
  for (let i = 0; i < 2; i++) {
    await hangUntilAborted(timedOut, new SubgraphTimeout());
  }
  assert.equal(timedOut.state, "open");
  // The client gone, or the request's own deadline (it may have spent it elsewhere).
  const gone = createCircuitBreaker(policy, { now: () => 0 });
  await hangUntilAborted(gone, new DOMException("gone", "AbortError"));
  await hangUntilAborted(
    gone,
    new DOMException("The request took longer than 1000 ms", "TimeoutError"),
  );
  assert.equal(gone.state, "closed");
});

Deno.test("a 200 whose body breaks off is a failure for the breaker (a subgraph resetting every answer mid-body opens it)", async () => {
  const policy = { ...BREAKER, requestThreshold: 3, halfOpenAttempts: 1 };
  const breaker = createCircuitBreaker(policy, { now: () => 0 });
  let sent = 0;
  const client = createSubgraphClient({
    subgraphs: new Map([["a", { name: "a", url: "http://a.test/graphql", enumValue: "A" }]]),
    propagators: new Map(),
    singleFlight: false,
    timeoutMs: 1_000,
    resilience: new Map([["a", { retry: { ...RETRY, enabled: false }, breaker }]]),
    fetch: () => {
      sent++;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"data":{"hel'));
          controller.error(new TypeError("connection reset"));
        },
      });
      return Promise.resolve(new Response(body, { status: 200 }));
    },
  });
  for (let i = 0; i < 3; i++) {
    await assert.rejects(client.send("a", "{}", {}), { code: "SUBGRAPH_ERROR" });
  }
  assert.equal(breaker.state, "open");
  await assert.rejects(client.send("a", "{}", {}), { code: "SUBGRAPH_CIRCUIT_OPEN" });
  assert.equal(sent, 3);
  // A body read whole is the success.
  const healthy = createCircuitBreaker(policy, { now: () => 0 });
  const ok = createSubgraphClient({
    subgraphs: new Map([["a", { name: "a", url: "http://a.test/graphql", enumValue: "A" }]]),
    propagators: new Map(),
    singleFlight: false,
    timeoutMs: 1_000,
    resilience: new Map([["a", { retry: { ...RETRY, enabled: false }, breaker: healthy }]]),
    fetch: () => Promise.resolve(Response.json({ data: {} })),
  });
  for (let i = 0; i < 3; i++) assert.equal((await ok.send("a", "{}", {})).status, 200);
  assert.equal(healthy.state, "closed");
});
