/**
 * Ending an MCP session (DELETE) is final on this replica: the id stays
 * refused across a configuration reload, and the session's open GET streams
 * close with it (MCP transport: after the session ends the server answers its
 * id with 404 and sends it nothing more).
 */
import assert from "node:assert/strict";
import { initialize, openGetStream, rpc, withMcpFixture } from "./_mcp_fixture.ts";

const ALL = "mcp:connect mcp:list mcp:call";

async function end(mcpUrl: string, token: string, session: string): Promise<number> {
  const response = await fetch(mcpUrl, {
    method: "DELETE",
    headers: { authorization: `Bearer ${token}`, "mcp-session-id": session },
  });
  await response.body?.cancel();
  return response.status;
}

Deno.test("MCP session end: a DELETEd session stays ended after a reload (the revocations carry over to the new state)", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const session = await initialize(f, token);
    assert.equal(await end(f.mcpUrl, token, session), 204);
    const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
    assert.equal((await rpc(f, ping, { token, session })).status, 404);
    await Deno.writeTextFile(`${f.operationsDir}/GetAgain.graphql`, "query GetAgain { hello }\n");
    assert.equal(await f.router.reload(), true);
    const after = await rpc(f, ping, { token, session });
    assert.equal(after.status, 404);
    assert.deepEqual(after.json, {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32001, message: "Session not found" },
    });
    assert.equal(await end(f.mcpUrl, token, session), 404);
  });
});

Deno.test("MCP session end: DELETE closes the session's open GET streams", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const session = await initialize(f, token);
    const stream = await openGetStream(f, token, session);
    assert.equal(stream.status, 200);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    assert.match((await reader.read()).value!, /^id: \S+\nretry: \d+\ndata: \n\n/);
    assert.equal(await end(f.mcpUrl, token, session), 204);
    const next = await Promise.race([
      reader.read(),
      new Promise<"open">((resolve) => setTimeout(() => resolve("open"), 2000)),
    ]);
    if (next === "open") {
      await reader.cancel();
      assert.fail("the stream of an ended session is still open");
    }
    assert.equal(next.done, true);
  });
});
