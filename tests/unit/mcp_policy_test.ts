import assert from "node:assert/strict";
import { buildSchema } from "graphql";
import {
  buildTools,
  checkInitialize,
  checkRequest,
  checkRuntime,
  compileScopePolicy,
  formatOperationInfo,
  snakeCase,
} from "../../lib/mcp/mod.ts";
import { buildOperationRegistry } from "../../lib/operations/mod.ts";
import type { McpConfig } from "../../lib/config/types.ts";

const SCOPES = {
  initialize: ["init"],
  tools_list: ["list"],
  tools_call: ["call"],
  execute_graphql: ["exec"],
  get_operation_info: ["info"],
  get_schema: ["schema"],
};
const TOOLS = new Map([["op", [["A", "B", "C"], ["D"]]], ["free", []]]);
const policy = compileScopePolicy(SCOPES, {
  builtIns: ["execute_graphql", "get_operation_info"],
  tools: TOOLS,
});

Deno.test("spec §5.2 level 1: initialize scopes on every request", () => {
  assert.deepEqual(checkInitialize(policy, new Set()), {
    allow: false,
    level: "initialize",
    scopes: ["init"],
  });
  assert.equal(checkInitialize(policy, new Set(["init"])).allow, true);
});

Deno.test("spec §5.2 level 2: method scopes for tools/list and tools/call; other methods pass", () => {
  assert.deepEqual(checkRequest(policy, new Set(["init"]), "tools/list"), {
    allow: false,
    level: "method",
    scopes: ["list"],
  });
  assert.deepEqual(checkRequest(policy, new Set(["init"]), "tools/call", "free"), {
    allow: false,
    level: "method",
    scopes: ["call"],
  });
  assert.equal(checkRequest(policy, new Set(), "ping").allow, true);
});

Deno.test("spec §5.2 level 3 / §5.3 rule 2: built-in scopes additive to tools_call", () => {
  assert.deepEqual(checkRequest(policy, new Set(["call"]), "tools/call", "get_operation_info"), {
    allow: false,
    level: "built-in",
    scopes: ["info"],
  });
  const empty = compileScopePolicy({ ...SCOPES, tools_call: [] }, {
    builtIns: ["get_operation_info"],
    tools: TOOLS,
  });
  assert.equal(
    checkRequest(empty, new Set(["info"]), "tools/call", "get_operation_info").allow,
    true,
  );
});

Deno.test("spec §2.2: a disabled built-in is not a built-in (its scopes are not checked)", () => {
  assert.equal(checkRequest(policy, new Set(["call"]), "tools/call", "get_schema").allow, true);
});

Deno.test("spec §5.2 level 4 / §7.2: per-tool requirement, best group on a shortfall", () => {
  assert.deepEqual(checkRequest(policy, new Set(["call", "A", "B"]), "tools/call", "op"), {
    allow: false,
    level: "tool",
    scopes: ["A", "B", "C"],
  });
  assert.equal(checkRequest(policy, new Set(["call", "D"]), "tools/call", "op").allow, true);
  assert.equal(checkRequest(policy, new Set(["call"]), "tools/call", "free").allow, true);
});

Deno.test("spec §5.3 rule 4: execute_graphql is not checked at the per-tool level", () => {
  assert.equal(
    checkRequest(policy, new Set(["call", "exec"]), "tools/call", "execute_graphql").allow,
    true,
  );
});

Deno.test("spec §5.2 level 5: runtime requirement, best group", () => {
  assert.deepEqual(checkRuntime([["A", "B", "C"], ["D"]], new Set(["A", "B"])), {
    allow: false,
    level: "runtime",
    scopes: ["A", "B", "C"],
  });
});

Deno.test("RFC 6749 §3.3: a configured scope outside the grammar stops start-up naming the key", () => {
  assert.throws(
    () =>
      compileScopePolicy({ ...SCOPES, tools_list: ["a\nb"] }, { builtIns: [], tools: new Map() }),
    { code: "CONFIG_INVALID", details: { path: "mcp.oauth.scopes.tools_list" } },
  );
});

const SCHEMA = buildSchema(`
  type Query { "Finds a user" user(id: ID!): String, secret: String, getSchema: String }
  type Mutation { rename(name: String!): String }
`);
const ACCESS = new Map([["Query.secret", {
  authenticated: false,
  requiresScopes: [["a", "b"], ["c"]],
}]]);
function mcpConfig(overrides: Partial<McpConfig> = {}): McpConfig {
  return {
    exclude_mutations: false,
    omit_tool_name_prefix: false,
    enable_arbitrary_operations: true,
    expose_schema: true,
    oauth: { max_scope_combinations: 2048 },
    ...overrides,
  } as unknown as McpConfig;
}
const REGISTRY = buildOperationRegistry([
  { path: "a.graphql", text: "query GetUser($id: ID!) { user(id: $id) }" },
  { path: "b.graphql", text: "query GetSchema { getSchema }" },
  { path: "c.graphql", text: "mutation Rename($name: String!) { rename(name: $name) }" },
  { path: "d.graphql", text: "query GetSecret { secret }" },
], SCHEMA);

Deno.test("issue 4: tool names, descriptions, annotations and built-ins", () => {
  const { tools } = buildTools({
    config: mcpConfig(),
    registry: REGISTRY,
    schema: SCHEMA,
    access: ACCESS,
  });
  assert.deepEqual(tools.map((t) => t.name), [
    "execute_operation_get_user",
    "execute_operation_get_schema",
    "execute_operation_rename",
    "execute_operation_get_secret",
    "get_operation_info",
    "execute_graphql",
    "get_schema",
  ]);
  assert.equal(tools[0]!.description, "Finds a user");
  assert.equal(tools[2]!.description, "Executes the GraphQL mutation Rename.");
  assert.deepEqual(tools[0]!.annotations, { readOnlyHint: true, idempotentHint: true });
  assert.deepEqual(tools[2]!.annotations, { readOnlyHint: false, idempotentHint: false });
  assert.deepEqual(tools[3]!.requirement, [["a", "b"], ["c"]]);
  assert.deepEqual(tools[4]!.inputSchema.properties?.operationName?.enum, [
    "GetUser",
    "GetSchema",
    "Rename",
    "GetSecret",
  ]);
});

Deno.test("issue 29: a subscription operation gets no tool and is not listed by get_operation_info", () => {
  const schema = buildSchema(`
    type Query { hello: String }
    type Subscription { "A feed" ticks: Int }
  `);
  const registry = buildOperationRegistry([
    { path: "a.graphql", text: "subscription OnTick { ticks }" },
    { path: "b.graphql", text: "query Hello { hello }" },
  ], schema);
  assert.deepEqual(registry.operations.map((o) => o.kind), ["subscription", "query"]);
  const built = buildTools({ config: mcpConfig(), registry, schema, access: new Map() });
  assert.deepEqual(built.tools.map((t) => t.name), [
    "execute_operation_hello",
    "get_operation_info",
    "execute_graphql",
    "get_schema",
  ]);
  assert.deepEqual(built.tools[1]!.inputSchema.properties?.operationName?.enum, ["Hello"]);
  assert.deepEqual(built.skipped, [], "left out on purpose, not a failure to log");
});

Deno.test("issue 4: omit_tool_name_prefix; a name colliding with a built-in is skipped; exclude_mutations", () => {
  const built = buildTools({
    config: mcpConfig({ omit_tool_name_prefix: true, exclude_mutations: true }),
    registry: REGISTRY,
    schema: SCHEMA,
    access: ACCESS,
  });
  assert.deepEqual(built.tools.map((t) => t.name).slice(0, 2), ["get_user", "get_secret"]);
  assert.deepEqual(built.skipped, [{
    operation: "GetSchema",
    reason: 'Tool name "get_schema" collides with a built-in tool',
  }]);
});

Deno.test("DESIGN §4: a tool over max_scope_combinations is refused at load with a reason", () => {
  const built = buildTools({
    config: mcpConfig({ oauth: { max_scope_combinations: 1 } } as Partial<McpConfig>),
    registry: REGISTRY,
    schema: SCHEMA,
    access: ACCESS,
  });
  assert.equal(built.tools.some((t) => t.name === "execute_operation_get_secret"), false);
  assert.match(built.skipped[0]!.reason, /max_scope_combinations/);
});

Deno.test("spec §2.6: get_operation_info prints Required Scopes (OR-of-AND) with AND lines and OR separators", () => {
  const { tools } = buildTools({
    config: mcpConfig(),
    registry: REGISTRY,
    schema: SCHEMA,
    access: ACCESS,
  });
  const text = formatOperationInfo(tools[3]!, { graphqlUrl: "http://localhost:3002/graphql" });
  assert.ok(text.startsWith("Operation: GetSecret\nType: query\n"));
  assert.ok(text.includes("\nRequired Scopes (OR-of-AND):\n- a AND b\nOR\n- c\n"));
  assert.ok(text.includes("POST http://localhost:3002/graphql"));
  const plain = formatOperationInfo(tools[0]!, { graphqlUrl: "http://localhost:3002/graphql" });
  assert.equal(plain.includes("Required Scopes"), false);
});

Deno.test("issue 4: snake_case of operation names", () => {
  assert.equal(snakeCase("GetUserAccount"), "get_user_account");
  assert.equal(snakeCase("fetchHTTPStatus"), "fetch_http_status");
});
