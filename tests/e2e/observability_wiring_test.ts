/**
 * Issue 16 wiring, through the router's own metrics listener: the live
 * sources `startRouter` passes (the caches in bytes, the in-flight memory
 * budget) reach the exposition.
 */
import assert from "node:assert/strict";
import { graphql, startObservabilityFixture } from "./_observability_fixture.ts";

function sample(text: string, series: string): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith(series + " ")) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

Deno.test("issue 16: the router exports its caches in bytes and its in-flight memory budget", async () => {
  const fixture = await startObservabilityFixture();
  try {
    const answered = await graphql(fixture, { query: "{ hello }" });
    assert.equal(answered.status, 200);
    const text = await (await fetch(fixture.metricsUrl)).text();
    const state = fixture.router.state();
    const parse = sample(text, 'gw_router_cache_bytes{cache="parse"}');
    assert.ok(parse !== undefined && parse > 0, `parse cache bytes: ${parse}`);
    assert.equal(parse, state.engine.prepared.bytes);
    assert.equal(sample(text, 'gw_router_cache_bytes{cache="plan"}'), state.engine.plans.bytes);
    // The budget's default (64 MB), read from the state; nothing in flight at scrape time.
    assert.equal(sample(text, "gw_router_in_flight_bytes_limit"), 64_000_000);
    assert.equal(sample(text, "gw_router_in_flight_bytes"), 0);
    assert.equal(sample(text, "gw_router_in_flight_bytes_waiting_reads"), 0);
  } finally {
    await fixture.close();
  }
});
