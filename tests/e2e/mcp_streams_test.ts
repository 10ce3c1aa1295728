/**
 * Issue 17, live tool list: the session's GET stream (SDK v1, SDK v2 in
 * 2025-11-25 mode) and the 2026-07-28 `subscriptions/listen` stream (SDK v2)
 * receive `notifications/tools/list_changed` when an operation file is added
 * to operations_dir (file watch → reload), a fresh `tools/list` shows the new
 * tool, and a stream that was cut resumes with `Last-Event-ID` and gets what
 * it missed.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { type McpDemo, withMcpDemo } from "./_mcp_demo.ts";

const ROOT = new URL("../../", import.meta.url);
const NEW_TOOL = "execute_operation_get_product_name";
const NEW_FILE = "GetProductName.graphql";
const NEW_OPERATION = "query GetProductName($upc: ID!) { product(upc: $upc) { name } }\n";

/** The demo with a writable copy of operations/ watched for changes. */
async function withWatchedDemo(body: (demo: McpDemo, dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "gw_mcp_live_" });
  try {
    for await (const entry of Deno.readDir(new URL("operations/", ROOT))) {
      await Deno.copyFile(new URL(`operations/${entry.name}`, ROOT), `${dir}/${entry.name}`);
    }
    await withMcpDemo({ env: { OPERATIONS_DIR: dir }, watch: true }, (demo) => body(demo, dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A fetch that records GET requests (with their Last-Event-ID) and can hold reconnections. */
function recordingFetch() {
  const gets: (string | null)[] = [];
  let hold: Promise<void> = Promise.resolve();
  const fetcher = async (input: string | URL | Request, init?: RequestInit) => {
    if ((init?.method ?? "GET") === "GET") {
      const last = new Headers(init?.headers).get("last-event-id");
      if (last !== null) await hold;
      gets.push(last);
    }
    return await fetch(input, init);
  };
  return {
    fetch: fetcher,
    gets,
    holdResumptions(until: Promise<unknown>) {
      hold = until.then(() => {});
    },
  };
}

function waitFor(predicate: () => boolean, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const tick = () => {
      if (predicate()) return resolve();
      if (Date.now() - started > 20_000) return reject(new Error(`Timed out waiting for ${what}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

Deno.test("issue 17: SDK v1: the GET stream receives tools/list_changed after an operation file is added; tools/list then shows the tool", async () => {
  await withWatchedDemo(async ({ mcpUrl, router }, dir) => {
    const recorder = recordingFetch();
    const client = new ClientV1({ name: "v1-live", version: "1.0.0" });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    await client.connect(new TransportV1(new URL(mcpUrl), { fetch: recorder.fetch }));
    try {
      assert.deepEqual(client.getServerCapabilities()?.tools, { listChanged: true });
      await waitFor(() => router.state().mcp!.streams.openStreams === 1, "the GET stream");
      const before = await client.listTools();
      assert.ok(!before.tools.some((t: { name: string }) => t.name === NEW_TOOL));
      await Deno.writeTextFile(`${dir}/${NEW_FILE}`, NEW_OPERATION);
      await waitFor(() => changed === 1, "tools/list_changed");
      const after = await client.listTools();
      assert.ok(after.tools.some((t: { name: string }) => t.name === NEW_TOOL));
      const result = await client.callTool({ name: NEW_TOOL, arguments: { upc: "1" } });
      assert.deepEqual(result.structuredContent, { product: { name: "Oak Dining Table" } });
      assert.deepEqual(recorder.gets, [null], "one GET stream, never resumed");
    } finally {
      await client.close();
    }
  });
});

Deno.test("issue 17: SDK v1: a cut GET stream resumes with Last-Event-ID and replays the tools/list_changed it missed", async () => {
  await withWatchedDemo(async ({ mcpUrl, router }, dir) => {
    const recorder = recordingFetch();
    const client = new ClientV1({ name: "v1-resume", version: "1.0.0" });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    await client.connect(new TransportV1(new URL(mcpUrl), { fetch: recorder.fetch }));
    try {
      await waitFor(() => router.state().mcp!.streams.openStreams === 1, "the GET stream");
      // The replica drops the stream (as a proxy timeout would); the client's
      // reconnection is held until the reload has happened, so the
      // notification can only arrive by replay.
      const reloaded = Promise.withResolvers<void>();
      recorder.holdResumptions(reloaded.promise);
      router.state().mcp!.streams.closeAll();
      await Deno.writeTextFile(`${dir}/${NEW_FILE}`, NEW_OPERATION);
      await waitFor(() => router.state().mcp!.toolsByName.has(NEW_TOOL), "the reload");
      assert.equal(changed, 0, "nothing delivered while disconnected");
      reloaded.resolve();
      await waitFor(() => changed === 1, "the replayed tools/list_changed");
      assert.equal(recorder.gets.length, 2);
      assert.match(recorder.gets[1]!, /^[A-Za-z0-9_]+-\d+$/, "resumed with Last-Event-ID");
      assert.ok(
        (await client.listTools()).tools.some((t: { name: string }) => t.name === NEW_TOOL),
      );
    } finally {
      await client.close();
    }
  });
});

Deno.test("issue 17: SDK v2 (2025-11-25 mode): the GET stream receives tools/list_changed after an operation file is added", async () => {
  await withWatchedDemo(async ({ mcpUrl, router }, dir) => {
    const client = new ClientV2({ name: "v2-live", version: "2.0.0" }, {
      versionNegotiation: { mode: "legacy" },
    });
    let changed = 0;
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      changed++;
    });
    await client.connect(new TransportV2(new URL(mcpUrl)));
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), "2025-11-25");
      await waitFor(() => router.state().mcp!.streams.openStreams === 1, "the GET stream");
      await Deno.writeTextFile(`${dir}/${NEW_FILE}`, NEW_OPERATION);
      await waitFor(() => changed === 1, "tools/list_changed");
      assert.ok(
        (await client.listTools()).tools.some((t: { name: string }) => t.name === NEW_TOOL),
      );
    } finally {
      await client.close();
    }
  });
});

Deno.test("issue 17: SDK v2 (2026-07-28): a subscriptions/listen stream receives tools/list_changed after an operation file is added", async () => {
  await withWatchedDemo(async ({ mcpUrl }, dir) => {
    const client = new ClientV2({ name: "v2-listen", version: "2.0.0" }, {
      versionNegotiation: { mode: "auto" },
    });
    let changed = 0;
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      changed++;
    });
    await client.connect(new TransportV2(new URL(mcpUrl)));
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
      const subscription = await client.listen({ toolsListChanged: true });
      assert.deepEqual(subscription.honoredFilter, { toolsListChanged: true });
      await Deno.writeTextFile(`${dir}/${NEW_FILE}`, NEW_OPERATION);
      await waitFor(() => changed === 1, "tools/list_changed");
      assert.ok(
        (await client.listTools()).tools.some((t: { name: string }) => t.name === NEW_TOOL),
      );
      await subscription.close();
    } finally {
      await client.close();
    }
  });
});
