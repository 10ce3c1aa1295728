import assert from "node:assert/strict";
import { compileHeaderRules, headerPairs } from "../../../lib/engine/fetch/headers.ts";

const CLIENT = new Headers({
  "x-tenant": "t1",
  "x-trace-id": "abc",
  authorization: "Bearer token",
  "content-type": "application/json",
});

function propagate(config: Parameters<typeof compileHeaderRules>[0], subgraph = "a"): Headers {
  const out = new Headers();
  compileHeaderRules(config, subgraph)?.(CLIENT, out);
  return out;
}

Deno.test("DESIGN §4: without rules nothing is forwarded", () => {
  assert.equal(compileHeaderRules({ all: { request: [] }, subgraphs: {} }, "a"), null);
});

Deno.test("DESIGN §4: propagate named, with rename and default", () => {
  const out = propagate({
    all: {
      request: [
        { op: "propagate", named: "Authorization", rename: "x-auth" },
        { op: "propagate", named: "x-missing", default: "fallback" },
      ],
    },
    subgraphs: {},
  });
  assert.deepEqual([...out], [["x-auth", "Bearer token"], ["x-missing", "fallback"]]);
});

Deno.test("DESIGN §4: propagate matching a regular expression, never hop-by-hop or body headers", () => {
  const out = propagate({
    all: { request: [{ op: "propagate", matching: "^x-|^content-" }] },
    subgraphs: {},
  });
  assert.deepEqual([...out], [["x-tenant", "t1"], ["x-trace-id", "abc"]]);
});

Deno.test("DESIGN §4: subgraph rules apply after the rules for all, only to that subgraph", () => {
  const config = {
    all: { request: [{ op: "set" as const, name: "x-env", value: "prod" }] },
    subgraphs: { b: { request: [{ op: "set" as const, name: "x-env", value: "staging" }] } },
  };
  assert.equal(propagate(config, "a").get("x-env"), "prod");
  assert.equal(propagate(config, "b").get("x-env"), "staging");
});

Deno.test("headers: a matching rule never forwards credentials (token, cookies, the trace token); a named rule does", () => {
  const client = new Headers({
    authorization: "Bearer token",
    cookie: "session=1",
    "x-gw-token": "trace-token",
    "x-api-token": "custom-token",
    "x-tenant": "t1",
  });
  const config = {
    all: { request: [{ op: "propagate" as const, matching: ".*" }] },
    subgraphs: {},
  };
  const out = new Headers();
  compileHeaderRules(config, "a", { credentials: ["X-Api-Token"] })?.(client, out);
  assert.deepEqual([...out], [["x-tenant", "t1"]]);
  const named = new Headers();
  compileHeaderRules(
    {
      all: {
        request: [{ op: "propagate", named: "Authorization" }, {
          op: "propagate",
          named: "x-api-token",
        }],
      },
      subgraphs: {},
    },
    "a",
    { credentials: ["x-api-token"] },
  )?.(client, named);
  assert.deepEqual([...named], [["authorization", "Bearer token"], [
    "x-api-token",
    "custom-token",
  ]]);
});

Deno.test("issue 45: headerPairs gives what a Headers object gave (names lower-cased, a later rule replaces, ends trimmed) and refuses what Headers refuses", () => {
  const rules = {
    all: {
      request: [
        { op: "propagate" as const, named: "X-Tenant" },
        { op: "set" as const, name: "X-Tenant", value: " fixed\t" },
        { op: "propagate" as const, named: "Authorization" },
      ],
    },
    subgraphs: {},
  };
  const compiled = compileHeaderRules(rules, "a")!;
  const base: [string, string][] = [["content-type", "application/json"]];
  const pairs = headerPairs(compiled, CLIENT, base);
  assert.deepEqual(pairs, [
    ["content-type", "application/json"],
    ["x-tenant", "fixed"],
    ["authorization", "Bearer token"],
  ]);
  const headers = new Headers(base);
  compiled(CLIENT, headers);
  assert.deepEqual(new Map(pairs), new Map([...headers]), "the same headers as through Headers");
  assert.deepEqual(base, [["content-type", "application/json"]], "the base list is not changed");
  for (const value of ["a\r\nx-injected: 1", "a\0b", "caf\u20ac"]) {
    const set = compileHeaderRules({
      all: { request: [{ op: "set", name: "x-a", value }] },
      subgraphs: {},
    }, "a")!;
    assert.throws(() => headerPairs(set, CLIENT, base), TypeError, JSON.stringify(value));
    assert.throws(() => set(CLIENT, new Headers()), TypeError, "Headers refuses it too");
  }
  const badName = compileHeaderRules({
    all: { request: [{ op: "set", name: "x a", value: "1" }] },
    subgraphs: {},
  }, "a")!;
  assert.throws(() => headerPairs(badName, CLIENT, base), TypeError);
});
