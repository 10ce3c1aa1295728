/**
 * Run by `edge_encoding_test.ts` in its own process, so the RSS it samples is
 * this request's alone: sends a 1 GB gzip bomb (zeros, produced only as far
 * as it is read) to one facet and prints `{status, produced, rssGrowth}`.
 * Usage: `deno run -A tests/unit/_gzip_bomb_probe.ts graphql|mcp|connect`.
 *
 * @module
 */
import { BASE, edgeState, handlerOf, mcpPost } from "./_edge_fixture.ts";

const facet = Deno.args[0] ?? "graphql";
const zeros = new Uint8Array(1 << 20);
let produced = 0;
const source = new ReadableStream<BufferSource>({
  pull(controller) {
    if (produced >= 1 << 30) return controller.close();
    produced += zeros.length;
    controller.enqueue(zeros);
  },
}, { highWaterMark: 0 });
const body = source.pipeThrough(new CompressionStream("gzip"));

const handle = handlerOf(
  await edgeState({}, {
    operations: [{ path: "GetTypename.graphql", text: "query GetTypename { __typename }" }],
  }),
);
const headers = { "content-encoding": "gzip" };
const request = facet === "graphql"
  ? new Request(`${BASE}/graphql`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body,
  })
  : facet === "mcp"
  ? new Request(mcpPost(new Uint8Array(0), headers), { body, duplex: "half" } as RequestInit)
  : new Request(`${BASE}/service.v1.GraphService/GetTypename`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", "connect-protocol-version": "1" },
    body,
  });

const before = Deno.memoryUsage().rss;
let peak = before;
const sampler = setInterval(() => {
  peak = Math.max(peak, Deno.memoryUsage().rss);
}, 2);
const response = await handle(request);
const text = await response.text();
clearInterval(sampler);
peak = Math.max(peak, Deno.memoryUsage().rss);
console.log(JSON.stringify({ status: response.status, text, produced, rssGrowth: peak - before }));
