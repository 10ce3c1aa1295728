/** Issue 18: the identity keys of the configuration and their defaults. */
import assert from "node:assert/strict";
import { parseConfig } from "../../lib/config/mod.ts";

Deno.test("issue 18: jwks[].issuer takes one string or a list; key-source safety has defaults", () => {
  const config = parseConfig({
    authentication: {
      jwt: {
        jwks: [
          { url: "http://127.0.0.1:1/jwks.json", issuer: "https://idp.test" },
          { url: "http://127.0.0.1:1/jwks.json", issuer: ["a", "b"], required_typ: "at+jwt" },
        ],
      },
    },
  }, { env: {}, baseDir: "." });
  const [one, two] = config.authentication.jwt.jwks;
  assert.deepEqual(one?.issuer, ["https://idp.test"]);
  assert.deepEqual(two?.issuer, ["a", "b"]);
  assert.equal(one?.required_typ, "");
  assert.equal(two?.required_typ, "at+jwt");
  assert.equal(one?.max_response_bytes, 1_000_000);
  assert.deepEqual(one?.refresh_unknown_kid, {
    enabled: true,
    interval_ms: 30_000,
    burst: 2,
    max_wait_ms: 5_000,
  });
  assert.equal(config.authentication.jwt.clock_skew_ms, 60_000);
  assert.equal(config.authentication.jwt.readiness_requires_keys, true);
});

Deno.test("issue 18: clock_skew and refresh_unknown_kid durations take units", () => {
  const config = parseConfig({
    authentication: {
      jwt: {
        clock_skew: "5s",
        jwks: [{
          url: "http://127.0.0.1:1/jwks.json",
          refresh_unknown_kid: { interval: "1m", burst: 3, max_wait: "2s" },
        }],
      },
    },
  }, { env: {}, baseDir: "." });
  assert.equal(config.authentication.jwt.clock_skew_ms, 5_000);
  const kid = config.authentication.jwt.jwks[0]?.refresh_unknown_kid;
  assert.equal(kid?.interval_ms, 60_000);
  assert.equal(kid?.max_wait_ms, 2_000);
  assert.equal(kid?.burst, 3);
});

Deno.test("a key source that cannot be read stops the state build naming its key, instead of a router answering every request 500", async () => {
  const { edgeState } = await import("./_edge_fixture.ts");
  for (const source of [{ file: "/nonexistent/jwks.json" }, { file: import.meta.filename! }]) {
    // Before: the state was built, logged "Token key sources failed", and every /graphql
    // request (anonymous ones too) was answered 500 INTERNAL until the next reload.
    await assert.rejects(
      () => edgeState({ authentication: { jwt: { jwks: [source] } } }),
      (error: { code?: string; message?: string }) => {
        assert.equal(error.code, "CONFIG_INVALID");
        assert.match(error.message ?? "", /authentication\.jwt\.jwks\[0\]/);
        return true;
      },
    );
  }
});
