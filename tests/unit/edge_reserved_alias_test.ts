/**
 * The response key `__typename` is the router's: it reads each object's type
 * there (entity representations, abstract types). A client alias may not put
 * another field's value under it.
 */
import assert from "node:assert/strict";
import { edgeState, graphqlPost, handlerOf } from "./_edge_fixture.ts";

Deno.test("a field aliased __typename is refused by validation: its value never becomes the __typename of an entity representation", async () => {
  const sent: { query: string; variables?: Record<string, unknown> }[] = [];
  const handle = handlerOf(
    await edgeState({}, {
      answer: (_subgraph, body) => {
        sent.push(body);
        // A subgraph answers the alias as asked: the name under "__typename".
        if (body.query.includes("topProducts")) {
          return { data: { topProducts: [{ __typename: "User", upc: "1" }] } };
        }
        return { data: { _entities: [{ reviews: [] }] } };
      },
    }),
  );
  for (
    const query of [
      "{ topProducts { __typename: name reviews { rating } } }",
      '{ search(text: "a") { ... on Product { __typename: upc reviews { rating } } } }',
      "{ topProducts { ...F } } fragment F on Product { __typename: name }",
    ]
  ) {
    sent.length = 0;
    const response = await handle(graphqlPost({ query }));
    const body = await response.json();
    assert.equal(response.status, 200, query);
    assert.equal(body.data, undefined, query);
    assert.equal(body.errors[0].extensions.code, "GRAPHQL_VALIDATION_FAILED", query);
    assert.match(
      body.errors[0].message,
      /^The alias "__typename" is reserved for the __typename field; "(name|upc)" cannot use it\.$/,
    );
    assert.deepEqual(sent, [], query);
  }
  const typename = await handle(
    graphqlPost({ query: "{ topProducts { __typename: __typename kind: __typename upc } }" }),
  );
  assert.equal((await typename.json()).errors, undefined);
});
