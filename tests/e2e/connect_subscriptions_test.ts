/**
 * Issue 29, Connect server streaming through the real router: the real Connect client
 * (`@connectrpc/connect` + connect-web's fetch transport, JSON) calls a subscription
 * operation's method on a running router (`startRouter`) whose `reviews` subgraph streams
 * over the real `graphql-ws` server (the subscription fixture). Each message carries entity
 * data from the `products` and `users` subgraphs; a client that cancels closes the upstream
 * (the subgraph sees it); refusals end the stream with the Connect error in the end-of-stream
 * message.
 */
import assert from "node:assert/strict";
import { create, createFileRegistry } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { encodeEnvelope } from "../../lib/connect/mod.ts";
import {
  review,
  type SubscriptionFixtureOptions,
  until,
  withFixture,
} from "./_subscription_fixture.ts";
import { within } from "./_deadline.ts";
import { abortableFetch } from "./_abortable_fetch.ts";

/** The operations of the contract (one file each). */
const OPERATIONS = {
  "OnReview.graphql": `
subscription OnReview($minStars: Int) {
  reviewAdded(minStars: $minStars) {
    id
    stars
    product { upc name priceLabel }
    author { id name }
  }
}`,
  "OnReviewEmail.graphql": `
subscription OnReviewEmail {
  reviewAdded { id author { name email } }
}`,
};

/**
 * The descriptors connect-es needs, mirroring what `generate proto` writes for OPERATIONS
 * (JSON names and scalar types are what the wire carries).
 */
const SERVICE = (() => {
  const { OPTIONAL } = FieldDescriptorProto_Label;
  const { STRING, INT32, MESSAGE } = FieldDescriptorProto_Type;
  const field = (name: string, number: number, type: FieldDescriptorProto_Type, typeName = "") => ({
    name,
    jsonName: name.replace(/_(\w)/g, (_, c: string) => c.toUpperCase()),
    number,
    type,
    label: OPTIONAL,
    ...(typeName === "" ? {} : { typeName: `.test.v1.${typeName}` }),
  });
  const file = create(FileDescriptorProtoSchema, {
    name: "reviews.proto",
    package: "test.v1",
    syntax: "proto3",
    messageType: [
      { name: "OnReviewRequest", field: [field("min_stars", 1, INT32)] },
      { name: "OnReviewEmailRequest", field: [] },
      {
        name: "Product",
        field: [field("upc", 1, STRING), field("name", 2, STRING), field("price_label", 3, STRING)],
      },
      {
        name: "User",
        field: [field("id", 1, STRING), field("name", 2, STRING), field("email", 3, STRING)],
      },
      {
        name: "Review",
        field: [
          field("id", 1, STRING),
          field("stars", 2, INT32),
          field("product", 3, MESSAGE, "Product"),
          field("author", 4, MESSAGE, "User"),
        ],
      },
      { name: "OnReviewResponse", field: [field("review_added", 1, MESSAGE, "Review")] },
      { name: "OnReviewEmailResponse", field: [field("review_added", 1, MESSAGE, "Review")] },
    ],
    service: [{
      name: "ReviewService",
      method: [
        {
          name: "OnReview",
          inputType: ".test.v1.OnReviewRequest",
          outputType: ".test.v1.OnReviewResponse",
          serverStreaming: true,
        },
        {
          name: "OnReviewEmail",
          inputType: ".test.v1.OnReviewEmailRequest",
          outputType: ".test.v1.OnReviewEmailResponse",
          serverStreaming: true,
        },
      ],
    }],
  });
  return createFileRegistry(file, () => undefined).getService("test.v1.ReviewService")!;
})();

interface ReviewMessage {
  readonly reviewAdded?: {
    readonly id: string;
    readonly stars: number;
    readonly product?: { readonly upc: string; readonly name: string; readonly priceLabel: string };
    readonly author?: { readonly id: string; readonly name: string; readonly email: string };
  };
}
type StreamClient = Record<
  "onReview" | "onReviewEmail",
  (
    request: object,
    options?: { signal?: AbortSignal; headers?: Record<string, string> },
  ) => AsyncIterable<ReviewMessage>
>;

/** Runs `run` against a router serving OPERATIONS as the Connect service `test.v1.ReviewService`. */
async function withConnectRouter(
  options: SubscriptionFixtureOptions,
  run: (
    fixture: Parameters<Parameters<typeof withFixture>[1]>[0],
    client: StreamClient,
  ) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gw_connect_subs_" });
  try {
    for (const [name, text] of Object.entries(OPERATIONS)) {
      await Deno.writeTextFile(`${dir}/${name}`, text);
    }
    await withFixture({
      ...options,
      config: {
        ...options.config,
        operations_dir: dir,
        connect_rpc: { enabled: true, package: "test.v1", service: "ReviewService" },
      },
    }, async (fixture) => {
      const transport = createConnectTransport({
        baseUrl: fixture.router.url,
        useBinaryFormat: false,
        // Deno ends only the first of several aborted streams (see _abortable_fetch.ts).
        fetch: abortableFetch,
      });
      await run(fixture, createClient(SERVICE, transport) as unknown as StreamClient);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The fields of a message the tests compare. */
function summary({ reviewAdded: r }: ReviewMessage): unknown[] {
  return [
    r?.id,
    r?.stars,
    r?.product?.upc,
    r?.product?.name,
    r?.product?.priceLabel,
    r?.author?.id,
    r?.author?.name,
  ];
}

/**
 * Reads messages into `seen` until the stream ends; resolves to its error, or null. A stream
 * that does not end within the streams' deadline fails the test.
 */
function drain(
  stream: AsyncIterable<ReviewMessage>,
  seen: ReviewMessage[],
): Promise<ConnectError | null> {
  const read = async () => {
    try {
      for await (const message of stream) seen.push(message);
      return null;
    } catch (error) {
      return ConnectError.from(error);
    }
  };
  const ended = within(read(), "the Connect stream's end");
  // Handled here (a stream awaited after another one must not fail as an uncaught rejection);
  // the test's `await` still throws.
  ended.catch(() => {});
  return ended;
}

/**
 * Opens a stream, publishes one review once the upstream is open, takes the first message,
 * cancels, and waits until the subgraph sees its upstream close.
 */
async function firstThenCancel(
  fixture: Parameters<Parameters<typeof withFixture>[1]>[0],
  call: (signal: AbortSignal) => AsyncIterable<ReviewMessage>,
): Promise<ReviewMessage> {
  const controller = new AbortController();
  const seen: ReviewMessage[] = [];
  const ended = drain(call(controller.signal), seen);
  await until(() => fixture.feed.open === 1, "the upstream subscription");
  fixture.feed.publish(review("r1"));
  await until(() => seen.length === 1, "a message");
  controller.abort();
  assert.equal((await ended)?.code, Code.Canceled);
  await until(() => fixture.feed.open === 0, "the upstream close");
  return seen[0]!;
}

Deno.test("issue 29: connect-es streams a subscription method through the router: graphql-ws upstream, entity data per event, cancel closes the upstream", async () => {
  await withConnectRouter({}, async (fixture, client) => {
    const controller = new AbortController();
    const seen: ReviewMessage[] = [];
    const ended = drain(client.onReview({ minStars: 3 }, { signal: controller.signal }), seen);
    await until(() => fixture.feed.open === 1, "the upstream subscription");
    fixture.feed.publish(review("r1", { product: { upc: "p2" }, author: { id: "u2" } }));
    fixture.feed.publish(review("r2", { stars: 1 })); // below minStars: the subgraph filters it
    fixture.feed.publish(review("r3", { stars: 4 }));
    await until(() => seen.length === 2, "two messages");
    // connect-es messages carry `$typeName` and proto3 defaults: compare what the wire carried.
    assert.deepEqual(seen.map(summary), [
      ["r1", 5, "p2", "Chair", "$45", "u2", "Grace"],
      ["r3", 4, "p1", "Table", "$120", "u1", "Ada"],
    ]);
    // The entity data came from the other subgraphs (products for name/price, users for
    // the author and the @requires field).
    assert.ok(fixture.entityQueries.some((q) => q.includes("_entities")));
    controller.abort();
    const error = await ended;
    assert.equal(error?.code, Code.Canceled);
    await until(() => fixture.feed.open === 0, "the subgraph to see the upstream close");
    assert.equal(fixture.feed.opened, 1);
  });
});

Deno.test("issue 29: identical Connect subscribers share one upstream; the last to leave closes it", async () => {
  await withConnectRouter({ subscriptions: { deduplicate: true } }, async (fixture, client) => {
    const controllers = [new AbortController(), new AbortController(), new AbortController()];
    const seen = controllers.map(() => [] as ReviewMessage[]);
    const ended = controllers.map((c, i) =>
      drain(client.onReview({ minStars: 1 }, { signal: c.signal }), seen[i]!)
    );
    await until(() => fixture.router.url !== "" && fixture.feed.open >= 1, "an upstream");
    // Let the other two start before publishing (they join the same upstream).
    await new Promise((resolve) => setTimeout(resolve, 200));
    fixture.feed.publish(review("r1"));
    await until(() => seen.every((s) => s.length === 1), "each subscriber's message");
    assert.equal(fixture.feed.opened, 1, "one upstream for three identical subscribers");
    controllers[0]!.abort();
    controllers[1]!.abort();
    await Promise.all(ended.slice(0, 2));
    assert.equal(fixture.feed.open, 1, "the upstream stays while a subscriber listens");
    controllers[2]!.abort();
    await ended[2];
    await until(() => fixture.feed.open === 0, "the upstream close");
  });
});

Deno.test("issue 29: an unauthenticated Connect subscription call ends with unauthenticated in the end-of-stream message; none reaches the subgraph", async () => {
  await withConnectRouter({
    authentication: true,
    config: { authorization: { require_authentication: true } },
  }, async (fixture, client) => {
    const seen: ReviewMessage[] = [];
    const error = await drain(client.onReview({}), seen);
    assert.equal(error?.code, Code.Unauthenticated);
    assert.deepEqual(seen, []);
    const bad = await drain(
      client.onReview({}, { headers: { authorization: "Bearer not-a-token" } }),
      seen,
    );
    assert.equal(bad?.code, Code.Unauthenticated);
    assert.equal(fixture.feed.opened, 0);

    // The raw answer: HTTP 200, the error in the end-of-stream envelope (flag 2).
    const response = await fetch(`${fixture.router.url}/test.v1.ReviewService/OnReview`, {
      method: "POST",
      headers: { "content-type": "application/connect+json", "connect-protocol-version": "1" },
      body: encodeEnvelope(0, new TextEncoder().encode("{}")) as Uint8Array<ArrayBuffer>,
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "application/connect+json");
    const bytes = new Uint8Array(await within(response.arrayBuffer(), "the end-of-stream"));
    assert.equal(bytes[0], 2);
    const end = JSON.parse(new TextDecoder().decode(bytes.subarray(5)));
    assert.equal(end.error.code, "unauthenticated");

    // With a token it streams.
    const token = await fixture.token("");
    const first = await firstThenCancel(
      fixture,
      (signal) => client.onReview({}, { signal, headers: { authorization: `Bearer ${token}` } }),
    );
    assert.equal(first.reviewAdded?.author?.name, "Ada");
  });
});

Deno.test("issue 29: a Connect subscription without a field's scope: refused at start (reject_operation_if_unauthorized) or ended by its first event's error", async () => {
  await withConnectRouter({
    authentication: true,
    config: { authorization: { reject_operation_if_unauthorized: true } },
  }, async (fixture, client) => {
    const token = await fixture.token("");
    const seen: ReviewMessage[] = [];
    const error = await drain(
      client.onReviewEmail({}, { headers: { authorization: `Bearer ${token}` } }),
      seen,
    );
    assert.equal(error?.code, Code.PermissionDenied);
    assert.equal(fixture.feed.opened, 0, "a refused call opens no upstream");
    const scoped = await fixture.token("read:email");
    const first = await firstThenCancel(
      fixture,
      (signal) =>
        client.onReviewEmail({}, { signal, headers: { authorization: `Bearer ${scoped}` } }),
    );
    assert.equal(first.reviewAdded?.author?.email, "ada@example.com");
  });
  await withConnectRouter({ authentication: true }, async (fixture, client) => {
    const token = await fixture.token("");
    const seen: ReviewMessage[] = [];
    const ended = drain(
      client.onReviewEmail({}, { headers: { authorization: `Bearer ${token}` } }),
      seen,
    );
    await until(() => fixture.feed.open === 1, "the upstream subscription");
    fixture.feed.publish(review("r1"));
    const error = await ended;
    // The field is null with UNAUTHORIZED_FIELD_OR_TYPE: the unary rule ends the stream.
    assert.equal(error?.code, Code.PermissionDenied);
    assert.deepEqual(seen, []);
    await until(() => fixture.feed.open === 0, "the upstream close after the error");
  });
});

Deno.test("issue 29: a Connect subscription call with an invalid message ends with invalid_argument; an upstream failure ends the stream with an error", async () => {
  await withConnectRouter({}, async (fixture, client) => {
    const seen: ReviewMessage[] = [];
    const response = await fetch(`${fixture.router.url}/test.v1.ReviewService/OnReview`, {
      method: "POST",
      headers: { "content-type": "application/connect+json", "connect-protocol-version": "1" },
      body: encodeEnvelope(0, new TextEncoder().encode('{"minStars":"many"}')) as Uint8Array<
        ArrayBuffer
      >,
    });
    assert.equal(response.status, 200);
    const bytes = new Uint8Array(await within(response.arrayBuffer(), "the end-of-stream"));
    assert.equal(bytes[0], 2);
    assert.equal(
      JSON.parse(new TextDecoder().decode(bytes.subarray(5))).error.code,
      "invalid_argument",
    );
    assert.equal(fixture.feed.opened, 0);

    const ended = drain(client.onReview({}), seen);
    await until(() => fixture.feed.open === 1, "the upstream subscription");
    fixture.feed.publish(review("r1"));
    await until(() => seen.length === 1, "a message");
    fixture.feed.fail("feed broke");
    const error = await ended;
    // The graphql-ws server sends the thrown error as an event's errors: the unary rule
    // (code of the first error; none here, so unknown), its message kept.
    assert.equal(error?.code, Code.Unknown);
    assert.equal(error?.rawMessage, "feed broke");
    await until(() => fixture.feed.open === 0, "the upstream close");
  });
});

Deno.test("issue 29: subscription refusals and ends keep their meaning as Connect codes (limit, disabled, token expiry)", async () => {
  await withConnectRouter({ subscriptions: { max_total: 1 } }, async (fixture, client) => {
    const controller = new AbortController();
    const ended = drain(client.onReview({}, { signal: controller.signal }), []);
    await until(() => fixture.feed.open === 1, "the upstream subscription");
    const refused = await drain(client.onReview({}), []);
    assert.equal(refused?.code, Code.ResourceExhausted, "SUBSCRIPTION_LIMIT_REACHED");
    controller.abort();
    await ended;
  });
  await withConnectRouter({ subscriptions: { enabled: false } }, async (fixture, client) => {
    const refused = await drain(client.onReview({}), []);
    assert.equal(refused?.code, Code.Unimplemented, "SUBSCRIPTIONS_DISABLED");
    assert.equal(fixture.feed.opened, 0);
  });
  await withConnectRouter({ authentication: true }, async (fixture, client) => {
    const token = await fixture.token("", 1);
    const error = await drain(
      client.onReview({}, { headers: { authorization: `Bearer ${token}` } }),
      [],
    );
    assert.equal(error?.code, Code.Unauthenticated, "SUBSCRIPTION_TOKEN_EXPIRED");
    assert.match(error?.rawMessage ?? "", /expired/);
    await until(() => fixture.feed.open === 0, "the upstream close");
  });
});
