import assert from "node:assert/strict";
import { OPERATION_EXAMPLES } from "../../demo/examples.ts";
import { DEMO_QUERY, startDemo } from "../../demo/main.ts";
import { type RunningDemo, startDemoSubgraphs } from "../../demo/subgraphs/mod.ts";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { silentLogger } from "../../lib/log/mod.ts";
import { runCli } from "./_cli.ts";

const ROOT = new URL("../../", import.meta.url);

Deno.test("issue 2.4: `gw-router compose --config config.yaml` prints the committed schema/supergraph.graphql", async () => {
  const result = await runCli(["compose", "--config", "config.yaml"], ROOT.pathname);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(
    result.stdout,
    await Deno.readTextFile(new URL("schema/supergraph.graphql", ROOT)),
  );
});

Deno.test("issue 2.4: `compose --out` writes the file; a conflict exits 1 naming each subgraph file, line and column", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_compose_" });
  try {
    const link =
      'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';
    await Deno.writeTextFile(`${dir}/a.graphql`, `${link}\ntype Query {\n  hello: String\n}\n`);
    await Deno.writeTextFile(`${dir}/b.graphql`, `${link}\ntype Query {\n  bye: String\n}\n`);
    const config = (b: string) =>
      [
        "subgraphs:",
        "  - { name: a, routing_url: http://127.0.0.1:5001/graphql, schema_file: a.graphql }",
        `  - { name: b, routing_url: http://127.0.0.1:5002/graphql, schema_file: ${b} }`,
        "",
      ].join("\n");
    await Deno.mkdir(`${dir}/conf`);
    // schema_file is relative to the config file, not to the working directory.
    await Deno.writeTextFile(
      `${dir}/conf/ok.yaml`,
      config("../b.graphql").replace("a.graphql", "../a.graphql"),
    );
    const ok = await runCli(["compose", "--config", "conf/ok.yaml", "--out", "out.graphql"], dir);
    assert.equal(ok.code, 0, ok.stderr);
    const written = await Deno.readTextFile(`${dir}/out.graphql`);
    assert.match(
      written,
      /B @join__graph\(name: "b", url: "http:\/\/127\.0\.0\.1:5002\/graphql"\)/,
    );
    assert.match(written, /bye: String @join__field\(graph: B\)/);

    await Deno.writeTextFile(
      `${dir}/c.graphql`,
      `${link}\ntype Query {\n  bye: String\n  hello: Int\n}\n`,
    );
    await Deno.writeTextFile(`${dir}/bad.yaml`, config("c.graphql"));
    const bad = await runCli(["compose", "--config", "bad.yaml"], dir);
    assert.equal(bad.code, 1);
    assert.equal(bad.stdout, "");
    const lines = bad.stderr.split("\n").filter((l) => l.includes("FIELD_TYPE_MISMATCH"));
    assert.deepEqual(lines.map((l) => l.slice(0, l.indexOf(" FIELD_TYPE_MISMATCH"))), [
      "a.graphql:3:3: [a]",
      "c.graphql:4:3: [b]",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("issue 2.4: compose refuses a config without subgraphs, naming the key", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_compose_" });
  try {
    await Deno.writeTextFile(`${dir}/config.yaml`, "dev_mode: true\n");
    const result = await runCli(["compose"], dir);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /Cannot read "subgraphs": expected a non-empty list/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

interface SubgraphCall {
  readonly subgraph: string;
  readonly query: string;
  readonly variables: Record<string, unknown>;
}

/** Starts the demo subgraphs on free ports and the router on config.yaml (port 0) in front of them. */
async function withDemo(
  fn: (router: RunningRouter, calls: SubgraphCall[], demo: RunningDemo) => Promise<void>,
): Promise<void> {
  const calls: SubgraphCall[] = [];
  const demo = startDemoSubgraphs({
    basePort: 0,
    onRequest: (subgraph, body) =>
      calls.push({
        subgraph,
        query: body.query,
        variables: (body.variables ?? {}) as Record<string, unknown>,
      }),
  });
  let router: RunningRouter | undefined;
  try {
    router = await startRouter({
      configPath: new URL("config.yaml", ROOT).pathname,
      env: { LISTEN_ADDR: "127.0.0.1:0" },
      supergraphSdl: demo.supergraphSdl,
      log: silentLogger,
    });
    await fn(router, calls, demo);
  } finally {
    await router?.shutdown();
    await demo.close();
  }
}

async function postGraphql(
  router: RunningRouter,
  body: { query: string; operationName?: string; variables?: unknown },
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${router.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

/** Calls an MCP tool on the router (stateless, protocol 2026-07-28). */
function callTool(
  router: RunningRouter,
  call: { readonly name: string; readonly args: unknown },
): Promise<Response> {
  return fetch(`${router.url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: call.name,
        arguments: call.args,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
}

const CROSS_QUERY = `{
  product(upc: "5") {
    name
    price
    shippingEstimate
    stockStatus
    reviews { rating author { name username } }
  }
}`;

Deno.test("issue 2.7: `deno task demo`'s router answers a query crossing all four subgraphs over HTTP", async () => {
  await withDemo(async (router, calls) => {
    const { status, json } = await postGraphql(router, { query: CROSS_QUERY });
    assert.equal(status, 200);
    assert.deepEqual(json, {
      data: {
        product: {
          name: "Camping Tent",
          price: 229,
          shippingEstimate: 7.1, // inventory: 5 + 0.5 * 4.2 kg, from products' price and weight
          stockStatus: "IN_STOCK",
          reviews: [{ rating: 2, author: { name: "Ada Lovelace", username: "ada" } }],
        },
      },
    });
    assert.deepEqual(
      [...new Set(calls.map((c) => c.subgraph))].sort(),
      ["accounts", "inventory", "products", "reviews"],
    );
    // @requires: inventory got price and weight in the composite-key representation.
    const inventory = calls.find((c) => c.subgraph === "inventory");
    assert.deepEqual(inventory?.variables.representations, [
      { __typename: "Product", upc: "5", sku: "OUT-TENT-2P", price: 229, weight: 4.2 },
    ]);
    // @provides: username came from reviews; accounts was asked only for the name.
    const accounts = calls.filter((c) => c.subgraph === "accounts");
    assert.equal(accounts.length, 1);
    assert.doesNotMatch(accounts[0]!.query, /username/);
  });
});

Deno.test("issue 2.7: every operation of operations/ answers its example with the expected data", async () => {
  await withDemo(async (router) => {
    // Protected operations (GetUserAccount) are covered by the authorization test below;
    // AddReview runs last because it changes the reviews the others read.
    const names = Object.entries(OPERATION_EXAMPLES)
      .filter(([name, example]) =>
        name !== "AddReview" && example.protectedFields.length === 0 &&
        example.trigger === undefined // subscriptions: not over POST
      )
      .map(([name]) => name);
    assert.ok(names.length >= 5);
    for (const name of [...names, "AddReview"]) {
      const example = OPERATION_EXAMPLES[name]!;
      const query = await Deno.readTextFile(new URL(`operations/${name}.graphql`, ROOT));
      const { status, json } = await postGraphql(router, {
        query,
        operationName: name,
        variables: example.variables,
      });
      assert.equal(status, 200, name);
      assert.deepEqual(json, { data: example.data }, name);
    }
  });
});

Deno.test("issue 2.7: `deno task demo` prints the GraphQL, MCP, Connect and playground URLs, and its curl examples answer", async () => {
  const demo = await startDemo({
    configPath: new URL("config.yaml", ROOT).pathname,
    env: { LISTEN_ADDR: "127.0.0.1:0" },
    freePorts: true,
    log: silentLogger,
  });
  try {
    const base = demo.router.url;
    const lines = demo.banner.split("\n").map((l) => l.trim());
    for (
      const expected of [
        `GraphQL     ${base}/graphql`,
        `MCP         ${base}/mcp`,
        `Connect     ${base}/service.v1.GraphService/<Operation>`,
        `Playground  ${base}/`,
      ]
    ) {
      assert.ok(lines.includes(expected), `banner lacks "${expected}":\n${demo.banner}`);
    }
    assert.ok(lines.includes(`-d '${JSON.stringify({ query: DEMO_QUERY })}'`));
    const graphql = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: DEMO_QUERY }),
    });
    const body = await graphql.json();
    assert.equal(body.data?.product?.shippingEstimate, 7.1, JSON.stringify(body));
    assert.deepEqual(body.data?.product?.reviews, [
      { rating: 2, author: { name: "Ada Lovelace", username: "ada" } },
    ]);
    const connectUrl = lines.find((l) => l.startsWith("curl -s '"))?.slice("curl -s '".length, -1);
    if (connectUrl === undefined) assert.fail(`banner lacks the Connect curl:\n${demo.banner}`);
    assert.ok(connectUrl.startsWith(`${base}/service.v1.GraphService/GetProduct?`), connectUrl);
    const connect = await fetch(connectUrl);
    assert.equal(connect.status, 200);
    const message = await connect.json();
    assert.equal(message.product?.name, "Camping Tent");
    assert.equal(message.product?.category, "CATEGORY_OUTDOOR");
  } finally {
    await demo.close();
  }
});

Deno.test({
  name:
    "issue 18: secure default — without authentication.jwt.jwks, /graphql never serves @authenticated / @requiresScopes fields (GetUserAccount)",
  fn: async () => {
    await withDemo(async (router) => {
      const example = OPERATION_EXAMPLES.GetUserAccount!;
      const query = await Deno.readTextFile(new URL("operations/GetUserAccount.graphql", ROOT));
      const { json } = await postGraphql(router, { query, variables: example.variables });
      const data = JSON.stringify(json.data ?? null);
      assert.doesNotMatch(data, /ada@example\.com/, "User.email (@requiresScopes) leaked");
      assert.doesNotMatch(data, /VISA/, "Order.paymentMethod (@requiresScopes) leaked");
      assert.ok(Array.isArray(json.errors) && json.errors.length > 0, "an error says why");
      assert.ok(
        json.errors.every((e: { extensions?: { code?: string } }) =>
          e.extensions?.code === "UNAUTHORIZED_FIELD_OR_TYPE"
        ),
        JSON.stringify(json.errors),
      );
      // The same on MCP tools (OAuth off: every caller is anonymous).
      const mcp = await callTool(router, {
        name: "execute_operation_get_user_account",
        args: example.variables,
      });
      const text = await mcp.text();
      assert.equal(mcp.status, 200, text);
      assert.match(text, /Unauthorized field or type/);
      assert.doesNotMatch(text, /ada@example\.com|VISA/);
    });
  },
});

Deno.test("issue 18: reject_operation_if_unauthorized refuses the MCP tool whose fields the caller may not see (nothing runs)", async () => {
  const calls: string[] = [];
  const demo = startDemoSubgraphs({ basePort: 0, onRequest: (subgraph) => calls.push(subgraph) });
  try {
    const router = await startRouter({
      configPath: new URL("config.yaml", ROOT).pathname,
      env: { LISTEN_ADDR: "127.0.0.1:0", AUTHORIZATION_REJECT_OPERATION_IF_UNAUTHORIZED: "true" },
      supergraphSdl: demo.supergraphSdl,
      log: silentLogger,
    });
    try {
      const mcp = await callTool(router, {
        name: "execute_operation_get_user_account",
        args: OPERATION_EXAMPLES.GetUserAccount!.variables,
      });
      const body = await mcp.json();
      assert.equal(body.result.isError, true);
      // The same door as GraphQL and Connect (authorizeOperation): the tool needs a token.
      assert.match(
        body.result.content[0].text,
        /Tool execute_operation_get_user_account needs an authenticated request/,
      );
      assert.doesNotMatch(JSON.stringify(body), /ada@example\.com|VISA|Ada/);
      assert.deepEqual(calls, [], "no subgraph was called");
    } finally {
      await router.shutdown();
    }
  } finally {
    await demo.close();
  }
});
