/**
 * `@requiresScopes` on plain GraphQL requests (DESIGN §2 `authentication` /
 * `authorization`): a real router with a JWKS, a real subgraph, real tokens.
 */
import assert from "node:assert/strict";
import { type McpFixture, withMcpFixture } from "./_mcp_fixture.ts";

function post(fixture: McpFixture, query: string, token?: string): Promise<Response> {
  return fetch(`${fixture.router.url}/graphql`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/graphql-response+json",
      "x-request-id": "authz-1",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ query }),
  });
}

Deno.test("authorization: a field without requirements needs no token", async () => {
  await withMcpFixture({ authentication: true }, async (fixture) => {
    const response = await post(fixture, "{ hello }");
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { data: { hello: "Hello!" } });
  });
});

const REJECT = { authorization: { reject_operation_if_unauthorized: true } };

Deno.test("issue 18: an anonymous request gets null + UNAUTHORIZED_FIELD_OR_TYPE for a protected field, the rest runs, and the subgraph is never asked for it", async () => {
  await withMcpFixture({ authentication: true }, async (fixture) => {
    const response = await post(fixture, "{ hello secret }");
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), {
      data: { hello: "Hello!", secret: null },
      errors: [{
        message: "Unauthorized field or type",
        path: ["secret"],
        extensions: { code: "UNAUTHORIZED_FIELD_OR_TYPE", request_id: "authz-1" },
      }],
    });
    assert.equal(fixture.subgraphQueries.length, 1);
    assert.doesNotMatch(fixture.subgraphQueries[0]!, /secret/);
  });
});

Deno.test("issue 18: a token lacking every group gets the field removed (null + error), a token holding one gets it", async () => {
  await withMcpFixture({ authentication: true }, async (fixture) => {
    const weak = await post(fixture, "{ secret }", await fixture.token("A B"));
    assert.equal(weak.status, 200);
    const body = await weak.json();
    assert.deepEqual(body.data, { secret: null });
    assert.equal(body.errors[0].extensions.code, "UNAUTHORIZED_FIELD_OR_TYPE");
    assert.equal(fixture.subgraphQueries.length, 0, "a fully removed operation calls no subgraph");
    const strong = await post(fixture, "{ secret }", await fixture.token("A B C"));
    assert.deepEqual(await strong.json(), { data: { secret: "s3cret" } });
  });
});

Deno.test("issue 18: the plan cache keeps the filtered and the full plan apart (anonymous after authorized never sees the field)", async () => {
  await withMcpFixture({ authentication: true }, async (fixture) => {
    const strong = await post(fixture, "{ secret hello }", await fixture.token("D"));
    assert.deepEqual(await strong.json(), { data: { secret: "s3cret", hello: "Hello!" } });
    const anonymous = await post(fixture, "{ secret hello }");
    const body = await anonymous.json();
    assert.deepEqual(body.data, { secret: null, hello: "Hello!" });
  });
});

Deno.test("issue 18: reject_operation_if_unauthorized refuses the whole operation without a token (401) and never reaches a subgraph", async () => {
  await withMcpFixture({ authentication: true, ...REJECT }, async (fixture) => {
    const response = await post(fixture, "{ secret hello }");
    assert.equal(response.status, 401);
    assert.equal(response.headers.get("www-authenticate"), "Bearer");
    const body = await response.json();
    assert.equal(body.errors[0].extensions.code, "UNAUTHENTICATED");
    assert.equal(fixture.subgraphQueries.length, 0);
  });
});

Deno.test("issue 18: reject_operation_if_unauthorized answers a token lacking every group 403 with the best group (spec 7.2 rule)", async () => {
  await withMcpFixture({ authentication: true, ...REJECT }, async (fixture) => {
    const response = await post(fixture, "{ secret }", await fixture.token("A B"));
    assert.equal(response.status, 403);
    assert.equal(
      response.headers.get("www-authenticate"),
      'Bearer error="insufficient_scope", scope="A B C"',
    );
    const body = await response.json();
    assert.equal(body.errors[0].extensions.code, "FORBIDDEN");
    assert.match(body.errors[0].message, /A B C/);
    assert.equal(fixture.subgraphQueries.length, 0);
  });
});

Deno.test("authorization: a token holding one AND-group runs the operation", async () => {
  await withMcpFixture({ authentication: true }, async (fixture) => {
    const response = await post(fixture, "{ secret hello }", await fixture.token("D"));
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { data: { secret: "s3cret", hello: "Hello!" } });
  });
});

Deno.test("authorization: an invalid token is 401 invalid_token even for public fields", async () => {
  await withMcpFixture({ authentication: true }, async (fixture) => {
    const response = await post(fixture, "{ hello }", await fixture.token("D", { expired: true }));
    assert.equal(response.status, 401);
    assert.match(response.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
    assert.equal(fixture.subgraphQueries.length, 0);
  });
});

Deno.test("authorization: require_authentication refuses anonymous requests to public fields", async () => {
  await withMcpFixture(
    { authentication: true, authorization: { require_authentication: true } },
    async (fixture) => {
      const anonymous = await post(fixture, "{ hello }");
      assert.equal(anonymous.status, 401);
      const signed = await post(fixture, "{ hello }", await fixture.token(""));
      assert.equal(signed.status, 200);
    },
  );
});

Deno.test("authorization: who asks is settled before the document or message is read (no schema names in an anonymous or forged request's answer)", async () => {
  await withMcpFixture(
    { authentication: true, authorization: { require_authentication: true } },
    async (fixture) => {
      for (const token of [undefined, "forged.token.value"]) {
        const invalid = await post(fixture, "{ hello nope }", token);
        assert.equal(invalid.status, 401, `token ${token}`);
        const text = await invalid.text();
        assert.doesNotMatch(text, /nope|Cannot query field/);
        const call = await fetch(`${fixture.router.url}/service.v1.GraphService/GetHello`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "connect-protocol-version": "1",
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          },
          body: JSON.stringify({ nope: 1 }),
        });
        assert.equal(call.status, 401, `Connect, token ${token}`);
        assert.equal((await call.json()).code, "unauthenticated");
      }
      // With a token the same documents are answered as before.
      const signed = await post(fixture, "{ hello nope }", await fixture.token(""));
      assert.equal(signed.status, 400);
      assert.match((await signed.json()).errors[0].message, /Cannot query field "nope"/);
    },
  );
});

Deno.test("issue 18: without authentication.jwt there is no verified identity, so protected fields are never served (even with a token)", async () => {
  await withMcpFixture({}, async (fixture) => {
    const response = await post(fixture, "{ secret }", "forged.token.value");
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.deepEqual(body.data, { secret: null });
    assert.equal(body.errors[0].extensions.code, "UNAUTHORIZED_FIELD_OR_TYPE");
    assert.equal(fixture.subgraphQueries.length, 0);
  });
});

Deno.test("authorization: without key sources a guarded supergraph logs a start-up warning", async () => {
  const lines: string[] = [];
  const { createLogger } = await import("../../lib/log/mod.ts");
  const { buildState } = await import("../../lib/state/mod.ts");
  const { parseConfig } = await import("../../lib/config/mod.ts");
  const { composeSupergraph } = await import("../../lib/compose/mod.ts");
  const sdl =
    `extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@requiresScopes"])
type Query { secret: String @requiresScopes(scopes: [["A"]]) }`;
  const composed = composeSupergraph([{ name: "a", url: "http://127.0.0.1:1/graphql", sdl }]);
  assert.ok(composed.ok);
  const config = parseConfig({ supergraph_path: "unused.graphql", mcp: { enabled: false } });
  await buildState({
    config,
    log: createLogger({ level: "warn", write: (line: string) => lines.push(line) }),
    supergraphSdl: composed.supergraphSdl,
    operationFiles: [],
    traceKeyPem: null,
  });
  const warning = lines.map((l) => JSON.parse(l)).find((l) => /never served/.test(l.msg));
  assert.equal(warning?.level, "warn");
  assert.equal(warning?.guarded_elements, 1);
});
