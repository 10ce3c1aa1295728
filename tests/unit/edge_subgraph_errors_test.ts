import assert from "node:assert/strict";
import { edgeState, graphqlPost, handlerOf } from "./_edge_fixture.ts";

const LEAKY = {
  data: { users: [{ id: "1", name: null }] },
  errors: [{
    message: "name resolver failed",
    path: ["users", 0, "name"],
    locations: [{ line: 1, column: 9 }],
    extensions: {
      code: "RESOLVER_FAILED",
      secret: "db-password",
      exception: { stacktrace: ["Error: at /srv/accounts/src/resolvers.js:12:7"] },
      stacktrace: ["at /srv/accounts/src/resolvers.js:12:7"],
    },
  }],
};

async function run(raw: Record<string, unknown>, answer: () => unknown) {
  const handle = handlerOf(await edgeState(raw, { answer }));
  const response = await handle(
    graphqlPost({ query: "{ users { id name } }" }, { "x-request-id": "edge-1" }),
  );
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) };
}

Deno.test("issue 14: by default a subgraph's errors are wrapped in one DOWNSTREAM_SERVICE_ERROR naming the service", async () => {
  const { body } = await run({}, () => LEAKY);
  assert.equal(body.errors.length, 1);
  const [wrapper] = body.errors;
  assert.equal(wrapper.message, "Failed to fetch from Subgraph 'accounts'");
  assert.deepEqual(wrapper.path, ["users", 0, "name"]);
  assert.equal(wrapper.extensions.code, "DOWNSTREAM_SERVICE_ERROR");
  assert.equal(wrapper.extensions.serviceName, "accounts");
  assert.equal(wrapper.extensions.request_id, "edge-1");
  assert.deepEqual(wrapper.extensions.errors, [{
    message: "name resolver failed",
    path: ["users", 0, "name"],
    extensions: { code: "RESOLVER_FAILED", serviceName: "accounts" },
  }]);
});

Deno.test("issue 14: stack traces, unlisted extension keys and locations never reach the client", async () => {
  for (const mode of ["wrapped", "pass-through"]) {
    const { text } = await run({ subgraph_error_propagation: { mode } }, () => LEAKY);
    assert.doesNotMatch(text, /stacktrace|exception|resolvers\.js|db-password|secret|locations/);
  }
});

Deno.test("issue 14: pass-through forwards each filtered error; an error without a code gets the default one", async () => {
  const answer = () => ({
    data: { users: [{ id: "1", name: null }] },
    errors: [LEAKY.errors[0], { message: "no code", path: ["users", 0, "name"] }],
  });
  const { body } = await run({ subgraph_error_propagation: { mode: "pass-through" } }, answer);
  assert.deepEqual(body.errors, [
    {
      message: "name resolver failed",
      path: ["users", 0, "name"],
      extensions: { code: "RESOLVER_FAILED", serviceName: "accounts", request_id: "edge-1" },
    },
    {
      message: "no code",
      path: ["users", 0, "name"],
      extensions: {
        code: "DOWNSTREAM_SERVICE_ERROR",
        serviceName: "accounts",
        request_id: "edge-1",
      },
    },
  ]);
});

Deno.test("issue 14: allowed_extension_fields keeps listed keys, but a stack trace is never forwarded", async () => {
  const { body } = await run({
    subgraph_error_propagation: {
      mode: "pass-through",
      allowed_extension_fields: ["code", "secret", "exception", "stacktrace"],
      attach_service_name: false,
      omit_locations: false,
    },
  }, () => LEAKY);
  assert.deepEqual(body.errors[0].extensions, {
    code: "RESOLVER_FAILED",
    secret: "db-password",
    request_id: "edge-1",
  });
  assert.deepEqual(body.errors[0].locations, [{ line: 1, column: 9 }]);
});

Deno.test("issue 14: an unreachable subgraph is named without its URL, host or port", async () => {
  const { body, text } = await run({}, () => {
    throw new TypeError(
      "error sending request for url (http://127.0.0.1:4001/graphql): connection refused",
    );
  });
  assert.equal(body.errors[0].message, 'Cannot reach the subgraph "accounts"');
  assert.equal(body.errors[0].extensions.code, "SUBGRAPH_UNREACHABLE");
  assert.doesNotMatch(text, /127\.0\.0\.1|4001|http:|connection refused/);
});

Deno.test("issue 14: a wrapped subgraph error still explains the nulls it caused (no extra non-null errors)", async () => {
  const { body } = await run({}, () => ({
    data: { users: [{ id: "1", name: "Ada" }, { id: "2", name: null }] },
    errors: [
      { message: "first", path: ["users", 0, "id"] },
      { message: "second", path: ["users", 1, "name"] },
    ],
  }));
  assert.equal(body.data, null);
  assert.equal(body.errors.length, 1);
  assert.deepEqual(body.errors[0].extensions.errors.map((e: { message: string }) => e.message), [
    "first",
    "second",
  ]);
});

Deno.test("issue 14: a subgraph error path that is not a response path (too long, bad keys) is dropped", async () => {
  const bad = [
    Array.from({ length: 5000 }, () => "users"),
    ["users", -1, "name"],
    ["users", { toString: "x" }],
    ["users", 0.5],
  ];
  for (const path of bad) {
    const { body, text } = await run(
      { subgraph_error_propagation: { mode: "pass-through" } },
      () => ({ data: { users: [{ id: "1", name: null }] }, errors: [{ message: "bad", path }] }),
    );
    assert.equal(body.errors[0].message, "bad");
    assert.equal(body.errors[0].path, undefined, JSON.stringify(path).slice(0, 40));
    assert.ok(text.length < 1000);
  }
});

Deno.test("issue 14: at most 100 errors of one subgraph response are forwarded, the rest are counted", async () => {
  for (const mode of ["wrapped", "pass-through"]) {
    const { body } = await run({ subgraph_error_propagation: { mode } }, () => ({
      data: { users: [{ id: "1", name: null }] },
      errors: Array.from({ length: 100_000 }, (_, i) => ({ message: `e${i}` })),
    }));
    const forwarded: { message: string }[] = mode === "wrapped"
      ? body.errors[0].extensions.errors
      : body.errors;
    const messages = forwarded.map((e) => e.message);
    assert.equal(messages.filter((m) => /^e\d+$/.test(m)).length, 100, mode);
    assert.equal(messages.indexOf("e99"), 99);
    assert.equal(
      messages[100],
      `The subgraph "accounts" sent 100000 errors; the first 100 are forwarded`,
    );
  }
});

Deno.test("issue 14: a wrongly shaped subgraph response (data not an object, errors not a list) is an error, not a silent null", async () => {
  for (
    const [answer, reason] of [
      [{ data: [1, 2] }, "its data is not an object"],
      [{ data: "users" }, "its data is not an object"],
      [{ data: { users: [] }, errors: { message: "x" } }, "its errors are not a list"],
    ] as const
  ) {
    const { body } = await run({}, () => answer);
    assert.equal(body.data, null);
    assert.equal(
      body.errors[0].message,
      `The subgraph "accounts" answered a malformed GraphQL response: ${reason}`,
    );
    assert.equal(body.errors[0].extensions.code, "SUBGRAPH_ERROR");
  }
});

Deno.test("issue 15: two subgraphs answering the same extra field nested 100 000 deep get an answer, not a 500 (traced too)", async () => {
  const deep = () => JSON.parse('{"z":'.repeat(100_000) + "1" + "}".repeat(100_000));
  // Neither asked for `z`: merging it recursed once per level and overflowed the stack.
  const answer = (subgraph: string) =>
    subgraph === "products"
      ? { data: { topProducts: [{ __typename: "Product", upc: "1", z: deep() }] } }
      : { data: { _entities: [{ reviews: [{ body: "ok" }], z: deep() }] } };
  const query = "{ topProducts { upc reviews { body } } }";
  const expected = { data: { topProducts: [{ upc: "1", reviews: [{ body: "ok" }] }] } };
  const handle = handlerOf(await edgeState({}, { answer }));
  const response = await handle(graphqlPost({ query }));
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), expected);
  // A traced request also copies what each fetch sent (Layers.materialize).
  const traced = handlerOf(await edgeState({ dev_mode: true }, { answer }));
  const tracedResponse = await traced(
    new Request(graphqlPost({ query }).url + "?gw_trace=true", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query }),
    }),
  );
  assert.equal(tracedResponse.status, 200);
  const body = await tracedResponse.json();
  assert.deepEqual(body.data, expected.data);
  assert.ok(body.extensions?.trace, "the request was traced");
});

Deno.test("issue 15: an entity list nested 100 000 lists deep gets a SUBGRAPH_INVALID_RESPONSE, not a 500", async () => {
  // Walking a fetch's path into lists of lists recursed once per level.
  const nested = JSON.parse(
    "[".repeat(100_000) + '{"__typename":"Product","upc":"1"}' + "]".repeat(100_000),
  );
  const answer = (subgraph: string) =>
    subgraph === "products"
      ? { data: { topProducts: [nested] } }
      : { data: { _entities: [{ reviews: [{ body: "ok" }] }] } };
  const handle = handlerOf(await edgeState({}, { answer }));
  const response = await handle(graphqlPost({ query: "{ topProducts { upc reviews { body } } }" }));
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.equal(body.data, null);
  assert.equal(body.errors[0].extensions.code, "SUBGRAPH_INVALID_RESPONSE");
  assert.deepEqual(body.errors[0].path, ["topProducts", 0]);
  // Beside a real entity whose fetch fails: placing the error walks the lists too.
  const failing = (subgraph: string) =>
    subgraph === "products"
      ? { data: { topProducts: [{ __typename: "Product", upc: "1" }, nested] } }
      : {
        data: { _entities: [null] },
        errors: [{ message: "no reviews", path: ["_entities", 0, "reviews"] }],
      };
  const both = handlerOf(
    await edgeState({ subgraph_error_propagation: { mode: "pass-through" } }, { answer: failing }),
  );
  const placed = await both(graphqlPost({ query: "{ topProducts { upc reviews { body } } }" }));
  assert.equal(placed.status, 200);
  const paths = (await placed.json()).errors.map((e: { path?: unknown[] }) => e.path);
  assert.ok(paths.some((p: unknown[] | undefined) => p?.join(".") === "topProducts.0.reviews"));
});

Deno.test("an entity answer that is neither an object nor null is a SUBGRAPH_ERROR, not a silent null for its fields", async () => {
  for (const wrong of [4, "4", true, [{ averageRating: 4 }]]) {
    const answer = (subgraph: string) =>
      subgraph === "products"
        ? {
          data: {
            topProducts: [{ __typename: "Product", upc: "1" }, { __typename: "Product", upc: "2" }],
          },
        }
        : { data: { _entities: [{ averageRating: 5 }, wrong] } };
    const handle = handlerOf(await edgeState({}, { answer }));
    const response = await handle(graphqlPost({ query: "{ topProducts { upc averageRating } }" }));
    const body = await response.json();
    assert.deepEqual(body.data, {
      topProducts: [{ upc: "1", averageRating: null }, { upc: "2", averageRating: null }],
    });
    assert.equal(
      body.errors[0].message,
      'The subgraph "reviews" answered a malformed GraphQL response: an entity in its _entities is neither an object nor null',
    );
    assert.equal(body.errors[0].extensions.code, "SUBGRAPH_ERROR");
  }
  // A null entity (not found) stays a null without an error.
  const notFound = (subgraph: string) =>
    subgraph === "products"
      ? { data: { topProducts: [{ __typename: "Product", upc: "1" }] } }
      : { data: { _entities: [null] } };
  const handle = handlerOf(await edgeState({}, { answer: notFound }));
  const body = await (await handle(graphqlPost({ query: "{ topProducts { averageRating } }" })))
    .json();
  assert.deepEqual(body, { data: { topProducts: [{ averageRating: null }] } });
});

Deno.test("a subgraph answer with neither data nor errors is a SUBGRAPH_ERROR, not a silent null", async () => {
  for (
    const empty of [{ data: null }, { data: null, errors: [] }, { errors: [] }, { errors: null }]
  ) {
    const answer = (subgraph: string) =>
      subgraph === "products"
        ? { data: { topProducts: [{ __typename: "Product", upc: "1" }] } }
        : empty;
    const handle = handlerOf(await edgeState({}, { answer }));
    const response = await handle(graphqlPost({ query: "{ topProducts { upc averageRating } }" }));
    const body = await response.json();
    assert.deepEqual(body.data, { topProducts: [{ upc: "1", averageRating: null }] });
    assert.equal(
      body.errors?.[0]?.message,
      'The subgraph "reviews" answered a malformed GraphQL response: it has neither data nor errors',
    );
    assert.equal(body.errors[0].extensions.code, "SUBGRAPH_ERROR");
  }
});

Deno.test("an entity answer naming another __typename cannot change the type of the object it merges into, nor give it that type's fields", async () => {
  const handle = handlerOf(
    await edgeState({}, {
      answer: (_subgraph, body) =>
        body.query.includes("_entities")
          // The reviews subgraph answers a Product representation as a Brand.
          ? { data: { _entities: [{ __typename: "Brand", averageRating: 5, id: "b1" }] } }
          : { data: { search: [{ __typename: "Product", upc: "1", name: "Chair" }] } },
    }),
  );
  const response = await handle(graphqlPost({
    query:
      '{ search(text: "a") { __typename ... on Product { upc name averageRating } ... on Brand { id } } }',
  }));
  // Nor are the Brand's fields merged into it (its rating is no Product's).
  const body = await response.json();
  assert.deepEqual(body.data, {
    search: [{ __typename: "Product", upc: "1", name: "Chair", averageRating: null }],
  });
  assert.equal(body.errors.length, 1);
  assert.deepEqual(body.errors[0].extensions.errors[0], {
    message: `The subgraph "reviews" answered an entity of another type than its representation's`,
    path: ["search", 0],
    extensions: { code: "SUBGRAPH_ERROR", serviceName: "reviews" },
  });
});

Deno.test("a subgraph's answer members its fetch did not select are not merged: they cannot overwrite another subgraph's root fields or entity fields", async () => {
  const handle = handlerOf(
    await edgeState({}, {
      answer: async (subgraph, body) => {
        if (subgraph === "accounts") {
          // Answers last, with a root field of the products subgraph.
          await new Promise((resolve) => setTimeout(resolve, 20));
          return { data: { users: [{ id: "1" }], topProducts: [{ upc: "EVIL" }] } };
        }
        if (body.query.includes("_entities")) {
          // The reviews subgraph answers a field the products subgraph owns.
          return { data: { _entities: [{ reviews: [], name: "EVIL", price: -1 }] } };
        }
        return { data: { topProducts: [{ __typename: "Product", upc: "1", name: "Chair" }] } };
      },
    }),
  );
  const roots = await handle(graphqlPost({ query: "{ users { id } topProducts { upc } }" }));
  assert.deepEqual(await roots.json(), {
    data: { users: [{ id: "1" }], topProducts: [{ upc: "1" }] },
  });
  const entity = await handle(
    graphqlPost({ query: "{ topProducts { upc name reviews { rating } } }" }),
  );
  assert.deepEqual(await entity.json(), {
    data: { topProducts: [{ upc: "1", name: "Chair", reviews: [] }] },
  });
});

Deno.test("a subgraph error whose path names nothing its fetch selected keeps no path (it would point nowhere in the response)", async () => {
  const handle = handlerOf(
    await edgeState({ subgraph_error_propagation: { mode: "pass-through" } }, {
      answer: (subgraph, body) => {
        if (subgraph === "accounts") {
          return {
            data: { users: [{ id: "1", name: null }] },
            errors: [
              { message: "nowhere", path: ["nope", 5, "deep"] },
              { message: "number first", path: [0, "users"] },
              { message: "here", path: ["users", 0, "name"] },
            ],
          };
        }
        return body.query.includes("_entities")
          ? {
            data: { _entities: [null] },
            errors: [
              { message: "not asked", path: ["_entities", 0, "name"] },
              { message: "asked", path: ["_entities", 0, "reviews"] },
            ],
          }
          : { data: { topProducts: [{ __typename: "Product", upc: "1", name: "Chair" }] } };
      },
    }),
  );
  const roots = await (await handle(graphqlPost({ query: "{ users { id name } }" }))).json();
  assert.deepEqual(
    roots.errors.map((e: { message: string; path?: unknown }) => [e.message, e.path]),
    [["nowhere", undefined], ["number first", undefined], ["here", ["users", 0, "name"]]],
  );
  const entities = await (await handle(
    graphqlPost({ query: "{ topProducts { upc name reviews { rating } } }" }),
  )).json();
  assert.deepEqual(
    entities.errors.map((e: { message: string; path?: unknown }) => [e.message, e.path]),
    [["not asked", undefined], ["asked", ["topProducts", 0, "reviews"]]],
  );
});
