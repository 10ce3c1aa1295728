/**
 * Issue 17, typed results: every demo operation tool declares an
 * `outputSchema`, and its `structuredContent` (the operation's `data`)
 * validates against it with ajv, through the official SDK clients v1
 * (2025-11-25 session) and v2 (2026-07-28), which also validate it themselves.
 */
import assert from "node:assert/strict";
import { Ajv } from "ajv";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { OPERATION_EXAMPLES } from "../../demo/examples.ts";
import { snakeCase } from "../../lib/mcp/mod.ts";
import { withMcpDemo } from "./_mcp_demo.ts";

interface ListedTool {
  name: string;
  outputSchema?: Record<string, unknown>;
}
interface CalledTool {
  isError?: boolean;
  structuredContent?: unknown;
  content: unknown;
}
interface AnyClient {
  listTools(): Promise<{ tools: ListedTool[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
}

/** Demo operations that select `@authenticated` / `@requiresScopes` fields. */
const PROTECTED: ReadonlySet<string> = new Set(["GetUserAccount"]);

/** Calls every demo operation (AddReview last: it writes) and checks its result against its schema. */
async function checkEveryOperation(client: AnyClient): Promise<void> {
  const ajv = new Ajv({ strict: true, allErrors: true });
  const { tools } = await client.listTools();
  // Subscriptions (an example with a trigger) have no MCP tool.
  const names = Object.keys(OPERATION_EXAMPLES)
    .filter((name) => OPERATION_EXAMPLES[name]!.trigger === undefined)
    .sort((a, b) => (a === "AddReview" ? 1 : 0) - (b === "AddReview" ? 1 : 0));
  assert.equal(names.length, 7);
  for (const name of names) {
    const example = OPERATION_EXAMPLES[name]!;
    const tool = tools.find((t) => t.name === `execute_operation_${snakeCase(name)}`);
    assert.ok(tool?.outputSchema, `${name}: outputSchema declared`);
    assert.equal(tool.outputSchema.type, "object");
    const validate = ajv.compile(tool.outputSchema);
    const result = await client.callTool({
      name: tool.name,
      arguments: example.variables as Record<string, unknown>,
    }) as CalledTool;
    if (PROTECTED.has(name)) {
      // No key source in the demo: no verified identity, so protected fields are never
      // served (issue 18); the schema still describes the authorized answer.
      assert.equal(result.isError, true, name);
      assert.match((result.content as { text: string }[])[0]!.text, /Unauthorized field or type/);
      assert.equal(result.structuredContent, undefined, name);
      assert.ok(validate(example.data), `${name}: ${ajv.errorsText(validate.errors)}`);
      continue;
    }
    assert.equal(result.isError, false, `${name}: ${JSON.stringify(result.content)}`);
    assert.deepEqual(result.structuredContent, example.data, name);
    assert.ok(validate(result.structuredContent), `${name}: ${ajv.errorsText(validate.errors)}`);
    // The text content still carries the whole response (clients without structured output).
    assert.deepEqual(JSON.parse((result.content as { text: string }[])[0]!.text), {
      data: example.data,
    });
    // The schema is strict: an unknown key or a wrong type does not validate.
    assert.equal(validate({ ...(example.data as object), extra: 1 }), false, `${name}: closed`);
  }
}

Deno.test("issue 17: SDK v1 (2025-11-25): every demo operation's structuredContent validates against its outputSchema (ajv)", async () => {
  await withMcpDemo({}, async ({ mcpUrl }) => {
    const client = new ClientV1({ name: "v1-structured", version: "1.0.0" });
    const transport = new TransportV1(new URL(mcpUrl));
    await client.connect(transport);
    try {
      await checkEveryOperation(client as unknown as AnyClient);
    } finally {
      await client.close();
    }
  });
});

Deno.test("issue 17: SDK v2 (2026-07-28): every demo operation's structuredContent validates against its outputSchema (ajv)", async () => {
  await withMcpDemo({}, async ({ mcpUrl }) => {
    const client = new ClientV2({ name: "v2-structured", version: "2.0.0" }, {
      versionNegotiation: { mode: "auto" },
    });
    await client.connect(new TransportV2(new URL(mcpUrl)));
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
      await checkEveryOperation(client as unknown as AnyClient);
    } finally {
      await client.close();
    }
  });
});

Deno.test("issue 17: revision 2025-03-26 gets neither outputSchema nor structuredContent; GraphQL errors stay isError without it", async () => {
  await withMcpDemo({}, async ({ mcpUrl }) => {
    const post = async (body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(mcpUrl, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify(body),
      });
      return { session: response.headers.get("mcp-session-id"), json: await response.json() };
    };
    const init = await post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-03-26",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    });
    const session = init.session!;
    const old = { "mcp-session-id": session };
    const list = await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, old);
    assert.ok(list.json.result.tools.every((t: ListedTool) => t.outputSchema === undefined));
    const call = await post({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "execute_operation_get_product", arguments: { upc: "1" } },
    }, old);
    assert.equal(call.json.result.isError, false);
    assert.equal(call.json.result.structuredContent, undefined);
    const current = { ...old, "mcp-protocol-version": "2025-11-25" };
    const failing = await post({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "execute_graphql", arguments: { query: "{ nope }" } },
    }, current);
    assert.equal(failing.json.result.isError, true);
    assert.equal(failing.json.result.structuredContent, undefined);
    assert.match(
      failing.json.result.content[0].text,
      /^GraphQL errors:\n- Cannot query field "nope"/,
    );
  });
});
