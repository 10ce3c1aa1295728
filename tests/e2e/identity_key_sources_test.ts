/**
 * Issue 18: JWKS key sources under a hostile or failing identity provider
 * (the repo's JWKS stub in chaos mode, a real router): fetch counts stay
 * bounded by `refresh_unknown_kid.burst`, the last good keys keep verifying,
 * anonymous requests never wait on the provider, "no keys yet" is 503 with
 * Retry-After, and readiness waits for the first load.
 */
import assert from "node:assert/strict";
import { type McpFixture, withMcpFixture } from "./_mcp_fixture.ts";

const BUCKET = {
  refresh_unknown_kid: { enabled: true, interval: "1m", burst: 2, max_wait: "0s" },
};

function hello(fixture: McpFixture, token?: string): Promise<Response> {
  return fetch(`${fixture.router.url}/graphql`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ query: "{ hello }" }),
  });
}

async function status(response: Promise<Response>): Promise<number> {
  const r = await response;
  await r.body?.cancel();
  return r.status;
}

/** Sends `count` requests, `parallel` at a time; returns the status counts. */
async function flood(
  count: number,
  send: () => Promise<number>,
  parallel = 50,
): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (let sent = 0; sent < count; sent += parallel) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(parallel, count - sent) }, send),
    );
    for (const s of batch) counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  return counts;
}

Deno.test("issue 18: 1000 tokens with unknown kids cause at most `burst` JWKS fetches", async () => {
  await withMcpFixture({ authentication: true, source: BUCKET }, async (f) => {
    const before = f.jwks.fetches;
    let n = 0;
    const counts = await flood(
      1000,
      async () => status(hello(f, await f.token("", { header: { kid: `unknown-${n++}` } }))),
    );
    assert.deepEqual([...counts], [[401, 1000]]);
    const extra = f.jwks.fetches - before;
    console.log(`1000 unknown-kid tokens: ${extra} JWKS fetches (burst 2)`);
    assert.ok(extra <= 2, `${extra} JWKS fetches for 1000 unknown-kid tokens (burst 2)`);
  });
});

Deno.test("issue 18: during an outage (500) fetches stay bounded by the burst and the last good keys still verify", async () => {
  await withMcpFixture({ authentication: true, source: BUCKET }, async (f) => {
    f.jwks.mode("500");
    const before = f.jwks.fetches;
    const unknown = await flood(
      300,
      async () => status(hello(f, await f.token("", { header: { kid: "rotated" } }))),
    );
    assert.deepEqual([...unknown], [[401, 300]]);
    console.log(`300 unknown-kid tokens during a 500 outage: ${f.jwks.fetches - before} fetches`);
    assert.ok(f.jwks.fetches - before <= 2, `${f.jwks.fetches - before} fetches under outage`);
    const good = await flood(50, async () => status(hello(f, await f.token(""))));
    assert.deepEqual([...good], [[200, 50]], "the last good keys still verify");
  });
});

Deno.test("issue 18: invalid JSON, a 10 MB body and a hang fail the fetch; the last good keys keep verifying", async () => {
  const source = {
    refresh_unknown_kid: { enabled: true, interval: "1m", burst: 10, max_wait: "0s" },
    fetch_timeout: "300ms",
  };
  await withMcpFixture({ authentication: true, source }, async (f) => {
    for (const chaos of ["invalid_json", { bodyBytes: 10_000_000 }, "hang", "500"] as const) {
      f.jwks.mode(chaos);
      const before = f.jwks.fetches;
      const token = await f.token("", { header: { kid: `x-${JSON.stringify(chaos)}` } });
      assert.equal(await status(hello(f, token)), 401, JSON.stringify(chaos));
      assert.equal(f.jwks.fetches, before + 1, `the ${JSON.stringify(chaos)} fetch happened`);
      assert.equal(await status(hello(f, await f.token(""))), 200, JSON.stringify(chaos));
    }
    f.jwks.release();
  });
});

Deno.test("issue 18: a key set without kids loads; tokens naming a kid then find no key, tokens without kid verify", async () => {
  await withMcpFixture({ authentication: true, jwksChaos: "no_kid" }, async (f) => {
    assert.equal(await status(hello(f, await f.token("", { header: { kid: undefined } }))), 200);
    assert.equal(await status(hello(f, await f.token(""))), 401);
  });
});

Deno.test("issue 18: a 100 MB JWKS body is cut off at max_response_bytes; the router keeps serving", async () => {
  await withMcpFixture({ authentication: true }, async (f) => {
    f.jwks.mode({ bodyBytes: 100_000_000 });
    const refused = await status(hello(f, await f.token("", { header: { kid: "big" } })));
    assert.equal(refused, 401);
    console.log(`100 MB JWKS body: ${f.jwks.bodyBytesSent} bytes streamed before the cut`);
    assert.ok(
      f.jwks.bodyBytesSent < 20_000_000,
      `${f.jwks.bodyBytesSent} bytes streamed before the router stopped reading`,
    );
    assert.equal(await status(hello(f, await f.token(""))), 200);
    assert.equal(await status(fetch(`${f.router.url}/health/ready`)), 200);
  });
});

Deno.test("issue 18: while the provider hangs, an anonymous request completes at once (token requests wait outside the admission slot)", async () => {
  await withMcpFixture(
    { authentication: true, source: BUCKET, engine: { max_concurrent_operations: 1 } },
    async (f) => {
      f.jwks.mode("hang");
      const tokens = await Promise.all(
        [1, 2, 3, 4].map((i) => f.token("", { header: { kid: `new-${i}` } })),
      );
      const waiting = tokens.map((t) => status(hello(f, t)));
      // Wait until the router's unknown-kid fetch reached the stub and hangs there.
      for (let i = 0; i < 500 && f.jwks.hanging === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(f.jwks.hanging, 1, "one shared fetch hangs");
      const anonymous = await hello(f);
      assert.deepEqual(await anonymous.json(), { data: { hello: "Hello!" } });
      assert.equal(f.jwks.hanging, 1, "the anonymous answer came while the JWKS fetch still hangs");
      f.jwks.release();
      assert.deepEqual(await Promise.all(waiting), [401, 401, 401, 401]);
    },
  );
});

Deno.test("issue 18: before the first load, tokens get 503 + Retry-After (not invalid_token), readiness is 503, anonymous requests run", async () => {
  await withMcpFixture(
    { authentication: true, skipReady: true, jwksChaos: "500" },
    async (f) => {
      const ready = await fetch(`${f.router.url}/health/ready`);
      await ready.body?.cancel();
      assert.equal(ready.status, 503);
      const token = await f.token("");
      const early = await hello(f, token);
      await early.body?.cancel();
      assert.equal(early.status, 503);
      assert.ok(Number(early.headers.get("retry-after")) >= 1);
      assert.equal(early.headers.get("www-authenticate"), null);
      assert.equal(await status(hello(f)), 200);
      f.jwks.mode("ok");
      // The background loop retries with backoff (1 s, 2 s, …): ready within a few seconds.
      let readyNow = false;
      for (let i = 0; i < 100 && !readyNow; i++) {
        readyNow = (await status(fetch(`${f.router.url}/health/ready`))) === 200;
        if (!readyNow) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(readyNow, "ready once the provider answers");
      assert.equal(await status(hello(f, token)), 200);
    },
  );
});

Deno.test("issue 18: readiness_requires_keys: false keeps /health/ready at 200 while keys are missing", async () => {
  await withMcpFixture(
    {
      authentication: true,
      skipReady: true,
      jwksChaos: "500",
      jwt: { readiness_requires_keys: false },
    },
    async (f) => {
      assert.equal(await status(fetch(`${f.router.url}/health/ready`)), 200);
    },
  );
});
