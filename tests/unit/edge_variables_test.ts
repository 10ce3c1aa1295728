/**
 * Hostile variables on `/graphql`: every coercion error is a bounded
 * `BAD_USER_INPUT`, whatever the size of the value it is about.
 */
import assert from "node:assert/strict";
import { BASE, edgeState, graphqlPost, handlerOf } from "./_edge_fixture.ts";

const FILTER_QUERY = "query($f: ProductFilter) { products(filter: $f) { upc } }";

async function post(body: unknown) {
  const handle = handlerOf(await edgeState({}, { answer: () => ({ data: { products: [] } }) }));
  const response = await handle(graphqlPost(body));
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) };
}

Deno.test("an input object with 99 000 unknown keys (under max_input_values) gets 51 short BAD_USER_INPUT errors, not 54 MB of messages and a 502", async () => {
  const f = Object.fromEntries(Array.from({ length: 99_000 }, (_, i) => [`k${i}`, 1]));
  const { status, text, body } = await post({ query: FILTER_QUERY, variables: { f } });
  assert.equal(status, 200);
  assert.equal(body.errors.length, 51);
  assert.ok(
    body.errors.every((e: { extensions: { code: string } }) =>
      e.extensions.code === "BAD_USER_INPUT"
    ),
  );
  assert.equal(
    body.errors[0].message,
    'Variable "$f" got invalid value { k0: 1, k1: 1, k2: 1, k3: 1, k4: 1, k5: 1, k6: 1, k7: 1, k8: 1, k9: 1, ... }; ' +
      'Field "k0" is not defined by type "ProductFilter".',
  );
  assert.match(body.errors[50].message, /error limit reached/);
  assert.ok(text.length < 20_000, `${text.length} bytes`);
});

Deno.test("a 3 MB string variable of the wrong type is quoted clipped, never echoed whole", async () => {
  const value = "x".repeat(3_000_000);
  const { status, text, body } = await post({
    query: "query($n: Int) { topProducts(first: $n) { upc } }",
    variables: { n: value },
  });
  assert.equal(status, 200);
  assert.equal(body.errors.length, 1);
  assert.equal(body.errors[0].extensions.code, "BAD_USER_INPUT");
  assert.match(
    body.errors[0].message,
    /^Variable "\$n" got invalid value "x{99}…; Int cannot represent/,
  );
  assert.ok(text.length < 2_000, `${text.length} bytes`);
});

Deno.test("small invalid variables keep graphql-js's messages; defaults apply; a variable named __proto__ is a variable", async () => {
  const bad = await post({
    query: "query($n: Int) { topProducts(first: $n) { upc } }",
    variables: { n: 1.5 },
  });
  assert.equal(
    bad.body.errors[0].message,
    'Variable "$n" got invalid value 1.5; Int cannot represent non-integer value: 1.5',
  );
  const nested = await post({ query: FILTER_QUERY, variables: { f: { category: "NOPE" } } });
  assert.equal(
    nested.body.errors[0].message,
    'Variable "$f" got invalid value "NOPE" at "f.category"; Value "NOPE" does not exist in "Category" enum.',
  );
  const seen: unknown[] = [];
  const handle = handlerOf(
    await edgeState({}, {
      answer: (_subgraph, request) => {
        seen.push(request.variables);
        return { data: { topProducts: [] } };
      },
    }),
  );
  const response = await handle(graphqlPost({
    query: "query($__proto__: Int = 2) { topProducts(first: $__proto__) { upc } }",
  }));
  assert.deepEqual(await response.json(), { data: { topProducts: [] } });
  assert.equal(JSON.stringify(seen), '[{"__proto__":2}]');
});

Deno.test("a member named twice in the JSON body or the GET variables is a 400 naming it, not the last one silently", async () => {
  const seen: string[] = [];
  const handle = handlerOf(await edgeState({}, { seen }));
  const cases: [Request, string][] = [
    [
      graphqlPost('{"query":"{ __typename }","query":"{ users { id } }"}'),
      'Duplicate key "query" in the request body (at $): a JSON object must name each member once',
    ],
    [
      graphqlPost(
        '{"query":"query($u: ID!) { user(id: $u) { id } }","variables":{"u":"1","u":"2"}}',
      ),
      'Duplicate key "u" in the request body (at $.variables): a JSON object must name each member once',
    ],
    [
      new Request(
        `${BASE}/graphql?query=${
          encodeURIComponent("query($u: ID!) { user(id: $u) { id } }")
        }&variables=${encodeURIComponent('{"u":"1","u":"2"}')}`,
        { headers: { "apollo-require-preflight": "1" } },
      ),
      'Duplicate key "u" in the "variables" parameter (at $): a JSON object must name each member once',
    ],
  ];
  for (const [request, message] of cases) {
    const response = await handle(request);
    assert.equal(response.status, 400);
    const body = await response.json();
    assert.equal(body.errors[0].extensions.code, "BAD_REQUEST");
    assert.equal(body.errors[0].message, message);
  }
  const repeated = await handle(
    new Request(`${BASE}/graphql?query=%7B__typename%7D&query=%7Busers%7Bid%7D%7D`, {
      headers: { "apollo-require-preflight": "1" },
    }),
  );
  assert.equal(repeated.status, 400);
  assert.equal(
    (await repeated.json()).errors[0].message,
    'The "query" parameter is given more than once; give it once',
  );
  assert.deepEqual(seen, [], "nothing was run");
  const fine = await handle(
    graphqlPost(
      '{"query":"{ a: __typename b: __typename }","variables":{"x":{"a":1},"y":{"a":1}}}',
    ),
  );
  assert.deepEqual(await fine.json(), { data: { a: "Query", b: "Query" } });
});

Deno.test("an integer beyond 2^53 in the variables runs as its exact digits, never as the neighbouring number JSON.parse makes of it", async () => {
  const seen: unknown[] = [];
  const handle = handlerOf(
    await edgeState({}, {
      answer: (_subgraph, request) => {
        seen.push(request.variables);
        return { data: { user: null } };
      },
    }),
  );
  const query = "query($u: ID!) { user(id: $u) { id } }";
  const post = await handle(
    graphqlPost(`{"query":"${query}","variables":{"u":9007199254740993}}`),
  );
  assert.equal(post.status, 200);
  await post.body?.cancel();
  const get = await handle(
    new Request(
      `${BASE}/graphql?query=${encodeURIComponent(query)}&variables=${
        encodeURIComponent('{"u":12345678901234567890}')
      }`,
      { headers: { "apollo-require-preflight": "1" } },
    ),
  );
  assert.equal(get.status, 200);
  await get.body?.cancel();
  for (const exact of ["9007199254740991", '"9007199254740993"']) {
    const response = await handle(graphqlPost(`{"query":"${query}","variables":{"u":${exact}}}`));
    assert.equal(response.status, 200);
    await response.body?.cancel();
  }
  assert.deepEqual(seen, [
    { u: "9007199254740993" },
    { u: "12345678901234567890" },
    { u: "9007199254740991" },
    { u: "9007199254740993" },
  ]);
});
