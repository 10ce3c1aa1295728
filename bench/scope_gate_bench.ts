/**
 * The whole gate decision (levels 1–4) for a `tools/call` of a registered
 * operation with a 3-group requirement: initialize, method, built-in lookup,
 * per-tool lookup and set tests. Goal: under 1 µs per decision.
 */
import { checkInitialize, checkRequest, compileScopePolicy } from "../lib/mcp/mod.ts";

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
