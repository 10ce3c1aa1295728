/**
 * Issue 31: what holds for every answer holds for deferred parts: a subgraph failure is an
 * error of the part that needed it (the primary part is whole), `@authenticated` fields are
 * removed in a deferred fragment as anywhere, the parser limits count deferred fields like
 * any others, and ART shows the deferred branch and when each part was sent.
 */
import assert from "node:assert/strict";
import { readParts, root, startDeferRouter } from "./_graph.ts";
import { STREAM_DEADLINE_MS } from "../_deadline.ts";

const MULTIPART = "multipart/mixed;deferSpec=20220824,application/json";

function post(
  url: string,
  query: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: MULTIPART, ...headers },
    body: JSON.stringify({ query }),
    // A stream that never ends fails the test (issue 39), never hangs it.
    signal: AbortSignal.timeout(STREAM_DEADLINE_MS),
  });
}

Deno.test("issue 31: a deferred part's subgraph is down: the primary part is whole, the part carries the error", async () => {
  const router = await startDeferRouter({ pricesDown: true });
  try {
    const parts = await readParts(
      await post(router.url, `{ products { name ... @defer { price } } }`),
    );
    assert.deepEqual(parts[0], {
      data: { products: root.products.map((p) => ({ name: p.name })) },
      hasNext: true,
    });
    const entries = parts.slice(1).flatMap((p) =>
      (p.incremental ?? []) as {
        data: unknown;
        path: unknown[];
        errors?: { extensions?: { code?: string } }[];
      }[]
    );
    // price is non-null: each product's part is nulled, with the fetch's error.
    assert.deepEqual(entries.map((e) => [e.path, e.data]), [
      [["products", 0], null],
      [["products", 1], null],
      [["products", 2], null],
    ]);
    const codes = entries.flatMap((e) => e.errors ?? []).map((e) => e.extensions?.code);
    assert.ok(codes.includes("SUBGRAPH_UNREACHABLE"), JSON.stringify(codes));
    assert.equal(parts.at(-1)?.hasNext, false);
  } finally {
    await router.close();
  }
});

Deno.test("issue 31: an @authenticated field in a deferred fragment is removed for an anonymous client (null + UNAUTHORIZED_FIELD_OR_TYPE in the part)", async () => {
  const router = await startDeferRouter();
  try {
    const parts = await readParts(
      await post(router.url, `{ products { name ... @defer { price cost } } }`),
    );
    const entries = parts.slice(1).flatMap((p) =>
      (p.incremental ?? []) as {
        data: Record<string, unknown>;
        errors?: { path?: unknown[]; extensions?: { code?: string } }[];
      }[]
    );
    assert.deepEqual(
      entries.map((e) => e.data),
      root.products.map((p) => ({ price: p.price, cost: null })),
    );
    const errors = entries.flatMap((e) => e.errors ?? []);
    assert.deepEqual(
      errors.map((e) => [e.path, e.extensions?.code]),
      [0, 1, 2].map((i) => [["products", i, "cost"], "UNAUTHORIZED_FIELD_OR_TYPE"]),
    );
  } finally {
    await router.close();
  }
});

Deno.test("issue 31: the parser limits count fields inside deferred fragments", async () => {
  const router = await startDeferRouter({
    config: { security: { parser_limits: { total_fields_limit: 3 } } },
  });
  try {
    const response = await post(
      router.url,
      `{ products { name ... @defer { price ... @defer { deal } } } }`,
    );
    assert.equal(response.status, 400);
    assert.match(response.headers.get("content-type") ?? "", /json/);
    const body = await response.json();
    assert.equal(body.data, undefined);
    assert.ok(body.errors?.length > 0);
  } finally {
    await router.close();
  }
});

Deno.test("issue 31: ART: the trace (in the last part) shows the deferred branch after the primary fetch, and each part's sending", async () => {
  const router = await startDeferRouter({ config: { dev_mode: true } });
  try {
    const parts = await readParts(
      await post(router.url, `{ products { name ... @defer(label: "p") { price } } }`, {
        "x-gw-trace": "true",
      }),
    );
    assert.equal(parts[0]?.extensions, undefined);
    const trace = (parts.at(-1)?.extensions as { trace?: Record<string, unknown> })?.trace;
    const fetches = trace?.fetches as { children?: { fetch?: { source_name?: string } }[] };
    assert.deepEqual(fetches?.children?.map((c) => c.fetch?.source_name), ["products", "prices"]);
    const sent = trace?.incremental_parts as {
      index: number;
      labels: string[];
      has_next: boolean;
    }[];
    assert.deepEqual(sent.map((p) => [p.index, p.labels, p.has_next]), [[0, [], true], [
      1,
      ["p"],
      false,
    ]]);
  } finally {
    await router.close();
  }
});

Deno.test("issue 31: Connect ignores @defer in an operation: one answer with every field", async () => {
  const router = await startDeferRouter({
    pricesDelayMs: 20,
    operations: {
      "ProductPrices.graphql":
        `query ProductPrices { products { name ... @defer(label: "p") { price } } }`,
    },
  });
  try {
    const base = router.url.replace(/\/graphql$/, "");
    const response = await fetch(`${base}/service.v1.GraphService/ProductPrices`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: "{}",
      signal: AbortSignal.timeout(STREAM_DEADLINE_MS),
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      products: root.products.map((p) => ({ name: p.name, price: p.price })),
    });
  } finally {
    await router.close();
  }
});

Deno.test("issue 31: metrics count the parts sent: gw_router_incremental_parts_total by kind", async () => {
  const router = await startDeferRouter({
    config: {
      telemetry: { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } } },
    },
  });
  try {
    await readParts(await post(router.url, `{ products { name ... @defer { price } } }`));
    await readParts(await post(router.url, `{ products { name ... @defer { id } } }`));
    const text = await (await fetch(router.metricsUrl!)).text();
    const count = (kind: string) =>
      Number(
        new RegExp(`^gw_router_incremental_parts_total\\{kind="${kind}"\\} (\\d+)`, "m").exec(text)
          ?.[1] ?? 0,
      );
    assert.deepEqual([count("primary"), count("deferred"), count("last")], [1, 0, 2]);
  } finally {
    await router.close();
  }
});

Deno.test("issue 31: MCP ignores @defer in an operation: the tool answers once with every field", async () => {
  const router = await startDeferRouter({
    pricesDelayMs: 20,
    config: { mcp: { enabled: true } },
    operations: {
      "ProductPrices.graphql":
        `query ProductPrices { products { name ... @defer(label: "p") { price } } }`,
    },
  });
  try {
    const mcp = router.url.replace(/\/graphql$/, "/mcp");
    const call = async (body: unknown, session: string | null) => {
      const response = await fetch(mcp, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(session ? { "mcp-session-id": session } : {}),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(STREAM_DEADLINE_MS),
      });
      return { session: response.headers.get("mcp-session-id"), json: await response.json() };
    };
    const init = await call({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    }, null);
    const result = await call({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "execute_operation_product_prices", arguments: {} },
    }, init.session);
    const content = result.json.result?.content?.[0]?.text;
    assert.deepEqual(JSON.parse(content), {
      data: { products: root.products.map((p) => ({ name: p.name, price: p.price })) },
    });
  } finally {
    await router.close();
  }
});

Deno.test("issue 31: engine.max_response_bytes bounds the parts together: past it the stream ends with a RESPONSE_TOO_LARGE part", async () => {
  const router = await startDeferRouter({ config: { engine: { max_response_bytes: 300 } } });
  try {
    const response = await post(
      router.url,
      `{ products { id name ... @defer { price reviews { body stars } } } }`,
    );
    assert.equal(response.status, 200);
    const parts = await readParts(response);
    assert.equal(parts.length, 2);
    assert.equal(parts[0]?.hasNext, true);
    const last = parts[1] as { hasNext: boolean; errors?: { extensions?: { code?: string } }[] };
    assert.equal(last.hasNext, false);
    assert.deepEqual(last.errors?.map((e) => e.extensions?.code), ["RESPONSE_TOO_LARGE"]);
  } finally {
    await router.close();
  }
});
