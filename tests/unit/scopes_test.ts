import assert from "node:assert/strict";
import {
  bestScopeGroup,
  challengeScopes,
  combineScopes,
  foldScopes,
  formatBearerChallenge,
  isValidScope,
  normalizeScopes,
  parseScopeClaim,
  satisfiesScopes,
} from "../../lib/auth/mod.ts";

const META = "http://localhost:3002/.well-known/oauth-protected-resource/mcp";

Deno.test("spec §2.5: OR-of-AND requirements combine by Cartesian product, earlier groups outer", () => {
  assert.deepEqual(combineScopes([["a"], ["b"]], [["c"], ["d"]]), [
    ["a", "c"],
    ["a", "d"],
    ["b", "c"],
    ["b", "d"],
  ]);
});

Deno.test("DESIGN §4: merged groups keep first-seen scope order without duplicates", () => {
  assert.deepEqual(combineScopes([["b", "a"]], [["a", "c"]]), [["b", "a", "c"]]);
});

Deno.test("DESIGN §4: duplicate and superset groups are dropped, survivors keep their order", () => {
  assert.deepEqual(normalizeScopes([["x", "y"], ["z"], ["y", "x"], ["x"], ["z", "w"]]), [["z"], [
    "x",
  ]]);
  assert.deepEqual(foldScopes([[["a"], ["b"]], [["a"]]]), [["a"]]);
});

Deno.test("DESIGN §4: beyond max_scope_combinations the fold fails (null)", () => {
  const two = [["a"], ["b"]];
  assert.equal(foldScopes([two, two, two], { maxCombinations: 7 }), null);
  assert.notEqual(foldScopes([two, two, two], { maxCombinations: 8 }), null);
});

Deno.test("spec §2.5: an empty requirement is neutral and always satisfied", () => {
  assert.deepEqual(foldScopes([[], [["a"]], []]), [["a"]]);
  assert.equal(satisfiesScopes([], new Set()), true);
});

Deno.test("spec §5.3 rule 7: any one satisfied AND-group suffices", () => {
  const requirement = [["a", "b"], ["c"]];
  assert.equal(satisfiesScopes(requirement, new Set(["c"])), true);
  assert.equal(satisfiesScopes(requirement, new Set(["a", "b"])), true);
  assert.equal(satisfiesScopes(requirement, new Set(["a", "c2"])), false);
});

Deno.test("spec §7.2 example: (A AND B AND C) OR (D) with A B chooses the first group whole", () => {
  assert.deepEqual(bestScopeGroup([["A", "B", "C"], ["D"]], new Set(["A", "B"])), ["A", "B", "C"]);
});

Deno.test("spec §7.2: fewest missing scopes wins; ties go to the first group", () => {
  assert.deepEqual(bestScopeGroup([["A", "B", "C"], ["D"]], new Set(["A"])), ["D"]);
  assert.deepEqual(bestScopeGroup([["x", "y"], ["z", "w"]], new Set()), ["x", "y"]);
});

Deno.test("spec §7.3: include_token_scopes puts token scopes first, then missing required ones", () => {
  assert.deepEqual(challengeScopes(["A", "B", "C"], ["B", "A", "Z"], true), ["B", "A", "Z", "C"]);
  assert.deepEqual(challengeScopes(["A", "B", "C"], ["B", "A", "Z"], false), ["A", "B", "C"]);
});

Deno.test("spec §2.4: the scope claim is a space-separated string; an array yields no scopes", () => {
  assert.deepEqual(parseScopeClaim("a b  c"), ["a", "b", "c"]);
  assert.deepEqual(parseScopeClaim(["a", "b"]), []);
  assert.deepEqual(parseScopeClaim(42), []);
});

Deno.test("RFC 6749 §3.3: only SP separates scopes; a tab, line break or other whitespace joins no two scopes, the token holding it is dropped", () => {
  // "mcp:connect\tadmin" is one malformed scope-token, never the two scopes mcp:connect and admin.
  assert.deepEqual(parseScopeClaim("mcp:connect\tadmin"), []);
  assert.deepEqual(parseScopeClaim("read a\r\nadmin b"), ["read", "b"]);
  assert.deepEqual(parseScopeClaim("a\u00a0b c\u2003d e"), ["e"]);
  assert.deepEqual(parseScopeClaim(" a  b "), ["a", "b"]);
});

Deno.test("RFC 6749 §3.3: quotes, backslashes, spaces and line breaks are not scope characters", () => {
  for (const bad of ['a"b', "a\\b", "a b", "a\r\nb", ""]) {
    assert.equal(isValidScope(bad), false, bad);
  }
  for (const good of ["read:users", "a,b", "https://x/y", "!#[]~"]) {
    assert.equal(isValidScope(good), true, good);
  }
});

Deno.test("RFC 6750 §3: a challenge can never be broken by a scope: bad scopes are left out", () => {
  const value = formatBearerChallenge(['x", error="evil', "ok", "a\r\nb"], {
    error: "insufficient_scope",
    resourceMetadata: META,
  });
  assert.equal(value, `Bearer error="insufficient_scope", scope="ok", resource_metadata="${META}"`);
  assert.doesNotThrow(() => new Headers({ "www-authenticate": value }));
});

Deno.test("RFC 6750 §3.1: a request without a token gets no error attribute", () => {
  assert.equal(
    formatBearerChallenge(["mcp:init"], { resourceMetadata: META }),
    `Bearer scope="mcp:init", resource_metadata="${META}"`,
  );
});

Deno.test("DESIGN §3: the 403 challenge has error, scope, resource_metadata, error_description in that order", () => {
  assert.equal(
    formatBearerChallenge(["a", "b"], {
      error: "insufficient_scope",
      resourceMetadata: META,
      errorDescription: 'Needs "a" and b\n',
    }),
    `Bearer error="insufficient_scope", scope="a b", resource_metadata="${META}", error_description="Needs a and b"`,
  );
});

Deno.test("a scope claim is read in linear time: no scope is looked for in the list read so far (duplicates were found by a scan of the list: 50 000 scopes held the event loop ~2 s)", () => {
  // Counted, not timed: a scan per scope (includes, indexOf, find, some on the list) makes
  // the read quadratic; the read may search a Set, never an array.
  const n = 20_000;
  const claim = Array.from({ length: n }, (_, i) => `s${i}`).join(" ") + " s0 s1";
  const proto = Array.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const names = ["includes", "indexOf", "lastIndexOf", "find", "findIndex", "some"];
  const saved = names.map((name) => proto[name]!);
  let scans = 0;
  names.forEach((name, i) => {
    proto[name] = function (this: unknown, ...args: unknown[]) {
      scans++;
      return saved[i]!.apply(this, args);
    };
  });
  let scopes: readonly string[];
  try {
    scopes = parseScopeClaim(claim);
  } finally {
    names.forEach((name, i) => proto[name] = saved[i]!);
  }
  assert.equal(scopes.length, n);
  assert.equal(scopes[n - 1], `s${n - 1}`);
  assert.ok(scans < 100, `${scans} array searches for ${n} scopes`);
});
