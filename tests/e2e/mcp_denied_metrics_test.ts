/**
 * Issue 16 wiring: MCP 401/403 answers are counted by the gate level that
 * refused them (`gw_router_mcp_denied_total{level}`), recorded where the
 * challenge is built (`lib/mcp/respond.ts`, the 401 in `lib/mcp/handler.ts`).
 */
import assert from "node:assert/strict";
import { initialize, rpc, withMcpFixture } from "./_mcp_fixture.ts";

function sample(text: string, series: string): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith(series + " ")) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

const METRICS = { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } } };

Deno.test("issue 16: MCP 401 and 403 answers are counted by the refusing gate level", async () => {
  await withMcpFixture({ telemetry: METRICS }, async (f) => {
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
    const v = { "mcp-protocol-version": "2025-11-25" };
    assert.equal((await rpc(f, list, { token: null })).status, 401);
    assert.equal((await rpc(f, list, { token: await f.token("other") })).status, 403);
    const token = await f.token("mcp:connect mcp:call");
    const session = await initialize(f, token);
    assert.equal((await rpc(f, list, { token, session, headers: v })).status, 403);
    const call = {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "execute_operation_get_secret", arguments: {} },
    };
    assert.equal((await rpc(f, call, { token, session, headers: v })).status, 403);
    const metrics = f.router.state().telemetry?.metrics;
    assert.ok(metrics, "metrics are on");
    const text = await metrics.text();
    assert.equal(sample(text, 'gw_router_mcp_denied_total{level="token"}'), 1);
    assert.equal(sample(text, 'gw_router_mcp_denied_total{level="initialize"}'), 1);
    assert.equal(sample(text, 'gw_router_mcp_denied_total{level="method"}'), 1);
    assert.equal(sample(text, 'gw_router_mcp_denied_total{level="tool"}'), 1);
  });
});
