/**
 * Issue 17: the GET stream follows the POST rules (bearer token and gate 1,
 * a valid session of the same subject, a session revision), and the logging
 * utility: after `logging/setLevel`, a failing tool call's error goes before
 * its result on the POST's own SSE answer, or on the GET stream.
 */
import assert from "node:assert/strict";
import { initialize, type McpFixture, rpc, withMcpFixture } from "./_mcp_fixture.ts";
import { textWithin, within } from "./_deadline.ts";

const ALL = "mcp:connect mcp:list mcp:call mcp:exec";

function get(f: McpFixture, headers: Record<string, string>): Promise<Response> {
  return fetch(f.mcpUrl, { headers: { accept: "text/event-stream", ...headers } });
}

async function status(response: Promise<Response>): Promise<number> {
  const r = await response;
  await r.body?.cancel();
  return r.status;
}

Deno.test("issue 17: GET /mcp needs what POST needs: token, SSE accept, a live session of this subject, a session revision", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const session = await initialize(f, token);
    const auth = { authorization: `Bearer ${token}` };
    const noToken = await get(f, { "mcp-session-id": session });
    assert.equal(noToken.status, 401);
    assert.match(noToken.headers.get("www-authenticate")!, /^Bearer /);
    await noToken.body?.cancel();
    assert.equal(
      await status(get(f, { ...auth, "mcp-session-id": session, accept: "application/json" })),
      406,
    );
    assert.equal(await status(get(f, auth)), 400);
    const other = `Bearer ${await f.token(ALL, { sub: "someone-else" })}`;
    assert.equal(await status(get(f, { authorization: other, "mcp-session-id": session })), 404);
    assert.equal(
      await status(
        get(f, { ...auth, "mcp-session-id": session, "mcp-protocol-version": "2026-07-28" }),
      ),
      405,
    );
    const ok = await get(f, { ...auth, "mcp-session-id": session });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("content-type"), "text/event-stream");
    const reader = ok.body!.pipeThrough(new TextDecoderStream()).getReader();
    const priming = await within(reader.read(), "the GET stream's priming event");
    assert.match(priming.value!, /^id: \S+\nretry: \d+\ndata: \n\n/);
    await reader.cancel();
    const ended = await fetch(f.mcpUrl, {
      method: "DELETE",
      headers: { ...auth, "mcp-session-id": session },
    });
    assert.equal(ended.status, 204);
    assert.equal(await status(get(f, { ...auth, "mcp-session-id": session })), 404);
  });
});

Deno.test("issue 17: after logging/setLevel, a failing call's error is sent before its result on the POST's SSE answer, else on the GET stream", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const session = await initialize(f, token);
    const v = { "mcp-protocol-version": "2025-11-25" };
    const bad = await rpc(f, {
      jsonrpc: "2.0",
      id: 1,
      method: "logging/setLevel",
      params: { level: "loud" },
    }, { token, session, headers: v });
    assert.equal((bad.json as { error: { code: number } }).error.code, -32602);
    const set = await rpc(f, {
      jsonrpc: "2.0",
      id: 2,
      method: "logging/setLevel",
      params: { level: "warning" },
    }, { token, session, headers: v });
    assert.deepEqual((set.json as { result: unknown }).result, {});
    const failing = {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "execute_operation_get_flaky", arguments: {} },
    };
    // POST accepting SSE: the notification, then the result, on this response.
    const response = await fetch(f.mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${token}`,
        "mcp-session-id": session,
        ...v,
      },
      body: JSON.stringify(failing),
    });
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    const text = await textWithin(response, "the POST's SSE answer");
    const events = [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1]!));
    assert.equal(events.length, 2);
    assert.equal(events[0].method, "notifications/message");
    assert.equal(events[0].params.level, "error");
    assert.match(events[0].params.data.message, /Flaky failed/);
    assert.equal(events[1].id, 3);
    assert.equal(events[1].result.isError, true);
    // POST accepting JSON only: the result as JSON, the notification on the GET stream.
    const stream = await get(f, { authorization: `Bearer ${token}`, "mcp-session-id": session });
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    await within(reader.read(), "the GET stream's priming event");
    const plain = await rpc(f, failing, {
      token,
      session,
      headers: { ...v, accept: "application/json" },
    });
    assert.equal((plain.json as { result: { isError: boolean } }).result.isError, true);
    const note = (await within(reader.read(), "the notification on the GET stream")).value!;
    assert.match(note, /"method":"notifications\/message"/);
    await reader.cancel();
  });
});
