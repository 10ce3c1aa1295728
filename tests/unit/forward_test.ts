/**
 * Issue 15, the supervisor's answer path (`lib/listen/forward.ts`): requests go
 * to serving isolates over real unix sockets; whatever happens to the isolate,
 * the client gets an answer in its facet's shape.
 */
import assert from "node:assert/strict";
import { type FacetPaths, type ForwarderOptions, type Upstream } from "../../lib/listen/forward.ts";
import { createForwarder, unixUpstream } from "../../lib/listen/forward.ts";

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
}

interface Isolate {
  readonly upstream: Upstream;
  /** Ends it as the supervisor does (its waiting requests get 503). */
  end(): void;
  /** What the isolate received (read while the request was open). */
  readonly seen: Seen[];
  /** Requests whose signal aborted while the isolate held them. */
  aborted: number;
  close(): Promise<void>;
}

/** A stand-in serving isolate: a real `Deno.serve` on a unix socket, its handler given. */
async function isolate(
  index: number,
  handle: (request: Request) => Response | Promise<Response>,
): Promise<Isolate> {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/s.sock`;
  const seen: Seen[] = [];
  const state = { aborted: 0 };
  const server = Deno.serve({ path, onListen() {} }, (request) => {
    seen.push({ method: request.method, url: request.url, headers: new Headers(request.headers) });
    request.signal.addEventListener("abort", () => state.aborted++);
    return handle(request);
  });
  const listener = unixUpstream(path, { index });
  return {
    upstream: listener.upstream,
    end: () => listener.end(),
    seen,
    get aborted() {
      return state.aborted;
    },
    async close() {
      listener.end();
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const NO_FACETS: FacetPaths = { mcp: null, connectPrefix: null };

function forwarder(upstreams: Upstream[], options: Partial<ForwarderOptions> = {}) {
  return createForwarder({
    upstreams: () => upstreams,
    complete: () => true,
    draining: () => false,
    stop: new AbortController().signal,
    timeoutMs: 5_000,
    paths: () => NO_FACETS,
    ...options,
  });
}

/** A handler that answers only when `release` is called (or its request aborts). */
function held(): { handle: (request: Request) => Promise<Response>; release: () => void } {
  const gate = Promise.withResolvers<void>();
  return {
    handle: async (request) => {
      await Promise.race([
        gate.promise,
        new Promise((resolve) => request.signal.addEventListener("abort", resolve)),
      ]);
      return new Response("late");
    },
    release: () => gate.resolve(),
  };
}

Deno.test("forward: the isolate sees the client's method, URL, headers and body, but no hop-by-hop headers and no compression", async () => {
  const one = await isolate(0, async (request) =>
    new Response(await request.text(), {
      status: 201,
      headers: { "x-answer": "yes", "content-type": "application/json", "keep-alive": "timeout=5" },
    }));
  try {
    const handle = forwarder([one.upstream]);
    const response = await handle(
      new Request("http://public.example:4000/graphql?x=1", {
        method: "POST",
        headers: {
          authorization: "Bearer t",
          "content-type": "application/json",
          connection: "keep-alive, x-secret",
          "keep-alive": "timeout=5",
          "accept-encoding": "gzip",
        },
        body: '{"query":"{a}"}',
      }),
    );
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("x-answer"), "yes");
    assert.equal(response.headers.get("keep-alive"), null, "hop-by-hop answer header dropped");
    assert.equal(await response.text(), '{"query":"{a}"}');
    const seen = one.seen[0]!;
    assert.equal(seen.method, "POST");
    assert.equal(seen.url, "http://public.example:4000/graphql?x=1", "the client's URL and host");
    assert.equal(seen.headers.get("authorization"), "Bearer t");
    assert.equal(seen.headers.get("keep-alive"), null);
    assert.equal(seen.headers.get("accept-encoding"), "identity", "the listener compresses");
  } finally {
    await one.close();
  }
});

Deno.test("forward: a request held by an isolate that ends is answered 503 ISOLATE_ENDED at once, in its facet's shape", async () => {
  const { handle: slow } = held();
  const one = await isolate(3, slow);
  try {
    const paths: FacetPaths = { mcp: "/mcp", connectPrefix: "/svc.v1.Service/" };
    const handle = forwarder([one.upstream], { paths: () => paths });
    const requests = [
      handle(new Request("http://r/graphql?query=%7Ba%7D")),
      handle(new Request("http://r/svc.v1.Service/Get", { method: "POST", body: "{}" })),
      handle(new Request("http://r/mcp", { method: "POST", body: "{}" })),
    ];
    while (one.seen.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(one.upstream.waiting, 3);
    one.end();
    const [graphql, connect, mcp] = await Promise.all(requests);
    for (const response of [graphql!, connect!, mcp!]) {
      assert.equal(response.status, 503);
      assert.equal(response.headers.get("retry-after"), "1");
    }
    const body = await graphql!.json();
    assert.equal(body.errors[0].extensions.code, "ISOLATE_ENDED");
    assert.match(body.errors[0].message, /ended before it answered/);
    assert.equal((await connect!.json()).code, "unavailable");
    assert.equal((await mcp!.json()).error.code, -32000);
    assert.equal(one.upstream.waiting, 0);
    // An ended isolate is never picked again.
    const after = await handle(new Request("http://r/graphql"));
    assert.equal((await after.json()).errors[0].extensions.code, "ISOLATE_ENDED");
    assert.equal(one.seen.length, 3);
  } finally {
    await one.close();
  }
});

Deno.test("forward: an isolate whose socket is gone is answered 503 ISOLATE_ENDED, not a 500", async () => {
  const one = await isolate(0, () => new Response("ok"));
  await one.close();
  const handle = forwarder([one.upstream]);
  const response = await handle(new Request("http://r/graphql"));
  assert.equal(response.status, 503);
  assert.equal((await response.json()).errors[0].extensions.code, "ISOLATE_ENDED");
});

Deno.test("forward: past the grace (stop) a waiting request gets 503 SHUTTING_DOWN; past the deadline 504", async () => {
  const { handle: slow } = held();
  const one = await isolate(0, slow);
  try {
    const stop = new AbortController();
    const handle = forwarder([one.upstream], { stop: stop.signal, timeoutMs: 200 });
    const timedOut = await handle(new Request("http://r/graphql"));
    assert.equal(timedOut.status, 504);
    assert.equal((await timedOut.json()).errors[0].extensions.code, "GATEWAY_TIMEOUT");
    const patient = forwarder([one.upstream], { stop: stop.signal });
    const waiting = patient(new Request("http://r/graphql"));
    while (one.seen.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    stop.abort();
    const stopped = await waiting;
    assert.equal(stopped.status, 503);
    assert.equal((await stopped.json()).errors[0].extensions.code, "SHUTTING_DOWN");
    // The isolate's request was cancelled with it.
    while (one.aborted < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  } finally {
    await one.close();
  }
});

Deno.test("forward: a client that goes away cancels the isolate's request", async () => {
  const { handle: slow } = held();
  const one = await isolate(0, slow);
  try {
    const handle = forwarder([one.upstream]);
    const client = new AbortController();
    const answer = handle(new Request("http://r/graphql", { signal: client.signal }));
    while (one.seen.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    client.abort();
    await answer;
    while (one.aborted < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(one.upstream.waiting, 0);
  } finally {
    await one.close();
  }
});

Deno.test("forward: the least busy isolate gets the next request", async () => {
  const { handle: slow, release } = held();
  const busy = await isolate(0, slow);
  const idle = await isolate(1, () => new Response("idle"));
  try {
    const handle = forwarder([busy.upstream, idle.upstream]);
    // Alternates while both are idle ...
    const pending = handle(new Request("http://r/a"));
    while (busy.seen.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
    // ... then every request goes around the busy one.
    for (let i = 0; i < 4; i++) {
      assert.equal(await (await handle(new Request("http://r/b"))).text(), "idle");
    }
    assert.equal(busy.seen.length, 1);
    release();
    assert.equal(await (await pending).text(), "late");
  } finally {
    await busy.close();
    await idle.close();
  }
});

Deno.test("forward: readiness is 503 while an isolate is missing or the router drains; draining answers close the connection", async () => {
  const one = await isolate(
    0,
    (request) =>
      new URL(request.url).pathname === "/health/ready"
        ? Response.json({ status: "ready" })
        : new Response("ok"),
  );
  try {
    let complete = false;
    let draining = false;
    const handle = forwarder([one.upstream], {
      complete: () => complete,
      draining: () => draining,
    });
    const restarting = await handle(new Request("http://r/health/ready"));
    assert.equal(restarting.status, 503);
    assert.equal((await restarting.json()).status, "restarting");
    complete = true;
    assert.equal((await handle(new Request("http://r/health/ready"))).status, 200);
    assert.equal(one.seen.length, 1, "a complete router asks an isolate (its saturation)");
    draining = true;
    const drained = await handle(new Request("http://r/health/ready"));
    assert.equal(drained.status, 503);
    assert.equal((await drained.json()).status, "draining");
    const last = await handle(new Request("http://r/graphql"));
    assert.equal(await last.text(), "ok");
    assert.equal(last.headers.get("connection"), "close");
    // Liveness is the supervisor's own.
    assert.equal((await handle(new Request("http://r/health/live"))).status, 200);
    assert.equal(one.seen.length, 2);
  } finally {
    await one.close();
  }
});
