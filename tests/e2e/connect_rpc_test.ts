/**
 * Connect RPC facet end to end: the real router over the demo subgraphs, a real
 * Connect client (connect-web's fetch transport, JSON, `useHttpGet`) whose
 * service descriptors come from `buf build` of the proto that `gw-router
 * generate proto` writes, `buf lint`, `redocly lint`, and raw HTTP for every
 * refusal.
 */
import assert from "node:assert/strict";
import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { SignJWT } from "jose";
import { startDemoSubgraphs } from "../../demo/subgraphs/mod.ts";
import { startRouter } from "../../lib/cli/serve.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import type { SubgraphFetch } from "../../lib/engine/mod.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { runDeno } from "./_cli.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const SERVICE = "service.v1.GraphService";
const BUF = "npm:@bufbuild/buf@1.74.0";
const REDOCLY = "npm:@redocly/cli@2.77.0";
const SECRET = "connect-e2e-secret-that-is-long-enough-for-hs256";

/** `gw-router generate proto --config config.yaml --out <dir>`, plus a STANDARD buf.yaml. */
async function generateDemoProto(dir: string): Promise<string> {
  const result = await runDeno([
    "main.ts",
    "generate",
    "proto",
    "--config",
    "config.yaml",
    "--out",
    dir,
  ], {
    cwd: ROOT,
    project: true,
  });
  assert.equal(result.code, 0, result.stderr);
  await Deno.writeTextFile(`${dir}/buf.yaml`, "version: v2\nlint:\n  use:\n    - STANDARD\n");
  return `${dir}/service/v1/service.proto`;
}

async function bufImage(dir: string): Promise<Uint8Array> {
  const built = await runDeno([BUF, "build", dir, "-o", `${dir}/image.binpb`], {
    cwd: dir,
    project: false,
  });
  assert.equal(built.code, 0, built.stderr);
  return await Deno.readFile(`${dir}/image.binpb`);
}

interface TestRouter {
  readonly url: string;
  close(): Promise<void>;
}

async function startConnectRouter(
  overrides: Record<string, unknown> = {},
  options: { readonly fetch?: SubgraphFetch } = {},
): Promise<TestRouter> {
  const demo = startDemoSubgraphs({ basePort: 0 });
  try {
    const config = parseConfig({
      listen_addr: "127.0.0.1:0",
      log_level: "error",
      supergraph_path: `${ROOT}schema/supergraph.graphql`,
      operations_dir: `${ROOT}operations`,
      mcp: { enabled: false },
      connect_rpc: { get_cache_max_age: 60 },
      ...overrides,
    });
    const router = await startRouter({
      config,
      supergraphSdl: demo.supergraphSdl,
      log: createLogger({ level: "error", write: () => {} }),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    return {
      url: router.url,
      close: async () => {
        await router.shutdown();
        await demo.close();
      },
    };
  } catch (error) {
    await demo.close();
    throw error;
  }
}

// deno-lint-ignore no-explicit-any
type DynamicClient = Record<string, (request: object, options?: object) => Promise<any>>;

async function connectClient(url: string, dir: string, headers: Record<string, string> = {}) {
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, await bufImage(dir)));
  const service = registry.getService(SERVICE);
  assert.ok(service, `${SERVICE} is in the buf image`);
  const methods: string[] = [];
  const transport = createConnectTransport({
    baseUrl: url,
    useHttpGet: true,
    fetch: (input, init) => {
      methods.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`);
      const merged = new Headers(init?.headers);
      for (const [name, value] of Object.entries(headers)) merged.set(name, value);
      return fetch(input, { ...init, headers: merged });
    },
  });
  const client = createClient(service, transport) as unknown as DynamicClient;
  return { client, methods, registry };
}

async function token(scopes: string): Promise<string> {
  return await new SignJWT({ scope: scopes })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("1")
    .setIssuer("https://idp.test")
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(SECRET));
}

async function connectError(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ConnectError, `expected a ConnectError, got ${error}`);
    return error;
  }
  assert.fail("expected the call to fail");
}

Deno.test("issue 5: the generated proto of the demo operations passes `buf lint` (STANDARD) and `buf build`", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_connect_proto_" });
  try {
    const protoPath = await generateDemoProto(dir);
    const proto = await Deno.readTextFile(protoPath);
    assert.match(proto, /rpc GetProduct\(GetProductRequest\) returns \(GetProductResponse\)/);
    assert.ok((await Deno.stat(`${dir}/service/v1/service.proto.lock.json`)).isFile);
    const lint = await runDeno([BUF, "lint", dir], { cwd: dir, project: false });
    assert.equal(lint.code, 0, `buf lint: ${lint.stdout}${lint.stderr}`);
    assert.equal(lint.stdout.trim(), "");
    const image = await bufImage(dir);
    const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, image));
    const methods = registry.getService(SERVICE)?.methods.map((m) => [m.name, m.idempotency]);
    assert.deepEqual(methods, [
      ["AddReview", 0],
      ["GetProduct", 1],
      ["GetProductsByStock", 1],
      ["GetUser", 1],
      ["GetUserAccount", 1],
      ["ListProducts", 1],
      ["OnReviewAdded", 0],
      ["SearchCatalog", 1],
    ]);
    assert.equal(
      registry.getService(SERVICE)?.methods.find((m) => m.name === "OnReviewAdded")?.methodKind,
      "server_streaming",
    );
    // The lint is real: the same file with a non-standard service name fails it.
    await Deno.writeTextFile(protoPath, proto.replace("service GraphService {", "service Graph {"));
    const bad = await runDeno([BUF, "lint", dir], { cwd: dir, project: false });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stdout + bad.stderr, /Service name "Graph" should be suffixed with "Service"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("issue 5: `generate openapi` writes OpenAPI 3.1 that `redocly lint` accepts", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_connect_openapi_" });
  try {
    const out = `${dir}/openapi.json`;
    const result = await runDeno([
      "main.ts",
      "generate",
      "openapi",
      "--config",
      "config.yaml",
      "--out",
      out,
    ], {
      cwd: ROOT,
      project: true,
    });
    assert.equal(result.code, 0, result.stderr);
    const doc = JSON.parse(await Deno.readTextFile(out));
    assert.equal(doc.openapi, "3.1.0");
    assert.deepEqual(Object.keys(doc.paths[`/${SERVICE}/GetProduct`]), ["post", "get"]);
    assert.deepEqual(Object.keys(doc.paths[`/${SERVICE}/AddReview`]), ["post"]);
    const lint = await runDeno([REDOCLY, "lint", out], { cwd: dir, project: false });
    assert.equal(lint.code, 0, `redocly lint: ${lint.stdout}${lint.stderr}`);
    assert.match(lint.stdout + lint.stderr, /Your API description is valid/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("spec 4.2/4.3: a real Connect client calls queries over GET and mutations over POST, with the right data", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_connect_client_" });
  const router = await startConnectRouter();
  try {
    await generateDemoProto(dir);
    const { client, methods, registry } = await connectClient(router.url, dir);
    const category = registry.getEnum("service.v1.Category");
    assert.ok(category);
    const furniture = category.values.find((v) => v.name === "CATEGORY_FURNITURE")!.number;

    const product = await client.getProduct!({ upc: "1" });
    assert.equal(product.product.name, "Oak Dining Table");
    assert.equal(product.product.category, furniture);
    assert.deepEqual(
      product.product.reviews.map((
        r: { rating: number; author: { username: string } },
      ) => [r.rating, r.author.username]),
      [[5, "ada"], [4, "alan"]],
    );

    const listed = await client.listProducts!({ filter: { category: furniture, maxPrice: 500 } });
    assert.deepEqual(listed.products.map((p: { upc: string }) => p.upc), ["2"]);
    assert.equal(listed.products[0].category, furniture);

    const added = await client.addReview!({
      input: { productUpc: "3", authorId: "2", body: "Great pan", rating: 5 },
    });
    assert.equal(added.addReview.body, "Great pan");
    assert.equal(added.addReview.product.upc, "3");

    assert.deepEqual(methods, [
      `GET /${SERVICE}/GetProduct`,
      `GET /${SERVICE}/ListProducts`,
      `POST /${SERVICE}/AddReview`,
    ]);
  } finally {
    await router.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DESIGN §4: GraphQL errors reach a Connect client as ConnectError with the first error's code; the body has graphql_errors", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_connect_error_" });
  const router = await startConnectRouter();
  try {
    await generateDemoProto(dir);
    const { client } = await connectClient(router.url, dir);
    const error = await connectError(
      client.addReview!({ input: { productUpc: "1", authorId: "1", body: "x", rating: 9 } }),
    );
    assert.equal(error.code, Code.InvalidArgument);
    assert.match(error.rawMessage, /Rating must be between 1 and 5, got 9/);

    const response = await fetch(`${router.url}/${SERVICE}/AddReview`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: JSON.stringify({ input: { productUpc: "1", authorId: "1", body: "x", rating: 9 } }),
    });
    assert.equal(response.status, 400);
    const body = await response.json();
    assert.equal(body.code, "invalid_argument");
    assert.equal(body.graphql_errors.length, 1);
    // subgraph_error_propagation wraps the subgraph's errors (issue 14).
    const [inner] = body.graphql_errors[0].extensions.errors;
    assert.match(inner.message, /Rating must be between 1 and 5/);
    assert.deepEqual(inner.path, ["addReview"]);
    assert.deepEqual(body.graphql_errors[0].path, ["addReview"]);
  } finally {
    await router.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("issue 18: Connect in the default mode: protected fields are removed and the method error carries the UNAUTHORIZED_FIELD_OR_TYPE field errors", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_connect_auth_" });
  const router = await startConnectRouter({
    authentication: { jwt: { jwks: [{ secret: SECRET, symmetric_algorithm: "HS256" }] } },
  });
  try {
    const response = await fetch(`${router.url}/${SERVICE}/GetUserAccount`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: JSON.stringify({ id: "1" }),
    });
    // Anonymous: told to authenticate (RFC 6750 §3), not that it may not.
    assert.equal(response.status, 401);
    assert.match(response.headers.get("www-authenticate") ?? "", /^Bearer/);
    const body = await response.json();
    assert.equal(body.code, "unauthenticated");
    const codes = new Set(
      body.graphql_errors.map((e: { extensions: { code: string } }) => e.extensions.code),
    );
    assert.deepEqual([...codes], ["UNAUTHORIZED_FIELD_OR_TYPE"]);
    assert.doesNotMatch(JSON.stringify(body), /ada@example\.com|VISA/);
    const callWith = async (scopes: string) =>
      await fetch(`${router.url}/${SERVICE}/GetUserAccount`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "connect-protocol-version": "1",
          authorization: `Bearer ${await token(scopes)}`,
        },
        body: JSON.stringify({ id: "1" }),
      });
    const weak = await callWith("read:email");
    assert.equal(weak.status, 403);
    assert.equal(weak.headers.get("www-authenticate"), null);
    assert.equal((await weak.json()).code, "permission_denied");
    const strong = await callWith("read:email read:orders read:billing");
    assert.equal(strong.status, 200);
    assert.match(await strong.text(), /@/);
  } finally {
    await router.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("issue 5/18: with reject_operation_if_unauthorized, @authenticated/@requiresScopes give unauthenticated/permission_denied", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_connect_auth_" });
  const router = await startConnectRouter({
    authentication: { jwt: { jwks: [{ secret: SECRET, symmetric_algorithm: "HS256" }] } },
    authorization: { reject_operation_if_unauthorized: true },
  });
  try {
    await generateDemoProto(dir);
    const anonymous = await connectClient(router.url, dir);
    const missing = await connectError(anonymous.client.getUserAccount!({ id: "1" }));
    assert.equal(missing.code, Code.Unauthenticated);
    // Operations without requirements stay open.
    const open = await anonymous.client.getUser!({ id: "1" });
    assert.equal(open.user.username, "ada");

    const weak = await connectClient(router.url, dir, {
      authorization: `Bearer ${await token("read:email")}`,
    });
    const denied = await connectError(weak.client.getUserAccount!({ id: "1" }));
    assert.equal(denied.code, Code.PermissionDenied);
    assert.match(denied.rawMessage, /read:orders read:billing|admin/);

    const strong = await connectClient(router.url, dir, {
      authorization: `Bearer ${await token("read:email read:orders read:billing")}`,
    });
    const account = await strong.client.getUserAccount!({ id: "1" });
    assert.equal(account.user.name, "Ada Lovelace");
    assert.match(account.user.email, /@/);

    const bad = await fetch(
      `${router.url}/${SERVICE}/GetUser?connect=v1&encoding=json&message=%7B%22id%22%3A%221%22%7D`,
      {
        headers: { authorization: "Bearer not-a-jwt" },
      },
    );
    assert.equal(bad.status, 401);
    assert.equal((await bad.json()).code, "unauthenticated");
    assert.match(bad.headers.get("www-authenticate") ?? "", /^Bearer error="invalid_token"/);
  } finally {
    await router.close();
    await Deno.remove(dir, { recursive: true });
  }
});

async function raw(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === "" ? null : JSON.parse(text),
  };
}

const POST_HEADERS = { "content-type": "application/json", "connect-protocol-version": "1" };

Deno.test("DESIGN §4: every refusal over raw HTTP has the right status, code and a message naming what was wrong", async () => {
  const router = await startConnectRouter();
  const base = `${router.url}/${SERVICE}`;
  try {
    const cases: [
      string,
      Promise<{ status: number; headers: Headers; body: { code: string; message: string } | null }>,
      number,
      string,
      RegExp,
    ][] = [
      [
        "unknown method",
        raw(`${base}/Nope`, { method: "POST", headers: POST_HEADERS, body: "{}" }),
        404,
        "unimplemented",
        /"Nope"/,
      ],
      [
        "mutation over GET",
        raw(`${base}/AddReview?connect=v1&encoding=json&message=%7B%7D`),
        405,
        "unimplemented",
        /POST/,
      ],
      [
        "missing protocol version",
        raw(`${base}/GetUser`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        }),
        400,
        "invalid_argument",
        /Connect-Protocol-Version/,
      ],
      [
        "wrong protocol version",
        raw(`${base}/GetUser`, {
          method: "POST",
          headers: { ...POST_HEADERS, "connect-protocol-version": "7" },
          body: "{}",
        }),
        400,
        "invalid_argument",
        /Connect-Protocol-Version "7"/,
      ],
      [
        "unsupported content type",
        raw(`${base}/GetUser`, {
          method: "POST",
          headers: { ...POST_HEADERS, "content-type": "text/plain" },
          body: "{}",
        }),
        415,
        "invalid_argument",
        /Content-Type "text\/plain"/,
      ],
      [
        "missing connect param",
        raw(`${base}/GetUser?encoding=json&message=%7B%7D`),
        400,
        "invalid_argument",
        /"connect"/,
      ],
      [
        "wrong encoding param",
        raw(`${base}/GetUser?connect=v1&encoding=proto&message=%7B%7D`),
        400,
        "invalid_argument",
        /encoding="proto"/,
      ],
      [
        "missing message param",
        raw(`${base}/GetUser?connect=v1&encoding=json`),
        400,
        "invalid_argument",
        /"message"/,
      ],
      [
        "GET message given twice (the first ran; a cache or firewall reading the last saw another call)",
        raw(
          `${base}/GetUser?connect=v1&encoding=json&message=%7B%7D&message=%7B%22id%22%3A%221%22%7D`,
        ),
        400,
        "invalid_argument",
        /"message" query parameter is given more than once/,
      ],
      [
        "GET base64 given twice",
        raw(`${base}/GetUser?connect=v1&encoding=json&message=e30&base64=1&base64=0`),
        400,
        "invalid_argument",
        /"base64" query parameter is given more than once/,
      ],
      [
        "malformed GET message",
        raw(`${base}/GetUser?connect=v1&encoding=json&message=%7Bid`),
        400,
        "invalid_argument",
        /Malformed GetUserRequest/,
      ],
      [
        "malformed POST body",
        raw(`${base}/GetUser`, { method: "POST", headers: POST_HEADERS, body: '{"id": ' }),
        400,
        "invalid_argument",
        /Malformed GetUserRequest/,
      ],
      [
        "body not an object",
        raw(`${base}/GetUser`, { method: "POST", headers: POST_HEADERS, body: '["1"]' }),
        400,
        "invalid_argument",
        /must be a JSON object/,
      ],
      [
        "wrongly typed field",
        raw(`${base}/GetUser`, { method: "POST", headers: POST_HEADERS, body: '{"id": {"x": 1}}' }),
        400,
        "invalid_argument",
        /"id" expects a string/,
      ],
      [
        "variables failing coercion",
        raw(`${base}/GetProductsByStock`, { method: "POST", headers: POST_HEADERS, body: "{}" }),
        400,
        "invalid_argument",
        /\$status/,
      ],
      [
        "bad timeout",
        raw(`${base}/GetUser`, {
          method: "POST",
          headers: { ...POST_HEADERS, "connect-timeout-ms": "-5" },
          body: "{}",
        }),
        400,
        "invalid_argument",
        /Connect-Timeout-Ms/,
      ],
    ];
    for (const [name, pending, status, code, message] of cases) {
      const response = await pending;
      assert.equal(response.status, status, name);
      assert.equal(response.headers.get("content-type"), "application/json", name);
      assert.equal(response.body?.code, code, name);
      assert.match(response.body?.message ?? "", message, name);
    }
    const mutationOverGet = await raw(`${base}/AddReview?connect=v1&encoding=json&message=%7B%7D`);
    assert.equal(mutationOverGet.headers.get("allow"), "POST");
  } finally {
    await router.close();
  }
});

async function gzip(text: string): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

Deno.test("issue 5: size limits apply after decompression; gzip bodies are accepted", async () => {
  const router = await startConnectRouter({ connect_rpc: { max_message_bytes: 1024 } });
  const base = `${router.url}/${SERVICE}`;
  try {
    const ok = await raw(`${base}/GetUser`, {
      method: "POST",
      headers: { ...POST_HEADERS, "content-encoding": "gzip" },
      body: await gzip('{"id": "2"}'),
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.user.name, "Alan Turing");

    const big = `{"id": "1", "x": "${"a".repeat(2000)}"}`;
    const plain = await raw(`${base}/GetUser`, {
      method: "POST",
      headers: POST_HEADERS,
      body: big,
    });
    assert.equal(plain.status, 429);
    assert.equal(plain.body.code, "resource_exhausted");
    assert.match(plain.body.message, /1024 bytes/);

    // 1 MB of spaces compresses to about 1 KB: the limit counts decompressed bytes.
    const bomb = await gzip(`{"id": "1"${" ".repeat(1_000_000)}}`);
    assert.ok(bomb.byteLength < 4096);
    const zipped = await raw(`${base}/GetUser`, {
      method: "POST",
      headers: { ...POST_HEADERS, "content-encoding": "gzip" },
      body: bomb,
    });
    assert.equal(zipped.status, 429);
    assert.equal(zipped.body.code, "resource_exhausted");

    const broken = await raw(`${base}/GetUser`, {
      method: "POST",
      headers: { ...POST_HEADERS, "content-encoding": "gzip" },
      body: '{"id": "2"}',
    });
    assert.equal(broken.status, 400);
    assert.equal(broken.body.code, "invalid_argument");
    assert.match(broken.body.message, /gzip/);

    const longGet = await raw(
      `${base}/GetUser?connect=v1&encoding=json&message=${encodeURIComponent(big)}`,
    );
    assert.equal(longGet.status, 429);
    assert.equal(longGet.body.code, "resource_exhausted");
  } finally {
    await router.close();
  }
});

Deno.test("issue 5: past Connect-Timeout-Ms the call ends with deadline_exceeded and its subgraph fetches are aborted", async () => {
  const signals: AbortSignal[] = [];
  const slowFetch: SubgraphFetch = async (request) => {
    signals.push(request.signal);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 3000);
      request.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    request.signal.throwIfAborted();
    return await fetch(request);
  };
  const router = await startConnectRouter({}, { fetch: slowFetch });
  try {
    const started = performance.now();
    // A mutation: its fetches are never shared with other requests (single flight), so the
    // call's deadline is theirs.
    const response = await raw(`${router.url}/${SERVICE}/AddReview`, {
      method: "POST",
      headers: { ...POST_HEADERS, "connect-timeout-ms": "150" },
      body: JSON.stringify({ input: { productUpc: "1", authorId: "1", body: "slow", rating: 3 } }),
    });
    const elapsed = performance.now() - started;
    assert.equal(response.status, 504);
    assert.equal(response.body.code, "deadline_exceeded");
    assert.match(response.body.message, /Connect-Timeout-Ms: 150/);
    assert.ok(elapsed < 2000, `answered after ${elapsed} ms`);
    assert.ok(signals.length > 0, "a subgraph fetch was started");
    assert.ok(signals.every((signal) => signal.aborted), "every subgraph fetch was aborted");
  } finally {
    await router.close();
  }
  // A query over GET, its fetches unshared (single flight off): the same.
  signals.length = 0;
  const unshared = await startConnectRouter({ engine: { enable_single_flight: false } }, {
    fetch: slowFetch,
  });
  try {
    const response = await raw(
      `${unshared.url}/${SERVICE}/GetUser?connect=v1&encoding=json&message=${
        encodeURIComponent('{"id":"1"}')
      }`,
      { headers: { "connect-timeout-ms": "100" } },
    );
    assert.equal(response.status, 504);
    assert.equal(response.body.code, "deadline_exceeded");
    assert.equal(response.headers.get("cache-control"), null);
    assert.ok(signals.length > 0 && signals.every((signal) => signal.aborted));
  } finally {
    await unshared.close();
  }
});

Deno.test("spec 4.3: GET responses carry ETag and Cache-Control (private with Authorization) and answer 304 on If-None-Match", async () => {
  const router = await startConnectRouter();
  const url = `${router.url}/${SERVICE}/GetProduct?connect=v1&encoding=json&message=${
    encodeURIComponent('{"upc":"2"}')
  }`;
  try {
    const first = await fetch(url);
    const body = await first.json();
    assert.equal(first.status, 200);
    assert.equal(body.product.name, "Walnut Bookshelf");
    assert.equal(body.product.category, "CATEGORY_FURNITURE");
    const etag = first.headers.get("etag");
    assert.match(etag ?? "", /^"[0-9a-f]{32}"$/);
    assert.equal(first.headers.get("cache-control"), "public, max-age=60");
    assert.equal(first.headers.get("vary"), "authorization");

    const again = await fetch(url, { headers: { "if-none-match": etag! } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), "");
    assert.equal(again.headers.get("etag"), etag);

    const changed = await fetch(url, { headers: { "if-none-match": '"stale"' } });
    assert.equal(changed.status, 200);
    await changed.body?.cancel();

    const authorized = await fetch(url, { headers: { authorization: "Bearer abc" } });
    assert.equal(authorized.status, 200);
    assert.equal(authorized.headers.get("cache-control"), "private, max-age=60");
    await authorized.body?.cancel();

    const post = await fetch(`${router.url}/${SERVICE}/GetProduct`, {
      method: "POST",
      headers: POST_HEADERS,
      body: '{"upc":"2"}',
    });
    assert.equal(post.status, 200);
    assert.equal(post.headers.get("cache-control"), null);
    assert.deepEqual(await post.json(), body);
  } finally {
    await router.close();
  }
});

Deno.test("Connect GET: headers forwarded to subgraphs are in Vary, and an answer that used them is private", async () => {
  const router = await startConnectRouter({
    headers: { all: { request: [{ op: "propagate", named: "X-Tenant" }] } },
  });
  const url = `${router.url}/${SERVICE}/GetProduct?connect=v1&encoding=json&message=${
    encodeURIComponent('{"upc":"2"}')
  }`;
  try {
    const anonymous = await fetch(url);
    assert.equal(anonymous.headers.get("vary"), "authorization, x-tenant");
    assert.equal(anonymous.headers.get("cache-control"), "public, max-age=60");
    await anonymous.body?.cancel();
    // The subgraph saw X-Tenant: no shared cache may give this answer to another tenant.
    const tenant = await fetch(url, { headers: { "x-tenant": "a" } });
    assert.equal(tenant.headers.get("cache-control"), "private, max-age=60");
    await tenant.body?.cancel();
  } finally {
    await router.close();
  }
  const patterned = await startConnectRouter({
    headers: { all: { request: [{ op: "propagate", matching: "^x-tenant-" }] } },
  });
  try {
    const answer = await fetch(url.replace(router.url, patterned.url));
    assert.equal(answer.status, 200);
    // Names matched by a pattern cannot be listed in Vary: never shared.
    assert.equal(answer.headers.get("cache-control"), "private, max-age=60");
    await answer.body?.cancel();
  } finally {
    await patterned.close();
  }
});

Deno.test("DESIGN §3: `generate proto` keeps field numbers across an operation change through its lock file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw_connect_lock_" });
  try {
    await Deno.mkdir(`${dir}/operations`);
    const op = (fields: string) => `query GetUser($id: ID!) { user(id: $id) { ${fields} } }`;
    await Deno.writeTextFile(`${dir}/operations/GetUser.graphql`, op("id name username"));
    await Deno.writeTextFile(
      `${dir}/config.yaml`,
      `supergraph_path: ${ROOT}schema/supergraph.graphql\noperations_dir: operations\n`,
    );
    const generate = async () => {
      const result = await runDeno([
        "main.ts",
        "generate",
        "proto",
        "--config",
        `${dir}/config.yaml`,
        "--out",
        `${dir}/out`,
      ], {
        cwd: ROOT,
        project: true,
      });
      assert.equal(result.code, 0, result.stderr);
      return await Deno.readTextFile(`${dir}/out/service/v1/service.proto`);
    };
    const first = await generate();
    assert.match(
      first,
      /string id = 1;\n\s*\/\/.*\n\s*string name = 2;\n\s*\/\/.*\n\s*string username = 3;/,
    );
    await Deno.writeTextFile(`${dir}/operations/GetUser.graphql`, op("id tier username"));
    const second = await generate();
    assert.match(second, /reserved 2;/);
    assert.match(second, /string id = 1;/);
    assert.match(second, /string username = 3;/);
    assert.match(second, /MembershipTier tier = 4;/);
    assert.doesNotMatch(second, /string name = /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DESIGN §2: `generate` refuses bad usage (exit 2, naming what is missing); openapi can be YAML", async () => {
  const missing = await runDeno(["main.ts", "generate", "proto", "--config", "config.yaml"], {
    cwd: ROOT,
    project: true,
  });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /Missing --out DIR/);
  const unknown = await runDeno(["main.ts", "generate", "grpc", "--out", "x"], {
    cwd: ROOT,
    project: true,
  });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /Expected "proto" or "openapi"/);
  const dir = await Deno.makeTempDir({ prefix: "gw_connect_yaml_" });
  try {
    const ok = await runDeno(["main.ts", "generate", "openapi", "--out", `${dir}/api.yaml`], {
      cwd: ROOT,
      project: true,
    });
    assert.equal(ok.code, 0, ok.stderr);
    const text = await Deno.readTextFile(`${dir}/api.yaml`);
    assert.match(text, /^openapi: 3\.1\.0$/m);
    assert.match(text, /^ {2}\/service\.v1\.GraphService\/GetProduct:$/m);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
