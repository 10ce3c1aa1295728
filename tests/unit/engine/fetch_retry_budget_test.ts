import assert from "node:assert/strict";
import { createRetryBudget } from "../../../lib/engine/fetch/retry_budget.ts";
import { resilientFetch } from "../../../lib/engine/fetch/resilient_fetch.ts";
import { RouterError } from "../../../lib/errors.ts";

Deno.test("issue 34: the retry budget allows min_per_sec × ttl retries plus retry_percent of the fetches over ttl", () => {
  let now = 0;
  const budget = createRetryBudget({ ttlMs: 10_000, minPerSec: 1, retryPercent: 0.2 }, {
    now: () => now,
  });
  for (let i = 0; i < 100; i++) budget.deposit();
  let granted = 0;
  while (budget.withdraw()) granted++;
  assert.equal(granted, 10 + 20, "reserve 1/s × 10 s, and 100 fetches × 20 %");
  // The withdrawals are forgotten with the deposits: after ttl, the reserve is back.
  now = 10_001;
  granted = 0;
  while (budget.withdraw()) granted++;
  assert.equal(granted, 10);
});

Deno.test("issue 34: a deposit counts for ttl only, slot by slot", () => {
  let now = 0;
  const budget = createRetryBudget({ ttlMs: 1_000, minPerSec: 0, retryPercent: 0.5 }, {
    now: () => now,
  });
  budget.deposit();
  now = 500;
  budget.deposit();
  now = 1_050; // the first deposit's slot has expired, the second's has not
  budget.deposit();
  assert.equal(budget.withdraw(), true, "two live deposits at 50 %: one retry");
  assert.equal(budget.withdraw(), false);
});

Deno.test("issue 34: a spent budget leaves the last outcome standing and says so", async () => {
  let sent = 0;
  let exhausted = 0;
  const budget = createRetryBudget({ ttlMs: 1_000, minPerSec: 0, retryPercent: 0.2 }, {
    now: () => 0,
  });
  const response = await resilientFetch(() => {
    sent++;
    return Promise.resolve(new Response(null, { status: 503 }));
  }, {
    subgraph: "a",
    resilience: {
      retry: { enabled: true, maxAttempts: 5, intervalMs: 1, maxDurationMs: 1 },
      breaker: null,
      budget,
    },
    idempotent: true,
    signal: new AbortController().signal,
    sleep: () => Promise.resolve(),
    onRetryBudgetExhausted: () => exhausted++,
  });
  assert.equal(response.status, 503);
  assert.equal(sent, 1, "one fetch earns a fifth of a retry: none is sent");
  assert.equal(exhausted, 1);
});

Deno.test("issue 34: an answer that broke HTTP (SUBGRAPH_ERROR) is not retried; a connection that closed before one is", async () => {
  for (const [code, expected] of [["SUBGRAPH_ERROR", 1], ["SUBGRAPH_UNREACHABLE", 3]] as const) {
    let sent = 0;
    await assert.rejects(resilientFetch(() => {
      sent++;
      return Promise.reject(new RouterError(code, "x"));
    }, {
      subgraph: "a",
      resilience: {
        retry: { enabled: true, maxAttempts: 2, intervalMs: 1, maxDurationMs: 1 },
        breaker: null,
      },
      idempotent: true,
      signal: new AbortController().signal,
      sleep: () => Promise.resolve(),
    }));
    assert.equal(sent, expected, code);
  }
});
