/**
 * A registry's redirects (`supergraph_source`, kinds `url` and `hive_cdn`):
 * followed to the schema, but the configured headers and the Hive CDN key
 * go only to the configured URL's origin — a CDN redirecting to object
 * storage on another host never receives them. Uplink's POST (its key in the
 * body) follows no redirect. Too many redirects fail the poll. Real local
 * registries (`Deno.serve`; another port is another origin).
 */
import assert from "node:assert/strict";
import { firstPoll, pollFailure } from "./_supergraph_poll.ts";

const SDL = "type Query { hello: String }";

/** A server answering by `answer`, recording each request's headers and path. */
function server(answer: (request: Request) => Response | Promise<Response>) {
  const seen: { path: string; headers: Headers }[] = [];
  const served = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    seen.push({ path: new URL(request.url).pathname, headers: request.headers });
    return answer(request);
  });
  return { base: `http://127.0.0.1:${served.addr.port}`, seen, close: () => served.shutdown() };
}

Deno.test("supergraph_source hive_cdn: a same-origin hop keeps the key, another host never gets it", async () => {
  const bucket = server(() => new Response(SDL, { headers: { etag: '"b1"' } }));
  const cdn = server((request) => {
    const path = new URL(request.url).pathname;
    if (request.headers.get("x-hive-cdn-key") !== "cdn-secret") {
      return new Response("forbidden", { status: 403 });
    }
    if (path === "/artifacts/v1/target/supergraph") {
      return new Response(null, { status: 302, headers: { location: "/moved/supergraph" } });
    }
    return new Response(null, {
      status: 307,
      headers: { location: `${bucket.base}/signed/supergraph?sig=abc` },
    });
  });
  try {
    const { sdl } = await firstPoll({
      kind: "hive_cdn",
      endpoint: `${cdn.base}/artifacts/v1/target`,
      key: "cdn-secret",
    });
    assert.equal(sdl, SDL);
    assert.deepEqual(cdn.seen.map((r) => r.path), [
      "/artifacts/v1/target/supergraph",
      "/moved/supergraph",
    ]);
    assert.equal(cdn.seen[1]!.headers.get("x-hive-cdn-key"), "cdn-secret");
    assert.equal(bucket.seen.length, 1);
    assert.equal(bucket.seen[0]!.headers.get("x-hive-cdn-key"), null);
  } finally {
    await cdn.close();
    await bucket.close();
  }
});

Deno.test("supergraph_source url: configured headers (a token) stay with the configured origin", async () => {
  const other = server(() => new Response(SDL));
  const registry = server(() =>
    new Response(null, { status: 301, headers: { location: `${other.base}/schema` } })
  );
  try {
    const { sdl } = await firstPoll({
      kind: "url",
      url: `${registry.base}/supergraph.graphql`,
      headers: ["Authorization: Bearer registry-token", "X-Team: a"],
    });
    assert.equal(sdl, SDL);
    assert.equal(registry.seen[0]!.headers.get("authorization"), "Bearer registry-token");
    assert.equal(other.seen[0]!.headers.get("authorization"), null);
    assert.equal(other.seen[0]!.headers.get("x-team"), null);
  } finally {
    await registry.close();
    await other.close();
  }
});

Deno.test("supergraph_source: a redirect loop fails the poll after 5 hops, naming it", async () => {
  const looping = server((request) =>
    new Response(null, { status: 302, headers: { location: new URL(request.url).pathname } })
  );
  try {
    const { sdl, lines } = await firstPoll({ kind: "url", url: `${looping.base}/s` });
    assert.equal(sdl, null);
    assert.match(pollFailure(lines)!.reason, /more than 5 redirects/);
    assert.equal(looping.seen.length, 6);
  } finally {
    await looping.close();
  }
});

Deno.test("supergraph_source apollo_uplink: a redirect is a failed endpoint, the key is not resent", async () => {
  const elsewhere = server(() => Response.json({ data: null }));
  const uplink = server(() =>
    new Response(null, { status: 307, headers: { location: `${elsewhere.base}/` } })
  );
  try {
    const { sdl, lines } = await firstPoll({
      kind: "apollo_uplink",
      endpoints: [`${uplink.base}/`],
      key: "service:uplink-secret",
      graph_ref: "g@prod",
    });
    assert.equal(sdl, null);
    assert.match(pollFailure(lines)!.reason, /HTTP 307/);
    assert.equal(elsewhere.seen.length, 0);
  } finally {
    await uplink.close();
    await elsewhere.close();
  }
});
