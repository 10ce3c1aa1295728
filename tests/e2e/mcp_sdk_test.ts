/**
 * The official MCP clients against the real router over Streamable HTTP with
 * bearer tokens: `@modelcontextprotocol/sdk` v1 (revision 2025-11-25, signed
 * sessions, step-up on the same session) and `@modelcontextprotocol/client`
 * v2 (revision 2026-07-28 via `server/discover`, and its legacy mode).
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from "@modelcontextprotocol/client";
import { withMcpFixture } from "./_mcp_fixture.ts";

const ALL = "mcp:connect mcp:list mcp:call mcp:info";

/** A fetch that sends the current token and counts initialize requests. */
function bearerFetch(getToken: () => string, seen: { initialize: number; sessions: Set<string> }) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${getToken()}`);
    const session = headers.get("mcp-session-id");
    if (session) seen.sessions.add(session);
    if (typeof init?.body === "string" && init.body.includes('"method":"initialize"')) {
      seen.initialize++;
    }
    return await fetch(input, { ...init, headers });
  };
}

Deno.test("spec §4.1 / §5.4 with SDK v1 (2025-11-25): list and call tools with a bearer token; step-up on the same session", async () => {
  await withMcpFixture({}, async (f) => {
    let token = await f.token(`${ALL} A B`);
    const seen = { initialize: 0, sessions: new Set<string>() };
    const transport = new TransportV1(new URL(f.mcpUrl), { fetch: bearerFetch(() => token, seen) });
    const client = new ClientV1({ name: "v1-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const sessionId = transport.sessionId;
      assert.match(sessionId ?? "", /^v1\./);
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t: { name: string }) => t.name), [
        "execute_operation_get_flaky",
        "execute_operation_get_hello",
        "execute_operation_get_profile",
        "execute_operation_get_secret",
        "execute_operation_get_three",
        "execute_operation_rename",
        "get_operation_info",
        "execute_graphql",
        "get_schema",
      ]);
      const hello = tools.find((t: { name: string }) => t.name === "execute_operation_get_hello")!;
      assert.equal(hello.description, "Says hello to the caller");
      assert.deepEqual(hello.annotations, { readOnlyHint: true, idempotentHint: true });
      const info = await client.callTool({
        name: "get_operation_info",
        arguments: { operationName: "GetSecret" },
      });
      const text = (info.content as { type: string; text: string }[])[0]!.text;
      assert.ok(text.includes("Required Scopes (OR-of-AND):\n- A AND B AND C\nOR\n- D\n"));

      // Step-up: 403 with the best group, then a stronger token on the same session.
      await assert.rejects(
        () => client.callTool({ name: "execute_operation_get_secret", arguments: {} }),
        (error: Error) => /403/.test(error.message) || /insufficient/i.test(error.message),
      );
      token = await f.token(`${ALL} A B C`);
      const before = f.subgraphQueries.length;
      const result = await client.callTool({ name: "execute_operation_get_secret", arguments: {} });
      assert.equal(transport.sessionId, sessionId);
      assert.equal(seen.initialize, 1, "no re-initialize");
      assert.deepEqual([...seen.sessions], [sessionId]);
      assert.equal(result.isError, false);
      assert.deepEqual(JSON.parse((result.content as { text: string }[])[0]!.text), {
        data: { secret: "s3cret" },
      });
      assert.equal(f.subgraphQueries.length, before + 1);
    } finally {
      await transport.terminateSession().catch(() => {});
      await client.close();
    }
  });
});

Deno.test("issue 4: SDK v1 tool arguments are validated against the input schema (isError naming the field)", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(`${ALL} read:email`);
    const transport = new TransportV1(new URL(f.mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    const client = new ClientV1({ name: "v1-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const result = await client.callTool({
        name: "execute_operation_get_profile",
        arguments: { id: true },
      });
      assert.equal(result.isError, true);
      assert.equal(
        (result.content as { text: string }[])[0]!.text,
        'Invalid argument "id": expected string or integer, got boolean',
      );
    } finally {
      await client.close();
    }
  });
});

Deno.test("issue 4: GraphQL errors make isError: true with the messages and the partial data", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const transport = new TransportV1(new URL(f.mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    const client = new ClientV1({ name: "v1-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: "execute_operation_get_flaky", arguments: {} });
      assert.equal(result.isError, true);
      assert.equal(
        (result.content as { text: string }[])[0]!.text,
        // subgraph_error_propagation wraps the subgraph's errors by default (issue 14).
        "GraphQL errors:\n- Failed to fetch from Subgraph 'shop': Flaky failed\n\nPartial data:\n" +
          '{"hello":"Hello!","flaky":null}',
      );
    } finally {
      await client.close();
    }
  });
});

Deno.test("MCP 2026-07-28 with SDK v2: server/discover, no session, list and call tools", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(`${ALL} A B C`);
    const seen = { initialize: 0, sessions: new Set<string>() };
    const transport = new TransportV2(new URL(f.mcpUrl), { fetch: bearerFetch(() => token, seen) });
    const client = new ClientV2({ name: "v2-test", version: "2.0.0" }, {
      versionNegotiation: { mode: "auto" },
    });
    await client.connect(transport);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
      assert.equal(seen.initialize, 0);
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === "execute_operation_get_secret"));
      const result = await client.callTool({
        name: "get_operation_info",
        arguments: { operationName: "GetHello" },
      });
      assert.match(
        (result.content as { text: string }[])[0]!.text,
        /^Operation: GetHello\nType: query\n/,
      );
      const hello = await client.callTool({ name: "execute_operation_get_hello", arguments: {} });
      assert.deepEqual(JSON.parse((hello.content as { text: string }[])[0]!.text), {
        data: { hello: "Hello!" },
      });
      assert.equal(seen.sessions.size, 0, "no Mcp-Session-Id on 2026-07-28");
    } finally {
      await client.close();
    }
  });
});

Deno.test("MCP 2025-11-25 with SDK v2 in legacy mode: initialize handshake and session", async () => {
  await withMcpFixture({}, async (f) => {
    const token = await f.token(ALL);
    const seen = { initialize: 0, sessions: new Set<string>() };
    const transport = new TransportV2(new URL(f.mcpUrl), { fetch: bearerFetch(() => token, seen) });
    const client = new ClientV2({ name: "v2-test", version: "2.0.0" }, {
      versionNegotiation: { mode: "legacy" },
    });
    await client.connect(transport);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), "2025-11-25");
      assert.equal(seen.initialize, 1);
      const { tools } = await client.listTools();
      assert.equal(tools.length, 9);
      assert.equal(seen.sessions.size, 1);
    } finally {
      await client.close();
    }
  });
});
