import assert from "node:assert/strict";
import {
  createLiveHistory,
  createRouterMetrics,
  pointBetween,
  snapshotOf,
} from "../../lib/telemetry/mod.ts";

Deno.test("issue 16: a live point is the difference of two registry snapshots, per second", async () => {
  const metrics = createRouterMetrics();
  const before = snapshotOf(await metrics.registry.getMetricsAsJSON(), 10_000);
  for (let i = 0; i < 8; i++) {
    metrics.requestStarted("POST");
    metrics.requestFinished({ method: "POST", route: "/graphql", status: 200, seconds: 0.02 });
  }
  // The page's own polls are not client traffic.
  metrics.requestStarted("GET");
  metrics.requestFinished({ method: "GET", route: "/playground", status: 200, seconds: 0.001 });
  metrics.subgraphFetch({ subgraph: "a", seconds: 0.004, status: 200, outcome: "success" });
  metrics.subgraphFetch({ subgraph: "a", seconds: 0.004, status: null, outcome: "timeout" });
  metrics.operation({
    name: null,
    type: "query",
    outcome: "graphql_error",
    errorCodes: ["SUBGRAPH_ERROR", "SUBGRAPH_ERROR"],
    clientName: null,
    clientVersion: null,
  });
  metrics.cache("plan", true);
  metrics.cache("plan", true);
  metrics.cache("plan", true);
  metrics.cache("plan", false);
  const after = snapshotOf(await metrics.registry.getMetricsAsJSON(), 12_000);
  const point = pointBetween(before, after);
  assert.equal(point.t, 12_000);
  assert.equal(point.rps, 4);
  assert.equal(point.p50, 17.5); // inside the 10–25 ms bucket
  assert.deepEqual(point.errors, { SUBGRAPH_ERROR: 2 });
  // 2 observations in the 0–5 ms bucket: the median is halfway into it.
  assert.deepEqual(point.subgraphs.a, { rps: 1, p50: 2.5, errorRate: 0.5 });
  assert.deepEqual(point.cache, { parse: null, plan: 0.75 });
});

Deno.test("issue 16: the live history keeps a bounded number of snapshots and skips samples too close together", async () => {
  const metrics = createRouterMetrics();
  let now = 0;
  const history = createLiveHistory({
    read: () => metrics.registry.getMetricsAsJSON(),
    now: () => now,
    capacity: 3,
  });
  for (let i = 0; i < 6; i++) {
    now += 2_000;
    await history.sample();
    await history.sample(); // same instant: skipped
  }
  assert.deepEqual(history.points().map((p) => p.t), [10_000, 12_000]);
});
