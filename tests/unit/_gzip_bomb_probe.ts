/**
 * Run by `edge_encoding_test.ts` in its own process, so the RSS it samples is
 * this request's alone: sends a 1 GB gzip bomb (zeros, produced only as far
 * as it is read) to one facet and prints `{status, produced, rssGrowth}`.
 * Usage: `deno run -A tests/unit/_gzip_bomb_probe.ts graphql|mcp|connect`.
 *
 * @module
 */
import { constants, deflateRawSync } from "node:zlib";
import { BASE, edgeState, handlerOf, mcpPost } from "./_edge_fixture.ts";

const facet = Deno.args[0] ?? "graphql";
// The gzip of 1 GiB of zeros, made without deflating the gigabyte (3 s of CPU):
// one MiB of zeros deflated and flushed to a byte boundary (no back-references
// out of it) is a piece that can be repeated; 1 024 of them, an empty last
// block, then the CRC-32 and size of the whole. `produced` counts the zeros
// the pieces read so far stand for.
const MIB = 1 << 20;
const piece = deflateRawSync(new Uint8Array(MIB), { finishFlush: constants.Z_FULL_FLUSH });
const HEADER = Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff);
/** An empty fixed-Huffman last block, CRC-32 of 1 GiB of zeros (0x5b64c2b0), size 2^30 (LE). */
const END = Uint8Array.of(0x03, 0x00, 0xb0, 0xc2, 0x64, 0x5b, 0, 0, 0, 0x40);
let produced = 0;
let started = false;
const body = new ReadableStream<Uint8Array>({
  pull(controller) {
    if (!started) {
      started = true;
      return controller.enqueue(HEADER);
    }
    if (produced >= 1 << 30) {
      controller.enqueue(END);
      return controller.close();
    }
    produced += MIB;
    controller.enqueue(piece);
  },
}, { highWaterMark: 0 });

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
