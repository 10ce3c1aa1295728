/**
 * One caller cannot take every server-to-client stream of a replica: streams
 * (GET and `subscriptions/listen`) are bounded per token subject as well as
 * per replica, so another user still gets one (429 with Retry-After for the
 * caller past its share).
 */
import assert from "node:assert/strict";
import { initialize, type McpFixture, openGetStream, withMcpFixture } from "./_mcp_fixture.ts";
import { within } from "./_deadline.ts";

const ALL = "mcp:connect mcp:list mcp:call";

function listen(f: McpFixture, token: string, id: number): Promise<Response> {
  return fetch(f.mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: {
        notifications: { toolsListChanged: true },
        _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
      },
    }),
  });
}

Deno.test("MCP streams: one subject holds at most 16 streams (listen and GET together); another subject still opens one", async () => {
  await withMcpFixture({}, async (f) => {
    const mallory = await f.token(ALL, { sub: "mallory" });
    const open: Response[] = [];
    try {
      for (let i = 0; i < 15; i++) {
        const response = await listen(f, mallory, i);
        assert.equal(response.status, 200, `listen stream ${i}`);
        open.push(response);
      }
      // The 16th through a session's GET stream: both kinds count.
      const session = await initialize(f, mallory);
      const get = await openGetStream(f, mallory, session);
      assert.equal(get.status, 200);
      open.push(get);
      const refused = await listen(f, mallory, 99);
      if (refused.status !== 429) {
        open.push(refused);
        assert.fail(`the 17th stream of one subject was answered ${refused.status}, not 429`);
      }
      const body = await within(refused.json(), "the refusal's body");
      assert.equal(refused.headers.get("retry-after"), "5");
      assert.deepEqual(body.error, { code: -32000, message: "Too many open streams; retry later" });
      const alice = await listen(f, await f.token(ALL, { sub: "alice" }), 1);
      assert.equal(alice.status, 200, "another subject is not starved");
      open.push(alice);
      // A closed stream gives its place back.
      await open.shift()!.body!.cancel();
      let again: Response | null = null;
      for (let i = 0; i < 50 && again === null; i++) {
        const attempt = await listen(f, mallory, 100 + i);
        if (attempt.status === 200) again = attempt;
        else {
          await attempt.body?.cancel();
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      assert.ok(again !== null, "a place freed by a closed stream is reused");
      open.push(again);
    } finally {
      await Promise.all(open.map((response) => response.body?.cancel()));
    }
  });
});
