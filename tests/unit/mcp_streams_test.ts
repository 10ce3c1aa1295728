import assert from "node:assert/strict";
import { handOverMcp } from "../../lib/mcp/reload.ts";
import type { McpState } from "../../lib/mcp/state.ts";
import { SessionRevocations } from "../../lib/mcp/session.ts";
import { McpStreamHub, type StreamHubOptions } from "../../lib/mcp/streams.ts";

type Reader = ReadableStreamDefaultReader<string>;

function hubOf(options: StreamHubOptions = {}) {
  return new McpStreamHub({ keepAliveMs: 0, ...options });
}

function open(hub: McpStreamHub, session: string, lastEventId: string | null = null): Reader {
  const opened = hub.open(session, { lastEventId });
  if (!opened.ok) throw new Error(opened.reason);
  return opened.stream.pipeThrough(new TextDecoderStream()).getReader();
}

/** Reads until the stream closes (the hub is closed first). */
async function rest(reader: Reader): Promise<string> {
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += value;
  }
}

function primingId(text: string): string {
  return /^id: (\S+)\nretry: \d+\ndata: \n\n/.exec(text)![1]!;
}

function dataLines(text: string): unknown[] {
  return [...text.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1]!));
}

Deno.test("issue 17: a resumed stream replays exactly the events after Last-Event-ID, in order, with their ids", async () => {
  const hub = hubOf();
  const first = open(hub, "s");
  const last = primingId((await first.read()).value!);
  await first.cancel();
  hub.send("s", { n: 1 });
  hub.send("s", { n: 2 });
  const resumed = open(hub, "s", last);
  hub.closeAll();
  const text = await rest(resumed);
  assert.deepEqual(dataLines(text), [{ n: 1 }, { n: 2 }]);
  assert.equal([...text.matchAll(/^id: /gm)].length, 3, "priming + two events carry ids");
});

Deno.test("issue 17: the per-session buffer is bounded in events; a tools change lost to eviction is re-announced", async () => {
  const hub = hubOf({ bufferEvents: 2 });
  const first = open(hub, "s");
  const last = primingId((await first.read()).value!);
  await first.cancel();
  hub.toolsChanged();
  hub.send("s", { n: 1 });
  hub.send("s", { n: 2 });
  const resumed = open(hub, "s", last);
  hub.closeAll();
  assert.deepEqual(dataLines(await rest(resumed)), [
    { n: 1 },
    { n: 2 },
    { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
  ]);
});

Deno.test("issue 17: the per-session buffer is bounded in bytes", async () => {
  const hub = hubOf({ bufferBytes: 1000 });
  const first = open(hub, "s");
  const last = primingId((await first.read()).value!);
  await first.cancel();
  for (let n = 0; n < 20; n++) hub.send("s", { n, pad: "x".repeat(100) });
  const resumed = open(hub, "s", last);
  hub.closeAll();
  const replayed = dataLines(await rest(resumed)) as { n: number }[];
  assert.ok(replayed.length > 0 && replayed.length < 20, `${replayed.length} kept`);
  assert.equal(replayed.at(-1)!.n, 19, "the newest are kept");
});

Deno.test("issue 17: a Last-Event-ID of another replica or process gets a tools/list_changed (nothing provable)", async () => {
  const hub = hubOf();
  const resumed = open(hub, "s", "otherreplica-5");
  hub.closeAll();
  assert.deepEqual(dataLines(await rest(resumed)), [{
    jsonrpc: "2.0",
    method: "notifications/tools/list_changed",
  }]);
});

Deno.test("issue 17: a message goes to one stream of the session (the newest), not to all", async () => {
  const hub = hubOf();
  const older = open(hub, "s");
  const newer = open(hub, "s");
  hub.send("s", { n: 1 });
  hub.closeAll();
  assert.deepEqual(dataLines(await rest(older)), []);
  assert.deepEqual(dataLines(await rest(newer)), [{ n: 1 }]);
});

Deno.test("issue 17: streams are bounded per session and per replica", async () => {
  const hub = hubOf({ maxStreamsPerSession: 2, maxStreams: 3 });
  const readers = [open(hub, "a"), open(hub, "a")];
  assert.deepEqual(hub.open("a", { lastEventId: null }), { ok: false, reason: "too_many_streams" });
  readers.push(open(hub, "b"));
  assert.deepEqual(hub.open("c", { lastEventId: null }), { ok: false, reason: "too_many_streams" });
  assert.deepEqual(hub.listen(1, { toolsListChanged: true }), {
    ok: false,
    reason: "too_many_streams",
  });
  hub.closeAll();
  for (const reader of readers) await rest(reader);
  assert.equal(hub.openStreams, 0);
  readers.length = 0;
  readers.push(open(hub, "a"));
  hub.closeAll();
  await rest(readers[0]!);
});

Deno.test("issue 17: a stream closes when the token that opened it expires", async () => {
  const hub = hubOf({ now: () => 1000 });
  const opened = hub.open("s", { lastEventId: null, expiresAt: 1000 });
  if (!opened.ok) throw new Error(opened.reason);
  const text = await new Response(opened.stream).text();
  assert.match(text, /^id: \S+\nretry: \d+\ndata: \n\n$/);
  assert.equal(hub.openStreams, 0);
});

Deno.test("issue 17: log messages reach only sessions whose logging/setLevel threshold they pass", async () => {
  const hub = hubOf();
  const quiet = open(hub, "quiet");
  const loud = open(hub, "loud");
  hub.setLevel("loud", "info");
  hub.setLevel("quiet", "error");
  hub.log("info", { message: "reloaded" });
  hub.closeAll();
  assert.deepEqual(dataLines(await rest(quiet)), []);
  assert.deepEqual(dataLines(await rest(loud)), [{
    jsonrpc: "2.0",
    method: "notifications/message",
    params: { level: "info", logger: "gw-router", data: { message: "reloaded" } },
  }]);
});

Deno.test("issue 17: after a reload the new hub owns the old streams; calls on the old hub are forwarded", async () => {
  const before = hubOf();
  const reader = open(before, "s");
  const after = hubOf();
  after.adopt(before);
  before.toolsChanged();
  assert.equal(after.openStreams, 1);
  after.closeAll();
  assert.deepEqual(dataLines(await rest(reader)), [{
    jsonrpc: "2.0",
    method: "notifications/tools/list_changed",
  }]);
});

Deno.test("issue 17: a listen stream is acknowledged with the honoured filter and ends with the empty result on close", async () => {
  const hub = hubOf();
  const opened = hub.listen("listen:1", { toolsListChanged: true });
  if (!opened.ok) throw new Error(opened.reason);
  const reader = opened.stream.pipeThrough(new TextDecoderStream()).getReader();
  hub.toolsChanged();
  hub.closeAll();
  const meta = { "io.modelcontextprotocol/subscriptionId": "listen:1" };
  assert.deepEqual(dataLines(await rest(reader)), [
    {
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { toolsListChanged: true }, _meta: meta },
    },
    { jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: meta } },
    { jsonrpc: "2.0", id: "listen:1", result: { resultType: "complete", _meta: meta } },
  ]);
});

function stateOf(key: string, streams: McpStreamHub): McpState {
  return {
    toolListKey: key,
    streams,
    revocations: new SessionRevocations(),
    tools: [],
  } as unknown as McpState;
}

Deno.test("issue 17: a reload that leaves the tool list as it was sends no tools/list_changed (only the info log to sessions that asked)", async () => {
  const before = hubOf();
  const reader = open(before, "s");
  before.setLevel("s", "info");
  const after = hubOf();
  assert.equal(handOverMcp(stateOf("[a]", before), stateOf("[a]", after)), false);
  after.closeAll();
  const messages = dataLines(await rest(reader)) as { method: string }[];
  assert.deepEqual(messages.map((m) => m.method), ["notifications/message"]);
});

Deno.test("issue 17: a reload that changes the tool list notifies the streams the previous state opened", async () => {
  const before = hubOf();
  const reader = open(before, "s");
  const after = hubOf();
  assert.equal(handOverMcp(stateOf("[a]", before), stateOf("[a,b]", after)), true);
  after.closeAll();
  assert.deepEqual(dataLines(await rest(reader)), [{
    jsonrpc: "2.0",
    method: "notifications/tools/list_changed",
  }]);
});

Deno.test("issue 17: MCP turned off by a reload closes the open streams", async () => {
  const before = hubOf();
  const reader = open(before, "s");
  handOverMcp(stateOf("[a]", before), null);
  assert.equal((await reader.read()).done, false, "priming");
  assert.equal((await reader.read()).done, true);
});

Deno.test("issue 17: a listen stream that asks for nothing the server offers is acknowledged with an empty filter and ended", async () => {
  const hub = hubOf();
  const opened = hub.listen(7, { toolsListChanged: false });
  if (!opened.ok) throw new Error(opened.reason);
  const messages = dataLines(await new Response(opened.stream).text()) as Record<string, unknown>[];
  assert.deepEqual(messages.map((m) => m.method ?? "result"), [
    "notifications/subscriptions/acknowledged",
    "result",
  ]);
  assert.equal(hub.openStreams, 0);
});
