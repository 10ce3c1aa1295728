/**
 * The JWKS stub of the e2e tests: serves a key set on 127.0.0.1 and, in a
 * chaos mode, fails the way identity providers do (issue 18): 500, a hang,
 * invalid JSON, a huge body (streamed, never held in memory), keys without
 * `kid`. Counts fetches and hanging requests.
 */
import type { JWK } from "jose";

/** How the stub answers. */
export type JwksChaos =
  | "ok"
  | "500"
  | "hang"
  | "invalid_json"
  | "no_kid"
  | { readonly bodyBytes: number };

/** A running stub. */
export interface JwksStub {
  readonly url: string;
  /** Requests answered so far (all modes). */
  readonly fetches: number;
  /** Requests hanging right now. */
  readonly hanging: number;
  /** Bytes of huge bodies sent so far. */
  readonly bodyBytesSent: number;
  /** Switches the chaos mode (hanging requests stay until `release`). */
  mode(chaos: JwksChaos): void;
  /** Ends every hanging request (with a 500). */
  release(): void;
  close(): Promise<void>;
}

/**
 * Starts the stub.
 * @param keys The key set served in the `ok` mode.
 * @returns The stub.
 */
export function startJwksStub(keys: readonly JWK[]): JwksStub {
  let chaos: JwksChaos = "ok";
  let fetches = 0;
  let bodyBytesSent = 0;
  const waiting = new Set<() => void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    fetches++;
    const mode = chaos;
    if (mode === "ok") return Response.json({ keys });
    if (mode === "500") return new Response("down", { status: 500 });
    if (mode === "invalid_json") return new Response('{"keys": [', { status: 200 });
    if (mode === "no_kid") return Response.json({ keys: keys.map(({ kid: _kid, ...k }) => k) });
    if (mode === "hang") {
      return new Promise<Response>((resolve) => {
        const done = () => {
          waiting.delete(done);
          resolve(new Response("released", { status: 500 }));
        };
        waiting.add(done);
        request.signal.addEventListener("abort", done, { once: true });
      });
    }
    // A huge body, streamed in 64 KiB chunks without Content-Length.
    const chunk = new Uint8Array(65536).fill(0x20);
    let left = mode.bodyBytes;
    const prefix = new TextEncoder().encode('{"keys":[],"pad":"');
    let first = true;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (first) {
          first = false;
          controller.enqueue(prefix);
          return;
        }
        if (left <= 0) {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
          return;
        }
        const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= part.length;
        bodyBytesSent += part.length;
        controller.enqueue(part);
      },
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  });
  const release = () => {
    for (const done of [...waiting]) done();
  };
  return {
    url: `http://127.0.0.1:${server.addr.port}/jwks.json`,
    get fetches() {
      return fetches;
    },
    get hanging() {
      return waiting.size;
    },
    get bodyBytesSent() {
      return bodyBytesSent;
    },
    mode(next) {
      chaos = next;
    },
    release,
    async close() {
      release();
      await server.shutdown();
    },
  };
}
