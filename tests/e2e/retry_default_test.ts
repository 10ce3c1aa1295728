/**
 * Issue 34 over real sockets, with the default configuration: a query whose
 * subgraph connection is reset (or closed) before the answer is retried and
 * answered in full; a mutation never is; and the retry budget holds the
 * requests a failing subgraph sees to about 20 % more than the fetches.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { oneSubgraphWorkspace, postQuery } from "./_workspace.ts";

/** What the raw subgraph does with the n-th request it reads (1-based). */
type Behaviour = "reset" | "close" | "answer";

/**
 * A subgraph on a raw TCP listener: each connection carries one request
 * (answers say `connection: close`), so every attempt is a new connection.
 * "reset" closes without reading the request (unread bytes: the kernel sends
 * RST); "close" reads it and closes (FIN) before any byte of an answer.
 */
function rawSubgraph(behave: (n: number) => Behaviour) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let requests = 0;
  const serve = async () => {
    for await (const conn of listener) {
      requests++;
      const n = requests;
      (async () => {
        try {
          const what = behave(n);
          if (what === "reset") {
            // Let the request arrive first, unread.
            await new Promise((resolve) => setTimeout(resolve, 20));
            conn.close();
            return;
          }
          const buffer = new Uint8Array(65536);
          let text = "";
          while (!/\r\n\r\n/.test(text) || bodyMissing(text)) {
            const read = await conn.read(buffer);
            if (read === null) break;
            text += new TextDecoder().decode(buffer.subarray(0, read));
          }
          if (what === "close") {
            conn.close();
            return;
          }
          const mutation = text.includes("bump");
          const body = JSON.stringify({ data: mutation ? { bump: 1 } : { hello: "world" } });
          await conn.write(new TextEncoder().encode(
            `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
          ));
          conn.close();
        } catch {
          // The router gave up on this connection.
        }
      })();
    }
  };
  const done = serve().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/graphql`,
    requests: () => requests,
    close: async () => {
      listener.close();
      await done;
    },
  };
}

function bodyMissing(text: string): boolean {
  const [head, body = ""] = text.split("\r\n\r\n");
  const length = /content-length:\s*(\d+)/i.exec(head ?? "");
  return length !== null && new TextEncoder().encode(body).length < Number(length[1]);
}

/** A router on one subgraph; `close` also ends the subgraph (`closeSubgraph`). */
async function routerFor(
  url: string,
  options: { readonly extra?: string; readonly closeSubgraph: () => Promise<void> },
): Promise<{ router: RunningRouter; close: () => Promise<void> }> {
  const dir = await oneSubgraphWorkspace(url, {
    name: "counter",
    sdl: "type Query { hello: String }\ntype Mutation { bump: Int }",
    extra: `log_level: error\n${options.extra ?? ""}`,
  });
  const router = await startRouter({ configPath: join(dir, "config.yaml") });
  return {
    router,
    close: async () => {
      await router.shutdown();
      await options.closeSubgraph();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const post = postQuery;

Deno.test("issue 34: by default a query whose subgraph connection is reset, or closed before the answer, is retried once and answered in full", async () => {
  const subgraph = rawSubgraph((n) => n === 1 ? "reset" : n === 3 ? "close" : "answer");
  const { router, close } = await routerFor(subgraph.url, { closeSubgraph: subgraph.close });
  try {
    assert.deepEqual(await post(router.url, "{ hello }"), { data: { hello: "world" } });
    assert.equal(subgraph.requests(), 2, "one retry after the reset");
    assert.deepEqual(await post(router.url, "{ hello }"), { data: { hello: "world" } });
    assert.equal(subgraph.requests(), 4, "one retry after the close");
  } finally {
    await close();
  }
});

Deno.test("issue 34: a mutation is never retried, by default either", async () => {
  const subgraph = rawSubgraph((n) => n === 1 ? "close" : "answer");
  const { router, close } = await routerFor(subgraph.url, { closeSubgraph: subgraph.close });
  try {
    const result = await post(router.url, "mutation { bump }");
    assert.equal(result.data.bump, null);
    assert.equal(
      result.errors?.[0]?.extensions?.code,
      "SUBGRAPH_UNREACHABLE",
      JSON.stringify(result),
    );
    assert.equal(
      result.errors[0].message,
      'The subgraph "counter" closed the connection before answering',
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(subgraph.requests(), 1, "the mutation was sent once");
  } finally {
    await close();
  }
});

Deno.test("issue 34: the retry budget caps the retries a failing subgraph sees (20 % of the fetches plus min_per_sec × ttl)", async () => {
  let seen = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => {
    seen++;
    return new Response("down", { status: 503 });
  });
  // Without the budget, 50 queries at max_attempts 5 would send 300 requests.
  const { router, close } = await routerFor(`http://127.0.0.1:${server.addr.port}/graphql`, {
    extra:
      "traffic_shaping:\n  all: { retry: { max_attempts: 5, interval: 1ms, max_duration: 2ms, min_per_sec: 1, ttl: 10s } }\n",
    closeSubgraph: () => server.shutdown(),
  });
  try {
    const queries = 50;
    for (let i = 0; i < queries; i++) {
      const result = await post(router.url, "{ hello }");
      assert.equal(result.data.hello, null);
    }
    // Fetches 50, deposits 50 × 0.2 = 10 retries, reserve 1/s × 10 s = 10 retries.
    assert.ok(seen <= queries + 10 + 10, `the subgraph saw ${seen} requests`);
    assert.ok(seen > queries, `some retries went (${seen} requests)`);
  } finally {
    await close();
  }
});
