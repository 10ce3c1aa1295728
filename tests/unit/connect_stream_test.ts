/**
 * Issue 29, Connect server streaming, the pure parts: the envelope codec, the
 * end-of-stream message, the request envelope's refusals, how a streaming
 * method's call is resolved, and the generated proto and OpenAPI.
 */
import assert from "node:assert/strict";
import { buildSchema, type OperationDefinitionNode, parse } from "graphql";
import {
  buildContractModel,
  decodeRequestEnvelope,
  encodeEndStream,
  encodeEnvelope,
  encodeStreamMessage,
  endStreamJson,
  generateOpenApi,
  generateProto,
  resolveCall,
} from "../../lib/connect/mod.ts";

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

const SCHEMA = buildSchema(`
  type Query { hello: String }
  type Subscription { tick(topic: String!): Tick! }
  type Tick { seq: Int! text: String }
`);
const TEXT = "subscription Watch($topic: String!) { tick(topic: $topic) { seq text } }";

function contract() {
  const document = parse(TEXT);
  const operation = document.definitions[0] as OperationDefinitionNode;
  return buildContractModel(SCHEMA, [
    { name: "Watch", kind: "subscription", text: TEXT, document, operation, description: null },
  ]);
}

const PREFIX = "/service.v1.GraphService/";

function call(method: string, headers: Record<string, string>) {
  return resolveCall(contract(), PREFIX, {
    method,
    url: new URL(`http://r${PREFIX}Watch`),
    headers: new Headers(headers),
  });
}

Deno.test("issue 29: an envelope is 1 flag byte, a 4-byte big-endian length, the data", () => {
  const data = ENCODER.encode("x".repeat(300));
  const bytes = encodeEnvelope(0x01, data);
  assert.deepEqual([...bytes.subarray(0, 5)], [0x01, 0, 0, 0x01, 0x2c]);
  assert.equal(bytes.byteLength, 305);
  assert.deepEqual(bytes.subarray(5), data);
  const message = encodeStreamMessage({ tick: { seq: 1 } });
  assert.equal(message[0], 0);
  assert.deepEqual(JSON.parse(DECODER.decode(message.subarray(5))), { tick: { seq: 1 } });
});

Deno.test("issue 29: the end-of-stream message is flagged 0x02 and carries {error?, metadata?}", () => {
  assert.deepEqual(endStreamJson(), {});
  const failure = {
    code: "permission_denied" as const,
    message: "No",
    graphqlErrors: [{ message: "No", extensions: { code: "FORBIDDEN" } }],
  };
  const bytes = encodeEndStream({ failure, metadata: { "x-trace": ["1"] } });
  assert.equal(bytes[0], 0x02);
  assert.equal(new DataView(bytes.buffer).getUint32(1), bytes.byteLength - 5);
  assert.deepEqual(JSON.parse(DECODER.decode(bytes.subarray(5))), {
    error: {
      code: "permission_denied",
      message: "No",
      graphql_errors: [{ message: "No", extensions: { code: "FORBIDDEN" } }],
    },
    metadata: { "x-trace": ["1"] },
  });
  assert.deepEqual(endStreamJson({ metadata: {} }), {}, "empty trailers are left out");
});

Deno.test("issue 29: a streaming request body is exactly one envelope; each other shape is refused naming why", () => {
  const options = { limit: 16, compression: "identity" as const };
  const good = encodeEnvelope(0, ENCODER.encode('{"a":1}'));
  const read = decodeRequestEnvelope(good, options);
  assert.ok(read.ok);
  assert.equal(DECODER.decode(read.value.data), '{"a":1}');
  assert.equal(read.value.compressed, false);
  const cases: [Uint8Array, RegExp, string][] = [
    [good.subarray(0, 3), /has 3 bytes/, "invalid_argument"],
    [good.subarray(0, 8), /truncated: it announces 7 bytes, 3 came/, "invalid_argument"],
    [new Uint8Array([...good, ...good]), /more than one message/, "invalid_argument"],
    [encodeEnvelope(0x02, ENCODER.encode("{}")), /flags 0x02/, "invalid_argument"],
    [encodeEnvelope(0x80, ENCODER.encode("{}")), /flags 0x80/, "invalid_argument"],
    [encodeEnvelope(0x01, ENCODER.encode("{}")), /no Connect-Content-Encoding/, "invalid_argument"],
    [encodeEnvelope(0, new Uint8Array(17)), /exceeds the limit of 16 bytes/, "resource_exhausted"],
  ];
  for (const [body, message, code] of cases) {
    const result = decodeRequestEnvelope(body, options);
    assert.equal(result.ok, false, String(message));
    if (!result.ok) {
      assert.match(result.failure.message, message);
      assert.equal(result.failure.code, code);
    }
  }
  const gzip = decodeRequestEnvelope(encodeEnvelope(0x01, ENCODER.encode("{}")), {
    limit: 16,
    compression: "gzip",
  });
  assert.ok(gzip.ok && gzip.value.compressed);
});

Deno.test("issue 29: a subscription method takes POST with application/connect+json only", () => {
  const ok = call("POST", {
    "content-type": "application/connect+json",
    "connect-protocol-version": "1",
    "connect-content-encoding": "gzip",
    "connect-timeout-ms": "5000",
  });
  assert.ok(ok.ok);
  assert.deepEqual(ok.value.source, { kind: "envelope", compression: "gzip" });
  assert.equal(ok.value.timeoutMs, 5000);
  assert.equal(ok.value.method.streaming, true);

  const get = call("GET", {});
  assert.ok(!get.ok);
  assert.equal(get.failure.status, 405);
  assert.deepEqual(get.failure.headers, { allow: "POST" });
  assert.match(get.failure.message, /server-streaming \(a subscription\)/);

  const unary = call("POST", {
    "content-type": "application/json",
    "connect-protocol-version": "1",
  });
  assert.ok(!unary.ok);
  assert.equal(unary.failure.status, 415);
  assert.match(unary.failure.message, /"application\/json": Watch is a server-streaming method/);

  const version = call("POST", { "content-type": "application/connect+json" });
  assert.ok(!version.ok);
  assert.match(version.failure.message, /Connect-Protocol-Version/);

  const brotli = call("POST", {
    "content-type": "application/connect+json",
    "connect-protocol-version": "1",
    "connect-content-encoding": "br",
  });
  assert.ok(!brotli.ok);
  assert.equal(brotli.failure.code, "unimplemented");
  assert.match(brotli.failure.message, /Connect-Content-Encoding "br"/);
});

Deno.test("issue 29: the proto declares a subscription server-streaming; OpenAPI documents the stream", () => {
  const model = contract();
  assert.deepEqual(model.skipped, []);
  const proto = generateProto(model, { package: "service.v1", service: "GraphService" });
  assert.match(
    proto.text,
    /^ {2}rpc Watch\(WatchRequest\) returns \(stream WatchResponse\) \{\}$/m,
  );
  assert.doesNotMatch(proto.text, /NO_SIDE_EFFECTS/);
  const openapi = generateOpenApi(model, {
    package: "service.v1",
    service: "GraphService",
    version: "1",
    serverUrl: "http://localhost:3002",
  }) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  const item = openapi.paths["/service.v1.GraphService/Watch"]!;
  assert.deepEqual(Object.keys(item), ["post"]);
  const post = item.post!;
  assert.equal(post["x-connect-streaming"], "server");
  assert.match(String(post.description), /Server streaming/);
  assert.deepEqual(
    Object.keys((post.requestBody as { content: object }).content),
    ["application/connect+json"],
  );
  const ok = (post.responses as Record<string, { content: object }>)["200"]!;
  assert.deepEqual(Object.keys(ok.content), ["application/connect+json"]);
});

Deno.test("issue 39: a Connect stream keeps nothing it sent (its memory does not grow with its length)", async () => {
  // In its own process with --expose-gc: 200 results sent on an open stream, then a full
  // collection. Racing every pull against the stream's one stop promise kept each result
  // reachable until the stream ended (a client that stopped reading took the router down).
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      new URL("./_connect_stream_probe.ts", import.meta.url).pathname,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.ok(output.success, "the probe ran");
  const { sent, reachable } = JSON.parse(new TextDecoder().decode(output.stdout));
  assert.equal(sent, 200);
  assert.ok(reachable <= 1, `${reachable} of ${sent} sent results still reachable`);
});
