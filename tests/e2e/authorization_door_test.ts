/**
 * Issue 40: one authorization door. With `authorization.reject_operation_if_unauthorized`,
 * the same operation needing a scope the token lacks is refused the same way on every facet —
 * GraphQL over HTTP, a subscription over SSE, multipart and WebSocket (the real `graphql-ws`
 * client), Connect, and an MCP tool — and no subgraph is called. With the scope, it runs.
 * The router runs the production profile (the subscription fixture's `withProfile`).
 */
import assert from "node:assert/strict";
import { createClient } from "graphql-ws";
import { type SubscriptionFixture, withFixture } from "./_subscription_fixture.ts";

const OPERATIONS = {
  "UserEmail.graphql": `query UserEmail { user(id: "u1") { name email } }`,
  "OnReviewEmail.graphql":
    `subscription OnReviewEmail { reviewAdded { id author { name email } } }`,
};

/** A deadline for every stream read: a regression fails, never hangs. */
const DEADLINE_MS = 10_000;

async function withDoorRouter(run: (fixture: SubscriptionFixture) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "gw_door_ops_" });
  try {
    for (const [name, text] of Object.entries(OPERATIONS)) {
      await Deno.writeTextFile(`${dir}/${name}`, text);
    }
    await withFixture({
      authentication: true,
      config: {
        operations_dir: dir,
        authorization: { reject_operation_if_unauthorized: true },
        connect_rpc: { enabled: true, package: "test.v1", service: "UserService" },
      },
    }, run);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The text of a streamed answer, read to its end within the deadline. */
async function streamText(response: Response): Promise<string> {
  const signal = AbortSignal.timeout(DEADLINE_MS);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const cancel = () => void reader.cancel();
  signal.addEventListener("abort", cancel, { once: true });
  let text = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
  } finally {
    signal.removeEventListener("abort", cancel);
  }
  assert.ok(!signal.aborted, `the stream ended within ${DEADLINE_MS} ms: ${text}`);
  return text;
}

/** The first error of an operation over GraphQL over WebSocket (graphql-ws). */
function wsFirstError(
  fixture: SubscriptionFixture,
  token: string,
  query: string = OPERATIONS["OnReviewEmail.graphql"],
): Promise<unknown> {
  const client = createClient({
    url: fixture.wsUrl,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
  });
  return new Promise<unknown>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no WebSocket answer")), DEADLINE_MS);
    const done = (value: unknown) => {
      clearTimeout(timer);
      void client.dispose();
      resolve(value);
    };
    client.subscribe({ query }, {
      next: (value) => done({ next: value }),
      error: (error) => done({ error }),
      complete: () => done({ complete: true }),
    });
  });
}

Deno.test("issue 40: a token lacking a field's scope is refused by the one door on GraphQL, SSE, multipart, WebSocket, Connect and MCP; no subgraph is called", async () => {
  await withDoorRouter(async (fixture) => {
    const token = await fixture.token("");
    const bearer = { authorization: `Bearer ${token}` };
    const json = { "content-type": "application/json" };
    const connectHeaders = { ...json, ...bearer, "connect-protocol-version": "1" };
    const url = fixture.router.url;

    const graphql = await fetch(fixture.httpUrl, {
      method: "POST",
      headers: { ...json, ...bearer },
      body: JSON.stringify({ query: OPERATIONS["UserEmail.graphql"] }),
    });
    const graphqlBody = await graphql.json();
    assert.equal(graphql.status, 403, JSON.stringify(graphqlBody));
    assert.equal(graphqlBody.errors[0].extensions.code, "FORBIDDEN");
    assert.match(graphqlBody.errors[0].message, /^The operation needs the scopes read:email/);

    for (const accept of ["text/event-stream", "multipart/mixed;subscriptionSpec=1.0"]) {
      const stream = await fetch(fixture.httpUrl, {
        method: "POST",
        headers: { ...json, ...bearer, accept },
        body: JSON.stringify({ query: OPERATIONS["OnReviewEmail.graphql"] }),
      });
      const text = await streamText(stream);
      assert.match(text, /The subscription needs the scopes read:email/, accept);
      assert.match(text, /"FORBIDDEN"/, accept);
    }

    const ws = await wsFirstError(fixture, token) as { error?: { message: string }[] };
    assert.ok(Array.isArray(ws.error), JSON.stringify(ws));
    assert.match(ws.error[0]!.message, /The subscription needs the scopes read:email/);
    // A query sent over the socket goes through the same door.
    const wsQuery = await wsFirstError(fixture, token, OPERATIONS["UserEmail.graphql"]) as {
      error?: { message: string }[];
    };
    assert.ok(Array.isArray(wsQuery.error), JSON.stringify(wsQuery));
    assert.match(wsQuery.error[0]!.message, /The operation needs the scopes read:email/);

    const connect = await fetch(`${url}/test.v1.UserService/UserEmail`, {
      method: "POST",
      headers: connectHeaders,
      body: "{}",
    });
    const connectBody = await connect.json();
    assert.equal(connect.status, 403, JSON.stringify(connectBody));
    assert.equal(connectBody.code, "permission_denied");
    assert.match(connectBody.message, /^Method UserEmail needs the scopes read:email/);

    const mcp = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: { ...json, ...bearer, accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "execute_operation_user_email",
          arguments: {},
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }),
    });
    const mcpBody = await mcp.json();
    assert.equal(mcpBody.result?.isError, true, JSON.stringify(mcpBody));
    assert.match(
      mcpBody.result.content[0].text,
      /Tool execute_operation_user_email needs the scopes read:email/,
    );

    assert.deepEqual(fixture.entityQueries, [], "no subgraph was called");
    assert.equal(fixture.feed.opened, 0, "no upstream subscription was opened");
  });
});

Deno.test("issue 40: the door lets a token holding the scope through (GraphQL, Connect)", async () => {
  await withDoorRouter(async (fixture) => {
    const token = await fixture.token("read:email");
    const headers = {
      "content-type": "application/json",
      authorization: `Bearer ${token}`,
      "connect-protocol-version": "1",
    };
    const graphql = await fetch(fixture.httpUrl, {
      method: "POST",
      headers,
      body: JSON.stringify({ query: OPERATIONS["UserEmail.graphql"] }),
    });
    assert.deepEqual(await graphql.json(), {
      data: { user: { name: "Ada", email: "ada@example.com" } },
    });
    const connect = await fetch(`${fixture.router.url}/test.v1.UserService/UserEmail`, {
      method: "POST",
      headers,
      body: "{}",
    });
    assert.deepEqual(await connect.json(), {
      user: { name: "Ada", email: "ada@example.com" },
    });
  });
});
