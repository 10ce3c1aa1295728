/**
 * Issue 29, Connect server streaming end to end with the real Connect client
 * (`@connectrpc/connect` + connect-web's fetch transport, JSON):
 * - the glue (`connectStreamResponse`) under a `Deno.serve` handler, fed by a
 *   test AsyncIterable, against service descriptors built in the test;
 * - the whole facet: a router state over the repository's supergraph and
 *   `operations/OnReviewAdded.graphql`, whose `subscribe` (the engine's entry
 *   point, wired by the edge) is a test AsyncIterable here; descriptors from
 *   `buf build` of the proto that `gw-router generate proto` writes.
 */
import assert from "node:assert/strict";
import { create, createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { buildSchema, type OperationDefinitionNode, parse } from "graphql";
import {
  buildContractModel,
  connectStreamResponse,
  type ConnectSubscribe,
  type ConnectSubscribeRequest,
  encodeEnvelope,
  handleConnect,
  type StreamEnd,
  type StreamResult,
} from "../../lib/connect/mod.ts";
import { createHandler } from "../../lib/http/handler.ts";
import { edgeState } from "../unit/_edge_fixture.ts";
import { runDeno } from "./_cli.ts";
import { STREAM_DEADLINE_MS, within } from "./_deadline.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const BUF = "npm:@bufbuild/buf@1.74.0";

// ---------------------------------------------------------------- the glue

const SCHEMA = buildSchema(`
  type Query { hello: String }
  type Subscription { tick(topic: String!): Tick! }
  type Tick { seq: Int! text: String }
`);
const TEXT = "subscription Watch($topic: String!) { tick(topic: $topic) { seq text } }";
const WATCH = (() => {
  const document = parse(TEXT);
  const operation = document.definitions[0] as OperationDefinitionNode;
  return buildContractModel(SCHEMA, [
    { name: "Watch", kind: "subscription", text: TEXT, document, operation, description: null },
  ]).byName.get("Watch")!;
})();

/** The descriptors connect-es needs, mirroring what `generate proto` writes for WATCH. */
const FEED_SERVICE = (() => {
  const { OPTIONAL } = FieldDescriptorProto_Label;
  const { STRING, INT32, MESSAGE } = FieldDescriptorProto_Type;
  const file = create(FileDescriptorProtoSchema, {
    name: "feed.proto",
    package: "test.v1",
    syntax: "proto3",
    messageType: [
      {
        name: "WatchRequest",
        field: [{ name: "topic", jsonName: "topic", number: 1, type: STRING, label: OPTIONAL }],
      },
      {
        name: "WatchResponse",
        nestedType: [{
          name: "Tick",
          field: [
            { name: "seq", jsonName: "seq", number: 1, type: INT32, label: OPTIONAL },
            { name: "text", jsonName: "text", number: 2, type: STRING, label: OPTIONAL },
          ],
        }],
        field: [{
          name: "tick",
          jsonName: "tick",
          number: 1,
          type: MESSAGE,
          typeName: ".test.v1.WatchResponse.Tick",
          label: OPTIONAL,
        }],
      },
    ],
    service: [{
      name: "FeedService",
      method: [{
        name: "Watch",
        inputType: ".test.v1.WatchRequest",
        outputType: ".test.v1.WatchResponse",
        serverStreaming: true,
      }],
    }],
  });
  return createFileRegistry(file, () => undefined).getService("test.v1.FeedService")!;
})();

/** What the tests read of a response message (connect-es builds the client at run time). */
interface Message {
  readonly tick?: { readonly seq: number; readonly text: string };
  readonly reviewAdded?: unknown;
}
type StreamClient = Record<
  string,
  (
    request: object,
    options?: { signal?: AbortSignal; timeoutMs?: number },
  ) => AsyncIterable<Message>
>;

/** Serves `connectStreamResponse(events(request))` on a free loopback port. */
function serveGlue(
  events: (topic: string) => AsyncIterable<StreamResult>,
  options: { readonly onEnd?: (end: StreamEnd) => void } = {},
) {
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (req) => {
    const body = new Uint8Array(await req.arrayBuffer());
    const { topic } = JSON.parse(new TextDecoder().decode(body.subarray(5)));
    return connectStreamResponse(events(topic), {
      method: WATCH,
      timeoutMs: Number(req.headers.get("connect-timeout-ms") ?? "") || null,
      signal: req.signal,
      ...(options.onEnd ? { onEnd: options.onEnd } : {}),
    });
  });
  const transport = createConnectTransport({
    baseUrl: `http://127.0.0.1:${server.addr.port}`,
    useBinaryFormat: false,
  });
  const client = createClient(FEED_SERVICE, transport) as unknown as StreamClient;
  return {
    client,
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}

Deno.test("issue 29: connect-es reads every event of a stream and its good end", async () => {
  const ends: StreamEnd[] = [];
  const glue = serveGlue(async function* (topic) {
    for (let seq = 1; seq <= 3; seq++) yield { data: { tick: { seq, text: `${topic} ${seq}` } } };
  }, { onEnd: (end) => ends.push(end) });
  try {
    const seen: unknown[] = [];
    const signal = AbortSignal.timeout(STREAM_DEADLINE_MS);
    for await (const message of glue.client.watch!({ topic: "news" }, { signal })) {
      seen.push({ seq: message.tick?.seq, text: message.tick?.text });
    }
    assert.deepEqual(seen, [
      { seq: 1, text: "news 1" },
      { seq: 2, text: "news 2" },
      { seq: 3, text: "news 3" },
    ]);
    assert.deepEqual(ends, [{ kind: "completed", messages: 3 }]);
  } finally {
    await glue.close();
  }
});

Deno.test("issue 29: an event with GraphQL errors ends the stream with the Connect error (code of the first, graphql_errors kept)", async () => {
  const glue = serveGlue(async function* () {
    yield { data: { tick: { seq: 1, text: null } } };
    yield {
      data: null,
      errors: [{ message: "Not allowed", extensions: { code: "FORBIDDEN" } }],
    };
    yield { data: { tick: { seq: 3, text: "never sent" } } };
  });
  try {
    const seen: number[] = [];
    await assert.rejects(
      async () => {
        const signal = AbortSignal.timeout(STREAM_DEADLINE_MS);
        for await (const message of glue.client.watch!({ topic: "t" }, { signal })) {
          seen.push(message.tick!.seq);
        }
      },
      (error: unknown) => {
        const connect = ConnectError.from(error);
        assert.equal(connect.code, Code.PermissionDenied);
        assert.equal(connect.rawMessage, "Not allowed");
        return true;
      },
    );
    assert.deepEqual(seen, [1]);
  } finally {
    await glue.close();
  }
});

Deno.test("issue 29: a client that cancels returns the results' iterator (the upstream ends)", async () => {
  const returned = Promise.withResolvers<void>();
  const ends: StreamEnd[] = [];
  let produced = 0;
  const glue = serveGlue(async function* () {
    try {
      while (true) {
        produced++;
        yield { data: { tick: { seq: produced, text: "x" } } };
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      returned.resolve();
    }
  }, { onEnd: (end) => ends.push(end) });
  try {
    const controller = new AbortController();
    // A stream that stalls ends at the deadline (deadline_exceeded, not canceled: the test fails).
    const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(STREAM_DEADLINE_MS)]);
    const seen: number[] = [];
    await assert.rejects(async () => {
      for await (const message of glue.client.watch!({ topic: "t" }, { signal })) {
        seen.push(message.tick!.seq);
        if (seen.length === 2) controller.abort();
      }
    }, (error: unknown) => ConnectError.from(error).code === Code.Canceled);
    await within(returned.promise, "the producer's return");
    assert.deepEqual(seen, [1, 2]);
    assert.equal(ends[0]?.kind, "canceled");
    assert.ok(produced < 10, `the producer stopped (produced ${produced})`);
  } finally {
    await glue.close();
  }
});

Deno.test("issue 29: Connect-Timeout-Ms ends a quiet stream with deadline_exceeded", async () => {
  const glue = serveGlue(async function* () {
    yield { data: { tick: { seq: 1, text: "only one" } } };
    await new Promise(() => {}); // never another event
  });
  try {
    const seen: number[] = [];
    await assert.rejects(async () => {
      for await (const message of glue.client.watch!({ topic: "t" }, { timeoutMs: 200 })) {
        seen.push(message.tick!.seq);
      }
    }, (error: unknown) => ConnectError.from(error).code === Code.DeadlineExceeded);
    assert.deepEqual(seen, [1]);
  } finally {
    await glue.close();
  }
});

Deno.test("issue 29: a client that does not read holds the producer back (the body is pulled, not buffered)", async () => {
  let produced = 0;
  const text = "x".repeat(64 * 1024);
  const glue = serveGlue(async function* () {
    while (produced < 5000) {
      produced++;
      yield { data: { tick: { seq: produced, text } } };
    }
  });
  let response: Response | null = null;
  try {
    response = await fetch(`${glue.url}/test.v1.FeedService/Watch`, {
      method: "POST",
      headers: { "content-type": "application/connect+json", "connect-protocol-version": "1" },
      body: encodeEnvelope(0, new TextEncoder().encode('{"topic":"t"}')) as Uint8Array<ArrayBuffer>,
      signal: AbortSignal.timeout(STREAM_DEADLINE_MS),
    });
    assert.equal(response.status, 200);
    // The client reads nothing: only what the socket buffers hold may be produced.
    let before = -1;
    while (before !== produced) {
      before = produced;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(
      produced < 1000,
      `the producer ran ${produced} events ahead of a client that reads nothing`,
    );
  } finally {
    await response?.body?.cancel();
    await glue.close();
  }
});

Deno.test("issue 29: the deadline ends the subscription even while the client reads nothing", async () => {
  const returned = Promise.withResolvers<void>();
  const text = "x".repeat(64 * 1024);
  let produced = 0;
  // Hand-written (a generator could not be returned while it waits): endless, fast events.
  const events: AsyncIterable<StreamResult> = {
    [Symbol.asyncIterator]: () => ({
      next: () =>
        Promise.resolve({ done: false, value: { data: { tick: { seq: ++produced, text } } } }),
      return: () => {
        returned.resolve();
        return Promise.resolve({ done: true, value: undefined });
      },
    }),
  };
  const glue = serveGlue(() => events);
  let response: Response | null = null;
  try {
    response = await fetch(`${glue.url}/test.v1.FeedService/Watch`, {
      method: "POST",
      headers: {
        "content-type": "application/connect+json",
        "connect-protocol-version": "1",
        "connect-timeout-ms": "300",
      },
      body: encodeEnvelope(0, new TextEncoder().encode('{"topic":"t"}')) as Uint8Array<ArrayBuffer>,
      signal: AbortSignal.timeout(STREAM_DEADLINE_MS),
    });
    const ended = await Promise.race([
      returned.promise.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000)),
    ]);
    assert.ok(ended, `the iterator was not returned at the deadline (${produced} events produced)`);
  } finally {
    await response?.body?.cancel();
    await glue.close();
  }
});

// ---------------------------------------------------------------- the whole facet

const ON_REVIEW_ADDED = {
  path: "OnReviewAdded.graphql",
  text: Deno.readTextFileSync(`${ROOT}operations/OnReviewAdded.graphql`),
};

/** The demo proto's GraphService, from `generate proto` + `buf build`. */
async function demoService() {
  const dir = await Deno.makeTempDir({ prefix: "gw-connect-stream-" });
  const generated = await runDeno(
    ["main.ts", "generate", "proto", "--config", "config.yaml", "--out", dir],
    { cwd: ROOT, project: true },
  );
  assert.equal(generated.code, 0, generated.stderr);
  const proto = await Deno.readTextFile(`${dir}/service/v1/service.proto`);
  assert.match(
    proto,
    /rpc OnReviewAdded\(OnReviewAddedRequest\) returns \(stream OnReviewAddedResponse\) \{\}/,
  );
  await Deno.writeTextFile(`${dir}/buf.yaml`, "version: v2\nlint:\n  use:\n    - STANDARD\n");
  const lint = await runDeno([BUF, "lint", dir], { cwd: dir, project: false });
  assert.equal(lint.code, 0, lint.stdout + lint.stderr);
  const built = await runDeno([BUF, "build", dir, "-o", `${dir}/image.binpb`], {
    cwd: dir,
    project: false,
  });
  assert.equal(built.code, 0, built.stderr);
  const set = fromBinary(FileDescriptorSetSchema, await Deno.readFile(`${dir}/image.binpb`));
  await Deno.remove(dir, { recursive: true });
  return createFileRegistry(set).getService("service.v1.GraphService")!;
}

const REVIEW = {
  id: "r9",
  rating: 5,
  body: "Sturdy",
  product: { upc: "2", name: "Walnut Bookshelf", price: 189.5 },
  author: { id: "1", username: "ada", name: "Ada Lovelace" },
};

async function serveFacet(subscribe: ConnectSubscribe | null) {
  const state = await edgeState({}, { operations: [ON_REVIEW_ADDED] });
  // The test's subscribe replaces the edge's wiring to the subscription core (the real
  // wiring is tested through a running router in connect_subscriptions_test.ts).
  const handler = createHandler(() => state, {
    facets: { connect: (request, current) => handleConnect(request, { ...current, subscribe }) },
  });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, handler);
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test("issue 29: OnReviewAdded is a server-streaming method of the router: the engine's results reach connect-es", async () => {
  const service = await demoService();
  const requests: ConnectSubscribeRequest[] = [];
  const facet = await serveFacet((request) => {
    requests.push(request);
    return Promise.resolve((async function* () {
      yield { data: { reviewAdded: REVIEW } };
      yield { data: { reviewAdded: { ...REVIEW, id: "r10", rating: 4 } } };
    })());
  });
  try {
    const client = createClient(
      service,
      createConnectTransport({ baseUrl: facet.url, useBinaryFormat: false }),
    ) as unknown as StreamClient;
    const seen: unknown[] = [];
    const signal = AbortSignal.timeout(STREAM_DEADLINE_MS);
    for await (const message of client.onReviewAdded!({ productUpc: "2" }, { signal })) {
      const review = message.reviewAdded as unknown as typeof REVIEW;
      seen.push([review.id, review.rating, review.product.name, review.author.name]);
    }
    assert.deepEqual(seen, [
      ["r9", 5, "Walnut Bookshelf", "Ada Lovelace"],
      ["r10", 4, "Walnut Bookshelf", "Ada Lovelace"],
    ]);
    assert.equal(requests.length, 1);
    assert.deepEqual(requests[0]!.variables, { productUpc: "2" });
    assert.equal(requests[0]!.operation.kind, "subscription");
    assert.equal(requests[0]!.identity, null);
    assert.equal(requests[0]!.signal.aborted, true, "the stream's end aborts the subscription");
  } finally {
    await facet.close();
  }
});

/** One raw streaming POST; returns the status and the decoded envelopes. */
async function rawCall(url: string, body: Uint8Array, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}/service.v1.GraphService/OnReviewAdded`, {
    method: "POST",
    headers: {
      "content-type": "application/connect+json",
      "connect-protocol-version": "1",
      ...headers,
    },
    body: body as Uint8Array<ArrayBuffer>,
    signal: AbortSignal.timeout(STREAM_DEADLINE_MS),
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const envelopes: { flags: number; json: unknown }[] = [];
  for (let at = 0; at < bytes.byteLength;) {
    const length = new DataView(bytes.buffer, at + 1, 4).getUint32(0);
    const text = new TextDecoder().decode(bytes.subarray(at + 5, at + 5 + length));
    envelopes.push({ flags: bytes[at]!, json: JSON.parse(text) });
    at += 5 + length;
  }
  return { status: response.status, type: response.headers.get("content-type"), envelopes };
}

function envelope(json: unknown): Uint8Array {
  return encodeEnvelope(0, new TextEncoder().encode(JSON.stringify(json)));
}

Deno.test("issue 29: refusals after the protocol is agreed ride in the stream: HTTP 200 and an end-of-stream error", async () => {
  let called = 0;
  const facet = await serveFacet(() => {
    called++;
    return Promise.resolve({ errors: [{ message: "No", extensions: { code: "FORBIDDEN" } }] });
  });
  try {
    const bad = await rawCall(facet.url, envelope({ nope: 1 }));
    assert.equal(bad.status, 200);
    assert.equal(bad.type, "application/connect+json");
    assert.equal(bad.envelopes.length, 1);
    assert.equal(bad.envelopes[0]!.flags, 2);
    const error = (bad.envelopes[0]!.json as { error: { code: string; message: string } }).error;
    assert.equal(error.code, "invalid_argument");
    assert.match(error.message, /nope/);
    assert.equal(called, 0, "a bad message starts no subscription");

    const refused = await rawCall(facet.url, envelope({}));
    assert.deepEqual(refused.envelopes, [{
      flags: 2,
      json: {
        error: {
          code: "permission_denied",
          message: "No",
          graphql_errors: [{ message: "No", extensions: { code: "FORBIDDEN" } }],
        },
      },
    }]);

    const truncated = await rawCall(facet.url, envelope({}).subarray(0, 4));
    assert.match(
      (truncated.envelopes[0]!.json as { error: { message: string } }).error.message,
      /has 4 bytes/,
    );
  } finally {
    await facet.close();
  }
});

Deno.test("issue 29: without the engine's subscribe, a streaming method answers unimplemented in the stream", async () => {
  const facet = await serveFacet(null);
  try {
    const answer = await rawCall(facet.url, envelope({}));
    assert.equal(answer.status, 200);
    const { error } = answer.envelopes[0]!.json as { error: { code: string; message: string } };
    assert.equal(error.code, "unimplemented");
    assert.match(error.message, /OnReviewAdded is a subscription/);
  } finally {
    await facet.close();
  }
});
