/**
 * Issue 30, trusted documents and APQ over real sockets: manifests (Apollo's
 * format and a plain map) and operations_dir served by hash (POST and GET,
 * `documentId` as `sha256:<hex>` or bare hex, Apollo's `sha256Hash`); the
 * safelist on all three facets; a manifest reloaded; a hash mismatch; and
 * Apollo Client's persisted-queries link (sha256 from WebCrypto) in APQ and
 * manifest modes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ApolloClient, gql, HttpLink, InMemoryCache } from "@apollo/client";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { sha256Hex } from "../../lib/persisted/mod.ts";
import { helloWorkspace } from "./_workspace.ts";

const HELLO_OP = "query Hello { hello }\n";
const MANIFEST_DOC = "query FromManifest { hello }";
const MAP_DOC = "query FromMap { hello }";

/** Writes Apollo's persisted query manifest with one query, its id the body's SHA-256. */
async function writeApolloManifest(path: string, name: string, body: string): Promise<void> {
  const operation = { id: await sha256Hex(body), name, type: "query", body };
  const manifest = {
    format: "apollo-persisted-query-manifest",
    version: 1,
    operations: [operation],
  };
  await Deno.writeTextFile(path, JSON.stringify(manifest));
}

async function setUp(
  extra: string,
): Promise<{ router: RunningRouter; dir: string; close(): Promise<void> }> {
  const workspace = await helloWorkspace(
    `log_level: error
persisted_operations:
  manifests: [apollo.json, map.json]
${extra}`,
    { mcp: "arbitrary" },
  );
  const dir = workspace.dir;
  await Deno.writeTextFile(join(dir, "ops", "Hello.graphql"), HELLO_OP);
  await writeApolloManifest(join(dir, "apollo.json"), "FromManifest", MANIFEST_DOC);
  await Deno.writeTextFile(
    join(dir, "map.json"),
    JSON.stringify({ [`sha256:${await sha256Hex(MAP_DOC)}`]: MAP_DOC }),
  );
  const router = await startRouter({ configPath: workspace.configPath });
  return {
    router,
    dir,
    async close() {
      await router.shutdown();
      await workspace.close();
    },
  };
}

async function post(
  url: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

function codeOf(json: Record<string, unknown>): unknown {
  return (json.errors as { extensions: { code: string } }[] | undefined)?.[0]?.extensions.code;
}

async function mcpCall(url: string, query: string): Promise<Response> {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
  };
  const init = await fetch(`${url}/mcp`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    }),
  });
  await init.body?.cancel();
  const session = init.headers.get("mcp-session-id")!;
  return await fetch(`${url}/mcp`, {
    method: "POST",
    headers: { ...headers, "mcp-session-id": session },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "execute_graphql", arguments: { query } },
    }),
  });
}

Deno.test("issue 30: trusted documents by hash (manifests and operations_dir; POST, GET, documentId, sha256Hash)", async () => {
  const { router, close } = await setUp("");
  try {
    const url = router.url;
    const want = { data: { hello: "world" } };
    const opHash = await sha256Hex(HELLO_OP);
    assert.deepEqual((await post(url, { documentId: `sha256:${opHash}` })).json, want);
    assert.deepEqual((await post(url, { documentId: await sha256Hex(MAP_DOC) })).json, want);
    const apollo = { persistedQuery: { version: 1, sha256Hash: await sha256Hex(MANIFEST_DOC) } };
    assert.deepEqual((await post(url, { extensions: apollo })).json, want);
    const get = await fetch(`${url}/graphql?documentId=${encodeURIComponent(`sha256:${opHash}`)}`, {
      headers: { accept: "application/json", "graphql-preflight": "1" },
    });
    assert.deepEqual(await get.json(), want);
    // The persisted document never went through the parse cache.
    assert.equal(router.state().engine.prepared.get(`${HELLO_OP}\u0000`), undefined);
    // Unknown hash: Apollo's answer.
    const unknown = await post(url, { documentId: "ab".repeat(32) });
    assert.deepEqual(unknown.json.errors, [{
      message: "PersistedQueryNotFound",
      extensions: {
        code: "PERSISTED_QUERY_NOT_FOUND",
        request_id: (unknown.json.errors as { extensions: { request_id: string } }[])[0]!.extensions
          .request_id,
      },
    }]);
    // A hash that is not the text's: 400, nothing run or registered.
    const mismatch = await post(url, {
      query: "{ hello }",
      extensions: { persistedQuery: { version: 1, sha256Hash: "cd".repeat(32) } },
    });
    assert.equal(mismatch.status, 400);
    assert.equal(codeOf(mismatch.json), "PERSISTED_QUERY_HASH_MISMATCH");
    assert.equal(
      codeOf((await post(url, { documentId: "cd".repeat(32) })).json),
      "PERSISTED_QUERY_NOT_FOUND",
    );
  } finally {
    await close();
  }
});

Deno.test("issue 30: the safelist refuses other documents on GraphQL and MCP (400 PERSISTED_QUERY_NOT_IN_LIST); Connect runs operations_dir; APQ is off", async () => {
  const { router, close } = await setUp("  safelist: { enabled: true }");
  try {
    const url = router.url;
    const refused = await post(url, { query: "{ hello }" });
    assert.equal(refused.status, 400);
    assert.equal(codeOf(refused.json), "PERSISTED_QUERY_NOT_IN_LIST");
    // APQ registration is no way in.
    const apq = await post(url, {
      query: "{ hello }",
      extensions: { persistedQuery: { version: 1, sha256Hash: await sha256Hex("{ hello }") } },
    });
    assert.equal(codeOf(apq.json), "PERSISTED_QUERY_NOT_IN_LIST");
    // A trusted document's full text, and its hash, still run.
    assert.deepEqual((await post(url, { query: MAP_DOC })).json, { data: { hello: "world" } });
    assert.deepEqual((await post(url, { documentId: await sha256Hex(HELLO_OP) })).json, {
      data: { hello: "world" },
    });
    const mcp = await mcpCall(url, "{ hello }");
    assert.equal(mcp.status, 400);
    const body = await mcp.json();
    assert.equal(body.error.data.code, "PERSISTED_QUERY_NOT_IN_LIST");
    const trustedMcp = await mcpCall(url, MAP_DOC);
    assert.equal(trustedMcp.status, 200);
    assert.match(JSON.stringify(await trustedMcp.json()), /world/);
    const connect = await fetch(`${url}/service.v1.GraphService/Hello`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: "{}",
    });
    assert.equal(connect.status, 200);
    assert.deepEqual(await connect.json(), { hello: "world" });
  } finally {
    await close();
  }
});

Deno.test("issue 30: a changed manifest is reloaded like the supergraph", async () => {
  const { router, dir, close } = await setUp("");
  try {
    const added = "query Added { hello }";
    assert.equal(
      codeOf((await post(router.url, { documentId: await sha256Hex(added) })).json),
      "PERSISTED_QUERY_NOT_FOUND",
    );
    await Deno.writeTextFile(
      join(dir, "map.json"),
      JSON.stringify({ [await sha256Hex(added)]: added }),
    );
    assert.equal(await router.reload(), true);
    assert.deepEqual((await post(router.url, { documentId: await sha256Hex(added) })).json, {
      data: { hello: "world" },
    });
    assert.equal(
      codeOf((await post(router.url, { documentId: await sha256Hex(MAP_DOC) })).json),
      "PERSISTED_QUERY_NOT_FOUND",
    );
  } finally {
    await close();
  }
});

/** Apollo Client 4 with its persisted-queries link; sha256 from WebCrypto (no crypto-hash). */
function apolloClient(url: string, seen: unknown[]) {
  const recording: typeof fetch = (input, init) => {
    seen.push(JSON.parse(String(init?.body ?? "{}")));
    return fetch(input, init);
  };
  return new ApolloClient({
    cache: new InMemoryCache(),
    link: new PersistedQueryLink({ sha256: (text: string) => sha256Hex(text) }).concat(
      new HttpLink({ uri: `${url}/graphql`, fetch: recording }),
    ),
  });
}

/** The text Apollo Client sends for a document (its manifest generator prints the same). */
async function sentText(document: ReturnType<typeof gql>): Promise<string> {
  let text = "";
  const client = new ApolloClient({
    cache: new InMemoryCache(),
    link: new HttpLink({
      uri: "http://127.0.0.1:9/graphql",
      fetch: (_input, init) => {
        text = JSON.parse(String(init?.body)).query;
        return Promise.resolve(Response.json({ data: { hello: "world" } }));
      },
    }),
  });
  await client.query({ query: document });
  return text;
}

Deno.test("issue 30: Apollo Client's persisted-queries link against GW in APQ mode", async () => {
  const { router, close } = await setUp("");
  try {
    // Hash first (not found), then hash + text (registered), then, for a new client, the hash alone.
    const seen: Record<string, unknown>[] = [];
    const first = apolloClient(router.url, seen);
    const result = await first.query({ query: gql`query Apq { hello }` });
    assert.deepEqual(result.data, { hello: "world" });
    assert.equal(seen.length, 2);
    assert.equal(seen[0]!.query, undefined);
    assert.equal(typeof seen[1]!.query, "string");
    const again: Record<string, unknown>[] = [];
    const second = apolloClient(router.url, again);
    assert.deepEqual((await second.query({ query: gql`query Apq { hello }` })).data, {
      hello: "world",
    });
    assert.equal(again.length, 1, "served by hash alone");
  } finally {
    await close();
  }
});

Deno.test("issue 30: Apollo Client's persisted-queries link against GW in manifest mode (safelist on)", async () => {
  const { router, dir, close } = await setUp("  safelist: { enabled: true }");
  try {
    // The manifest holds the operation as Apollo's tooling prints it.
    const document = gql`query FromApolloManifest { hello }`;
    const body = await sentText(document);
    await writeApolloManifest(join(dir, "apollo.json"), "FromApolloManifest", body);
    assert.equal(await router.reload(), true);
    const seen: Record<string, unknown>[] = [];
    const client = apolloClient(router.url, seen);
    assert.deepEqual((await client.query({ query: document })).data, { hello: "world" });
    assert.equal(seen.length, 1, "one request, by id");
    assert.equal(seen[0]!.query, undefined);
    // An operation outside the manifest is refused, whatever the link does.
    const other = apolloClient(router.url, []);
    await assert.rejects(
      other.query({ query: gql`query NotListed { hello }` }),
      /not a trusted document/,
    );
  } finally {
    await close();
  }
});
