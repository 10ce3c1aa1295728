/**
 * Issue 17 figures. Group `output_schema`: deriving the `outputSchema` of all
 * seven demo operations (done once per state, on start-up and reload).
 * Group `list_changed`: one reload's `tools/list_changed` to 10,000 remembered
 * sessions (buffered, 100 of them with an open stream), the per-replica cost
 * of a tool-list change. Group `resume`: a reconnect replaying 64 buffered
 * events after `Last-Event-ID`.
 *
 * Run: `deno bench -A bench/mcp_streams_bench.ts`
 */
import type { OperationDefinitionNode } from "graphql";
import { McpStreamHub, outputSchema } from "../lib/mcp/mod.ts";
import { buildOperationRegistry } from "../lib/operations/mod.ts";
import { buildSupergraph } from "../lib/supergraph/mod.ts";

let _sink: unknown;

const ROOT = new URL("../", import.meta.url);
const model = buildSupergraph(
  Deno.readTextFileSync(new URL("schema/supergraph.graphql", ROOT)),
);
const files = [...Deno.readDirSync(new URL("operations/", ROOT))].map((entry) => ({
  path: entry.name,
  text: Deno.readTextFileSync(new URL(`operations/${entry.name}`, ROOT)),
}));
const registry = buildOperationRegistry(files, model.apiSchema);

Deno.bench("output_schema: the 7 demo operations", { group: "output_schema" }, () => {
  for (const operation of registry.operations) {
    _sink = outputSchema(operation.operation as OperationDefinitionNode, {
      schema: model.apiSchema,
      document: operation.document,
    });
  }
});

const hub = new McpStreamHub({ keepAliveMs: 0, maxSessions: 20_000, maxStreams: 200 });
const readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
for (let i = 0; i < 10_000; i++) {
  if (i < 100) {
    const opened = hub.open(`s${i}`, { lastEventId: null });
    if (opened.ok) readers.push(opened.stream.getReader());
  } else {
    hub.setLevel(`s${i}`, "error"); // remembered, no stream
  }
}
// Drain the open streams so their queues do not grow across iterations.
for (const reader of readers) {
  (async () => {
    while (!(await reader.read()).done) { /* discard */ }
  })();
}

Deno.bench("list_changed: 10,000 sessions, 100 open streams", { group: "list_changed" }, () => {
  hub.toolsChanged();
});

const replay = new McpStreamHub({ keepAliveMs: 0 });
const first = replay.open("r", { lastEventId: null });
if (!first.ok) throw new Error(first.reason);
const priming = new TextDecoder().decode((await first.stream.getReader().read()).value);
const lastEventId = /^id: (\S+)/.exec(priming)![1]!;
for (let i = 0; i < 64; i++) replay.send("r", { jsonrpc: "2.0", method: "m", params: { i } });

Deno.bench("resume: replay 64 events after Last-Event-ID", { group: "resume" }, async () => {
  const opened = replay.open("r", { lastEventId });
  if (!opened.ok) throw new Error(opened.reason);
  await opened.stream.cancel();
});
