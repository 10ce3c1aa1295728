/**
 * Group `gate`: the whole gate decision (levels 1–4) for a `tools/call` of a
 * registered operation with a 3-group requirement: initialize, method,
 * built-in lookup, per-tool lookup and set tests. Goal: under 1 µs.
 *
 * Group `layer`: the figure that decided the JSON-RPC layer: one in-process
 * `tools/list` (2026-07-28) through our `handleMcp` versus the official
 * `@modelcontextprotocol/server` v2 `createMcpHandler`, no socket, no auth.
 *
 * Run: `deno bench -A bench/scope_gate_bench.ts`
 */
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { composeSupergraph } from "../lib/compose/mod.ts";
import { parseConfig } from "../lib/config/mod.ts";
import { createEngine } from "../lib/engine/mod.ts";
import {
  buildMcpState,
  checkInitialize,
  checkRequest,
  compileScopePolicy,
  handleMcp,
  type McpDeps,
} from "../lib/mcp/mod.ts";
import { buildOperationRegistry } from "../lib/operations/mod.ts";
import { buildSupergraph } from "../lib/supergraph/mod.ts";

let _sink: unknown;

const tools = new Map<string, readonly (readonly string[])[]>();
for (let i = 0; i < 200; i++) tools.set(`execute_operation_op_${i}`, [[`s${i}`]]);
tools.set("execute_operation_get_order", [["orders:read", "billing:read"], ["support"], ["admin"]]);
const policy = compileScopePolicy({
  initialize: ["mcp:connect"],
  tools_list: ["mcp:list"],
  tools_call: ["mcp:call"],
  execute_graphql: ["mcp:exec"],
  get_operation_info: ["mcp:info"],
  get_schema: [],
}, { builtIns: ["execute_graphql", "get_operation_info"], tools });

const allowed = new Set(["mcp:connect", "mcp:call", "openid", "profile", "admin"]);
const denied = new Set(["mcp:connect", "mcp:call", "openid", "orders:read"]);

function decide(scopes: ReadonlySet<string>): unknown {
  const first = checkInitialize(policy, scopes);
  return first.allow
    ? checkRequest(policy, scopes, "tools/call", "execute_operation_get_order")
    : first;
}

Deno.bench("scope gate: tools/call, 3-group requirement, allowed (third group)", {
  group: "gate",
  baseline: true,
}, () => {
  _sink = decide(allowed);
});

Deno.bench("scope gate: tools/call, 3-group requirement, denied (best-group challenge)", {
  group: "gate",
}, () => {
  _sink = decide(denied);
});

// --- layer: own JSON-RPC layer vs the official server SDK (8 tools each) ---
const SDL = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])
type Query { ${Array.from({ length: 8 }, (_, i) => `f${i}: String`).join(" ")} }
`;
const composed = composeSupergraph([{ name: "a", url: "http://127.0.0.1:9/graphql", sdl: SDL }]);
if (!composed.ok) throw new Error("bench supergraph does not compose");
const engine = createEngine(buildSupergraph(composed.supergraphSdl));
const config = parseConfig({
  mcp: { enabled: true, session_secret: "bench-secret-0123456789abcdef0123" },
});
const operations = buildOperationRegistry(
  Array.from({ length: 7 }, (_, i) => ({ path: `Q${i}.graphql`, text: `query Q${i} { f${i} }` })),
  engine.model.apiSchema,
);
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const base = { config, engine, operations, log: silent };
const deps: McpDeps = { ...base, mcp: await buildMcpState(base) };
const sdk = createMcpHandler(() => {
  const server = new McpServer({ name: "bench", version: "1" });
  for (let i = 0; i < 8; i++) {
    server.registerTool(`tool_${i}`, { description: "d" }, () => ({
      content: [{ type: "text", text: "ok" }],
    }));
  }
  return server;
});
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};
function toolsList(): Request {
  return new Request("http://localhost:3002/mcp", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: META } }),
  });
}

Deno.bench("layer: own handleMcp, tools/list", { group: "layer", baseline: true }, async (b) => {
  const request = toolsList();
  b.start();
  _sink = await (await handleMcp(request, deps)).text();
  b.end();
});

Deno.bench("layer: @modelcontextprotocol/server createMcpHandler, tools/list", {
  group: "layer",
}, async (b) => {
  const request = toolsList();
  b.start();
  _sink = await (await sdk.fetch(request)).text();
  b.end();
});
