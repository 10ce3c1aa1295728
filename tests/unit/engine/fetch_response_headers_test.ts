/**
 * Issue 43: response header rules (lib/engine/fetch/response_headers.ts): which
 * subgraph answer headers reach the client, renamed or defaulted, and how the
 * values of several answers merge.
 */
import assert from "node:assert/strict";
import type { HeaderRule } from "../../../lib/config/types.ts";
import {
  compileResponseHeaderRules,
  mergeCacheControl,
} from "../../../lib/engine/fetch/response_headers.ts";

function collect(
  rules: { all?: HeaderRule[]; media?: HeaderRule[] },
  answers: readonly (readonly [string, HeadersInit])[],
): Headers {
  const compiled = compileResponseHeaderRules({
    all: { request: [], response: rules.all ?? [] },
    subgraphs: { media: { request: [], response: rules.media ?? [] } },
  }, ["media", "accounts"]);
  assert.ok(compiled);
  const collector = compiled.collect();
  for (const [subgraph, headers] of answers) collector.add(subgraph, new Headers(headers));
  const out = new Headers();
  collector.apply(out);
  return out;
}

Deno.test("issue 43: no response rule, no collector: nothing is read", () => {
  assert.equal(compileResponseHeaderRules({ all: { request: [] }, subgraphs: {} }, ["a"]), null);
});

Deno.test("issue 43: named, renamed and defaulted headers; a subgraph's own rules apply to its answers only", () => {
  const out = collect({
    all: [{ op: "propagate", named: "X-Trace" }],
    media: [
      { op: "propagate", named: "X-Served-By", rename: "X-Media-Host" },
      { op: "propagate", named: "X-Region", default: "unknown" },
      { op: "set", name: "X-Via", value: "gw" },
    ],
  }, [
    ["accounts", { "x-trace": "t1", "x-served-by": "acc-1", "x-region": "eu" }],
    ["media", { "x-trace": "t2", "x-served-by": "media-3" }],
  ]);
  assert.deepEqual(Object.fromEntries(out), {
    "x-trace": "t1", // the first answer's value
    "x-media-host": "media-3", // accounts' x-served-by is not media's rule
    "x-region": "unknown", // media answered without it
    "x-via": "gw",
  });
});

Deno.test("issue 43: a default gives way to any answer's value", () => {
  const out = collect({ all: [{ op: "propagate", named: "X-Region", default: "unknown" }] }, [
    ["media", {}],
    ["accounts", { "x-region": "eu" }],
  ]);
  assert.equal(out.get("x-region"), "eu");
});

Deno.test("issue 43: Set-Cookie values are all appended; a pattern passes neither cookies nor the router's own headers", () => {
  const cookies = new Headers();
  cookies.append("set-cookie", "a=1");
  cookies.append("set-cookie", "b=2");
  const named = collect({ all: [{ op: "propagate", named: "Set-Cookie" }] }, [
    ["media", cookies],
    ["accounts", [["set-cookie", "c=3"]]],
  ]);
  assert.deepEqual(named.getSetCookie(), ["a=1", "b=2", "c=3"]);
  const pattern = collect({ all: [{ op: "propagate", matching: ".*" }] }, [
    ["media", [
      ["set-cookie", "a=1"],
      ["content-length", "999"],
      ["access-control-allow-origin", "*"],
      ["x-request-id", "theirs"],
      ["x-ok", "1"],
    ]],
  ]);
  assert.deepEqual([...pattern], [["x-ok", "1"]]);
});

Deno.test("issue 43: Cache-Control merges to the most restrictive", () => {
  const cases: [string[], string | null][] = [
    [["public, max-age=60", "private, max-age=30"], "private, max-age=30"],
    [["public, max-age=60", "public, max-age=10, s-maxage=5"], "public, max-age=10, s-maxage=5"],
    [["max-age=60", "no-cache"], "no-cache, max-age=60"],
    [["public, max-age=60", "no-store"], "no-store"],
    [["public", "max-age=5"], "max-age=5"], // not all public: no `public`
    [["must-revalidate, max-age=0", "max-age=60"], "must-revalidate, max-age=0"],
    [["private, s-maxage=30"], "private"], // s-maxage means nothing to a private response
    [["max-age=abc"], null],
    [[], null],
  ];
  for (const [values, merged] of cases) {
    assert.equal(mergeCacheControl(values), merged, values.join(" | "));
  }
});
