/**
 * The subgraph HTTP client at the byte level: each subgraph is a raw TCP
 * server (`Deno.listen`, no `Deno.serve`) that reads the router's request
 * bytes and writes its answer by hand, misbehaving the ways an HTTP/1.1
 * server can (framing, headers, interim answers, slow and dead peers,
 * content codings, smuggled bytes). Every case states what the router must
 * answer: the status, `errors[0].extensions.code`, the data (never wrong
 * data) and a time bound (never a hang).
 *
 * The expectations do not depend on the client implementation; three cases
 * (10, 13, 19e) fail with Deno's `fetch` and pass with the router's HTTP/1.1
 * pool (`lib/engine/http1.ts`, the default `engine.subgraph_transport`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brotliCompressSync } from "node:zlib";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { createLogger } from "../../lib/log/mod.ts";
import { oneSubgraphWorkspace } from "./_workspace.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CRLF2 = encoder.encode("\r\n\r\n");

/** `engine.subgraph_request_timeout` of every case, ms. */
const TIMEOUT_MS = 1000;
/** How late past {@linkcode TIMEOUT_MS} a `DEADLINE_EXCEEDED` may come, ms. */
const LATE_MS = 700;
/** The bound of an answer that must not wait for the timeout, ms. */
const FAST_MS = 900;

// ---------------------------------------------------------------------------
// The raw subgraph

/** One request the raw subgraph read: head and `Content-Length` body. */
interface RawRequest {
  /** Request line and header lines, without the blank line. */
  readonly head: string;
  /** The body (as long as its `Content-Length`). */
  readonly body: string;
  /** Every byte of this request as read. */
  readonly bytes: Uint8Array;
  /** Which accepted connection it came on, from 1. */
  readonly connection: number;
  /** Which request on the server it is, from 1. */
  readonly index: number;
}

/** The connection a case's handler answers on. */
interface RawConn {
  /**
   * Writes every byte (a string as UTF-8).
   * @returns False when the peer is gone (the write failed).
   */
  write(data: string | Uint8Array): Promise<boolean>;
  /** Reads what is there (raw mode); null at the end or on an error. */
  read(max: number): Promise<Uint8Array | null>;
  /** Closes the connection (again: nothing). */
  close(): void;
  /** Whether it was closed (by the handler or the server's end). */
  readonly closed: boolean;
  /** Waits, at most until the server is closed. */
  sleep(ms: number): Promise<void>;
  /** Waits until the server is closed (a peer that never answers). */
  hold(): Promise<void>;
}

/** A case's answer to one request (or, raw, to one connection). */
type RawHandler = (conn: RawConn, request: RawRequest) => Promise<void>;

/** A running raw subgraph. */
interface RawSubgraph {
  /** Its GraphQL URL (`http://127.0.0.1:<port>/graphql`). */
  readonly url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Requests read so far, in order. */
  readonly requests: readonly RawRequest[];
  /** Closes the listener and every connection, and waits for their loops. */
  close(): Promise<void>;
}

/** Options of {@linkcode rawSubgraph}. */
interface RawSubgraphOptions {
  /**
   * Raw mode: the handler gets each connection as accepted, before a byte is
   * read (`request` is empty), and reads it itself with `conn.read`.
   * @default {false}
   */
  readonly raw?: boolean;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from = 0): number {
  outer: for (let i = from; i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) {
      if (haystack[i + j] !== needle[j]) continue outer;
    }
    return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * Starts a raw subgraph on 127.0.0.1, port 0: it accepts connections, reads
 * one request at a time (head, then as many body bytes as `Content-Length`
 * says) and hands it to `handler`; once the handler returns, it reads the
 * next request on that connection, unless the handler closed it.
 * @param handler The case's answer.
 * @param options Raw mode.
 * @returns The subgraph.
 */
function rawSubgraph(handler: RawHandler, options: RawSubgraphOptions = {}): RawSubgraph {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const stop = new AbortController();
  const open = new Set<Deno.Conn>();
  const loops: Promise<void>[] = [];
  const requests: RawRequest[] = [];
  let connections = 0;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stop.signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        stop.signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      stop.signal.addEventListener("abort", done);
    });

  function wrap(conn: Deno.Conn): RawConn {
    let closed = false;
    return {
      async write(data) {
        let bytes = typeof data === "string" ? encoder.encode(data) : data;
        try {
          while (bytes.length > 0) bytes = bytes.subarray(await conn.write(bytes));
          return true;
        } catch {
          return false;
        }
      },
      async read(max) {
        const buffer = new Uint8Array(max);
        try {
          const n = await conn.read(buffer);
          return n === null ? null : buffer.subarray(0, n);
        } catch {
          return null;
        }
      },
      close() {
        if (closed) return;
        closed = true;
        open.delete(conn);
        try {
          conn.close();
        } catch {
          // Closed by the server's end already.
        }
      },
      get closed() {
        return closed || stop.signal.aborted;
      },
      sleep,
      hold: () => sleep(60_000),
    };
  }

  async function serve(conn: Deno.Conn, number: number): Promise<void> {
    const raw = wrap(conn);
    if (options.raw) {
      await handler(raw, {
        head: "",
        body: "",
        bytes: new Uint8Array(),
        connection: number,
        index: 0,
      });
      raw.close();
      return;
    }
    let buffer: Uint8Array = new Uint8Array();
    while (!raw.closed) {
      let end: number;
      while ((end = indexOf(buffer, CRLF2)) < 0) {
        const chunk = await raw.read(64 * 1024);
        if (chunk === null || buffer.length > 1_000_000) return raw.close();
        buffer = concat(buffer, chunk);
      }
      const head = decoder.decode(buffer.subarray(0, end));
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      while (buffer.length < end + 4 + length) {
        const chunk = await raw.read(64 * 1024);
        if (chunk === null) return raw.close();
        buffer = concat(buffer, chunk);
      }
      const bytes = buffer.slice(0, end + 4 + length);
      buffer = buffer.slice(end + 4 + length);
      const request: RawRequest = {
        head,
        body: decoder.decode(bytes.subarray(end + 4)),
        bytes,
        connection: number,
        index: requests.length + 1,
      };
      requests.push(request);
      await handler(raw, request);
    }
    raw.close();
  }

  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        if (stop.signal.aborted) {
          conn.close();
          break;
        }
        open.add(conn);
        loops.push(serve(conn, ++connections));
      }
    } catch {
      // The listener was closed.
    }
  })();

  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/graphql`,
    get connections() {
      return connections;
    },
    requests,
    async close() {
      stop.abort();
      try {
        listener.close();
      } catch {
        // Already closed.
      }
      for (const conn of open) {
        try {
          conn.close();
        } catch {
          // Closed by its handler.
        }
      }
      open.clear();
      await accepting;
      await Promise.all(loops);
    },
  };
}

// ---------------------------------------------------------------------------
// Answers, written by hand

/** A GraphQL answer's JSON whose `hello` is `value`. */
function graphql(value: string): string {
  return JSON.stringify({ data: { hello: value } });
}

/**
 * A `200 OK` with a `Content-Length` body.
 * @param body The body.
 * @param headers More header lines (`Name: value`).
 * @returns The response bytes.
 */
function ok(body: string | Uint8Array, headers: readonly string[] = []): Uint8Array {
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const head = [
    "HTTP/1.1 200 OK",
    "Content-Type: application/json",
    `Content-Length: ${bytes.length}`,
    ...headers,
  ].join("\r\n");
  return concat(encoder.encode(`${head}\r\n\r\n`), bytes);
}

/** One chunk of a chunked body (`ext`: a chunk extension such as `;x=y`). */
function chunk(data: string, ext = ""): string {
  return `${encoder.encode(data).length.toString(16)}${ext}\r\n${data}\r\n`;
}

async function gzip(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// ---------------------------------------------------------------------------
// A router in front of a raw subgraph, and its answers

/** The router's answer to one query, and how long it took. */
interface Answer {
  readonly status: number;
  // deno-lint-ignore no-explicit-any
  readonly body: any;
  readonly ms: number;
}

/**
 * Runs `test` against a router whose one subgraph (`greetings`, `{ hello }`)
 * is `sub`, then shuts both down.
 * @param sub The raw subgraph.
 * @param test The case.
 * @param options `extra`: more config (YAML, without `engine`); `engine`:
 *   more `engine` keys (the inside of a YAML flow mapping; the timeout is
 *   {@linkcode TIMEOUT_MS}).
 */
async function withRouter(
  sub: RawSubgraph,
  test: (router: RunningRouter) => Promise<void>,
  options: { readonly extra?: string; readonly engine?: string } = {},
): Promise<void> {
  const engine = [`subgraph_request_timeout: ${TIMEOUT_MS}ms`, options.engine ?? ""]
    .filter((s) => s !== "").join(", ");
  let dir: string | undefined;
  let router: RunningRouter | undefined;
  try {
    dir = await oneSubgraphWorkspace(sub.url, {
      sdl: "type Query { hello: String }",
      extra: `engine: { ${engine} }\n${options.extra ?? ""}`,
    });
    router = await startRouter({
      configPath: join(dir, "config.yaml"),
      log: createLogger({ level: "error", write: () => {} }),
    });
    await test(router);
  } finally {
    await router?.shutdown();
    await sub.close();
    if (dir !== undefined) await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Sends `{ hello }` and reads the answer.
 * @param router The router.
 * @param headers More request headers.
 * @returns The answer and its time.
 */
async function query(router: RunningRouter, headers: HeadersInit = {}): Promise<Answer> {
  const start = performance.now();
  const response = await fetch(`${router.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: JSON.stringify({ query: "{ hello }" }),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body, ms: performance.now() - start };
}

/** Asserts the subgraph's data was served: 200, `hello` is `value`, no errors, within `ms`. */
function assertData(answer: Answer, value: string, ms = FAST_MS): void {
  const shown = JSON.stringify(answer);
  assert.equal(answer.status, 200, shown);
  assert.deepEqual(answer.body, { data: { hello: value } }, shown);
  assert.ok(answer.ms < ms, `answered in ${answer.ms.toFixed(0)} ms, over ${ms} ms: ${shown}`);
}

/** What {@linkcode assertError} expects. */
interface Expected {
  /** The accepted `errors[0].extensions.code`s. */
  readonly codes: readonly string[];
  /** The latest answer, ms. @default {FAST_MS} */
  readonly within?: number;
  /** The earliest answer, ms (a deadline is not hit early). */
  readonly after?: number;
  /** A pattern of `errors[0].message`. */
  readonly message?: RegExp;
}

/**
 * Asserts a subgraph failure was answered as one: HTTP 200 (the failure is
 * inside the GraphQL response; never a 500), `hello` null (never data),
 * `errors[0]` naming the subgraph with one of the codes, within the bound.
 */
function assertError(answer: Answer, expected: Expected): void {
  const shown = JSON.stringify(answer);
  assert.equal(answer.status, 200, shown);
  assert.deepEqual(answer.body?.data, { hello: null }, shown);
  const error = answer.body?.errors?.[0];
  assert.ok(
    expected.codes.includes(error?.extensions?.code),
    `code ${error?.extensions?.code}, expected ${expected.codes.join(" or ")}: ${shown}`,
  );
  assert.equal(error.extensions.serviceName, "greetings", shown);
  if (expected.message) assert.match(error.message, expected.message, shown);
  const within = expected.within ?? FAST_MS;
  assert.ok(answer.ms < within, `answered in ${answer.ms.toFixed(0)} ms, over ${within} ms`);
  if (expected.after !== undefined) {
    assert.ok(answer.ms >= expected.after, `answered in ${answer.ms.toFixed(0)} ms, too early`);
  }
}

const BROKEN = ["SUBGRAPH_ERROR"] as const;
const FAILED = ["SUBGRAPH_ERROR", "SUBGRAPH_UNREACHABLE"] as const;
const LATE = {
  codes: ["DEADLINE_EXCEEDED"],
  after: TIMEOUT_MS - 50,
  within: TIMEOUT_MS + LATE_MS,
} as const;
/** The size error today: the client's own `SUBGRAPH_ERROR` naming the limit. */
const TOO_LARGE = /more than \d+ bytes \(engine\.max_subgraph_response_bytes\)/;

// ---------------------------------------------------------------------------
// 1–3: well-formed framings

Deno.test("1. Content-Length answer: data served; 5 sequential queries reuse a keep-alive connection (≤ 2 connections)", async () => {
  const sub = rawSubgraph(async (conn, request) => {
    await conn.write(ok(graphql(`answer ${request.index}`)));
  });
  await withRouter(sub, async (router) => {
    for (let i = 1; i <= 5; i++) assertData(await query(router), `answer ${i}`);
    assert.equal(sub.requests.length, 5);
    assert.ok(sub.connections <= 2, `${sub.connections} connections for 5 sequential queries`);
  });
});

Deno.test("2. chunked answer (several chunks, chunk extensions, trailers): data served", async () => {
  const sub = rawSubgraph(async (conn) => {
    const body = graphql("chunked");
    await conn.write(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n" +
        "Trailer: X-Checksum\r\n\r\n",
    );
    await conn.write(chunk(body.slice(0, 5), ";x=y"));
    await conn.sleep(20);
    await conn.write(chunk(body.slice(5, 17), ';name="quoted value"'));
    await conn.write(chunk(body.slice(17)));
    await conn.write("0;last=1\r\nX-Checksum: abc\r\n\r\n");
  });
  await withRouter(sub, async (router) => {
    assertData(await query(router), "chunked");
    // The connection is still good after trailers.
    assertData(await query(router), "chunked");
  });
});

Deno.test("3. close-delimited body (HTTP/1.0 style, Connection: close): data served", async () => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write(
      "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n",
    );
    await conn.write(graphql("until close").slice(0, 10));
    await conn.sleep(20);
    await conn.write(graphql("until close").slice(10));
    conn.close();
  });
  await withRouter(sub, async (router) => {
    assertData(await query(router), "until close");
    assertData(await query(router), "until close");
    assert.equal(sub.connections, 2, "a close-delimited connection is not reused");
  });
});

// ---------------------------------------------------------------------------
// 4–5: closed connections

Deno.test("4. the server reads the request and closes without answering: an error, fast", async () => {
  const sub = rawSubgraph((conn) => {
    conn.close();
    return Promise.resolve();
  });
  await withRouter(sub, async (router) => {
    assertError(await query(router), { codes: FAILED });
  });
});

Deno.test("5. a kept-alive connection closed by the server while idle: the next query still gets data", async () => {
  const sub = rawSubgraph(async (conn, request) => {
    await conn.write(ok(graphql(`answer ${request.index}`)));
    // Idle timeout of the server: the connection is closed right after the answer.
    await conn.sleep(30);
    conn.close();
  });
  await withRouter(sub, async (router) => {
    assertData(await query(router), "answer 1");
    await new Promise((resolve) => setTimeout(resolve, 150));
    assertData(await query(router), "answer 2");
    assert.equal(sub.connections, 2);
  });
});

// ---------------------------------------------------------------------------
// 6–10: broken framing

Deno.test("6. truncated body (Content-Length 100, 10 bytes, close): SUBGRAPH_ERROR", async () => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n" +
        graphql("cut").slice(0, 10),
    );
    conn.close();
  });
  await withRouter(sub, async (router) => {
    assertError(await query(router), { codes: BROKEN });
  });
});

Deno.test("7. truncated chunked body (a chunk announced, cut short, close): SUBGRAPH_ERROR", async () => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
        `40\r\n${graphql("cut").slice(0, 12)}`,
    );
    conn.close();
  });
  await withRouter(sub, async (router) => {
    assertError(await query(router), { codes: BROKEN });
  });
});

Deno.test("7b. chunked body ended by close without the last chunk: SUBGRAPH_ERROR", async () => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
        chunk(graphql("no last chunk")),
    );
    conn.close();
  });
  await withRouter(sub, async (router) => {
    assertError(await query(router), { codes: BROKEN });
  });
});

Deno.test("8. invalid chunk size line (zz): SUBGRAPH_ERROR", async () => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
        `zz\r\n${graphql("bad size")}\r\n0\r\n\r\n`,
    );
  });
  await withRouter(sub, async (router) => {
    assertError(await query(router), { codes: BROKEN });
  });
});

Deno.test("9. Content-Length and Transfer-Encoding: chunked: the chunked framing or SUBGRAPH_ERROR, never the Content-Length bytes", async () => {
  const sub = rawSubgraph(async (conn, request) => {
    if (request.index > 1) return void await conn.write(ok(graphql("second")));
    // Read by its Content-Length, the body would be its first 4 bytes ("1a\r\n").
    const body = graphql("chunked");
    await conn.write(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4\r\n" +
        `Transfer-Encoding: chunked\r\n\r\n${chunk(body.slice(0, 9))}${
          chunk(body.slice(9))
        }0\r\n\r\n`,
    );
  });
  await withRouter(sub, async (router) => {
    const first = await query(router);
    if (first.body?.data?.hello === null) assertError(first, { codes: BROKEN });
    else assertData(first, "chunked");
    // What follows on the connection is not mistaken for the next answer.
    const second = await query(router);
    if (second.body?.data?.hello === null) assertError(second, { codes: FAILED });
    else assertData(second, "second");
  });
});

Deno.test({
  name: "10. two different Content-Length headers: SUBGRAPH_ERROR (never a guess)",
  // With Deno's fetch (engine.subgraph_transport: fetch): SUBGRAPH_UNREACHABLE;
  // no data, fast (see 10b).
  fn: async () => {
    await twoLengths((answer) => assertError(answer, { codes: BROKEN }));
  },
});

Deno.test("10b. two different Content-Length headers: an error, never data (either code)", async () => {
  await twoLengths((answer) => assertError(answer, { codes: FAILED }));
});

async function twoLengths(check: (answer: Answer) => void): Promise<void> {
  const body = graphql("which length");
  const sub = rawSubgraph(async (conn) => {
    await conn.write(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" +
        `Content-Length: ${body.length}\r\nContent-Length: 5\r\n\r\n${body}`,
    );
  });
  await withRouter(sub, async (router) => check(await query(router)));
}

// ---------------------------------------------------------------------------
// 11–15: malformed or unexpected heads

Deno.test("11. garbage status lines (HTTP/1.1 abc, FOO): an error, fast", async (t) => {
  for (const line of ["HTTP/1.1 abc", "FOO", "HTTP/1.1 2000 OK", "HTTP/9.9 200 OK"]) {
    await t.step(JSON.stringify(line), async () => {
      const sub = rawSubgraph(async (conn) => {
        const body = graphql("garbage status");
        await conn.write(`${line}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      });
      await withRouter(sub, async (router) => {
        assertError(await query(router), { codes: FAILED });
      });
    });
  }
});

Deno.test("12. headers that never end (16 MB of header lines): a bounded error within the timeout; the client stops reading", async () => {
  const line = encoder.encode("X-A: b\r\n".repeat(8192)); // 64 KB
  let written = 0;
  let hungUp = false;
  const sub = rawSubgraph(async (conn) => {
    await conn.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n");
    while (written < 16_000_000 && !conn.closed) {
      if (!await conn.write(line)) {
        hungUp = true;
        break;
      }
      written += line.length;
    }
    await conn.hold();
  });
  await withRouter(sub, async (router) => {
    assertError(await query(router), {
      codes: [...FAILED, "DEADLINE_EXCEEDED"],
      within: TIMEOUT_MS + LATE_MS,
    });
    assert.ok(hungUp, `the router read all ${written} bytes of headers`);
  });
});

Deno.test({
  name: "13. a header line without a colon, an obs-fold continuation line: SUBGRAPH_ERROR",
  // With Deno's fetch: SUBGRAPH_UNREACHABLE; no data, fast (see 13b).
  fn: async (t) => {
    await badHeaderLines(t, (answer) => assertError(answer, { codes: BROKEN }));
  },
});

Deno.test("13b. a header line without a colon, an obs-fold continuation line: an error, never data (either code)", async (t) => {
  await badHeaderLines(t, (answer) => assertError(answer, { codes: FAILED }));
});

async function badHeaderLines(t: Deno.TestContext, check: (answer: Answer) => void) {
  const cases = {
    "no colon": ["X-Broken header line"],
    "obs-fold": ["X-Folded: first", " continued"],
    "space before colon": ["Content-Length : 5"],
  };
  for (const [name, lines] of Object.entries(cases)) {
    await t.step(name, async () => {
      const sub = rawSubgraph(async (conn) => {
        const body = graphql("bad header");
        await conn.write(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" +
            `${lines.join("\r\n")}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
      });
      await withRouter(sub, async (router) => check(await query(router)));
    });
  }
}

Deno.test("14. 100 Continue and 103 Early Hints before the 200: data served", async () => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write("HTTP/1.1 100 Continue\r\n\r\n");
    await conn.sleep(10);
    await conn.write("HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n");
    await conn.write(ok(graphql("after interim")));
  });
  await withRouter(sub, async (router) => {
    assertData(await query(router), "after interim");
    assertData(await query(router), "after interim");
  });
});

Deno.test("15. 101 Switching Protocols (not asked for): an error, not a hang", async () => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" +
        graphql("upgraded"),
    );
    await conn.hold();
  });
  await withRouter(sub, async (router) => {
    assertError(await query(router), { codes: FAILED });
  });
});

// ---------------------------------------------------------------------------
// 16–17: slow and silent servers

Deno.test("16. slowloris (status line, then a header byte every 300 ms): DEADLINE_EXCEEDED at the timeout", async () => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write("HTTP/1.1 200 OK\r\nX-Slow: ");
    while (!conn.closed && await conn.write("a")) await conn.sleep(300);
  });
  await withRouter(sub, async (router) => {
    assertError(await query(router), LATE);
  });
});

Deno.test("16b. slowloris in the body (Content-Length 1000, a byte every 300 ms): DEADLINE_EXCEEDED at the timeout", async () => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write(
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"data":',
    );
    while (!conn.closed && await conn.write(" ")) await conn.sleep(300);
  });
  await withRouter(sub, async (router) => {
    assertError(await query(router), LATE);
  });
});

Deno.test("17. the server never answers: DEADLINE_EXCEEDED at the timeout", async () => {
  const sub = rawSubgraph((conn) => conn.hold());
  await withRouter(sub, async (router) => {
    assertError(await query(router), LATE);
  });
});

// ---------------------------------------------------------------------------
// 18–19: sizes and content codings

Deno.test("18. a body over max_subgraph_response_bytes: the size error, fast, without reading it", async (t) => {
  const engine = "max_subgraph_response_bytes: 4KB";
  const filler = "a".repeat(16 * 1024);
  await t.step("declared: Content-Length 1 GB, sent slowly", async () => {
    let written = 0;
    const sub = rawSubgraph(async (conn) => {
      await conn.write(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n" +
          '{"data":{"hello":"',
      );
      while (!conn.closed && written < 1_000_000 && await conn.write(filler.slice(0, 1024))) {
        written += 1024;
        await conn.sleep(100);
      }
    });
    await withRouter(sub, async (router) => {
      assertError(await query(router), { codes: BROKEN, message: TOO_LARGE });
    }, { engine });
  });
  await t.step(
    "chunked without a length: 16 KB, then a chunk every 100 ms, never ending",
    async () => {
      const sub = rawSubgraph(async (conn) => {
        await conn.write(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
            chunk(`{"data":{"hello":"${filler}`),
        );
        while (!conn.closed && await conn.write(chunk(filler.slice(0, 1024)))) {
          await conn.sleep(100);
        }
      });
      await withRouter(sub, async (router) => {
        assertError(await query(router), { codes: BROKEN, message: TOO_LARGE });
      }, { engine });
    },
  );
});

Deno.test("19. gzip answer: data served", async () => {
  const body = await gzip(graphql("inflated"));
  const sub = rawSubgraph(async (conn) => {
    await conn.write(ok(body, ["Content-Encoding: gzip"]));
  });
  await withRouter(sub, async (router) => {
    assertData(await query(router), "inflated");
    assertData(await query(router), "inflated");
  });
});

Deno.test("19b. gzip bomb (small compressed, inflates over the cap): the size error, fast", async () => {
  const body = await gzip(graphql("x".repeat(8_000_000)));
  const sub = rawSubgraph(async (conn) => {
    await conn.write(ok(body, ["Content-Encoding: gzip"]));
  });
  await withRouter(sub, async (router) => {
    assert.ok(body.length < 64_000, `${body.length} compressed bytes`);
    assertError(await query(router), { codes: BROKEN, message: TOO_LARGE });
  }, { engine: "max_subgraph_response_bytes: 64KB" });
});

Deno.test("19c. Content-Encoding: br, valid: the data decoded, or SUBGRAPH_ERROR", async () => {
  const body = new Uint8Array(brotliCompressSync(encoder.encode(graphql("brotli"))));
  const sub = rawSubgraph(async (conn) => {
    await conn.write(ok(body, ["Content-Encoding: br"]));
  });
  await withRouter(sub, async (router) => {
    const answer = await query(router);
    if (answer.body?.data?.hello === null) assertError(answer, { codes: BROKEN });
    else assertData(answer, "brotli");
  });
});

Deno.test("19d. Content-Encoding: br with bytes that are no brotli: SUBGRAPH_ERROR", async () => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write(ok(new Uint8Array([0xff, 0xfe, 0x00, 0x13, 0x37, 0x42, 0x99]), [
      "Content-Encoding: br",
    ]));
  });
  await withRouter(sub, async (router) => {
    assertError(await query(router), { codes: BROKEN });
  });
});

Deno.test({
  name:
    "19e. an unknown content coding (x-foo): SUBGRAPH_ERROR, never the coded bytes merged as data",
  // With Deno's fetch the coded bytes were read as JSON ({"hello":"undecoded x-foo"}).
  fn: async () => {
    const sub = rawSubgraph(async (conn) => {
      await conn.write(ok(graphql("undecoded x-foo"), ["Content-Encoding: x-foo"]));
    });
    await withRouter(sub, async (router) => {
      assertError(await query(router), { codes: BROKEN });
    });
  },
});

// ---------------------------------------------------------------------------
// 20–23: leftovers, empty answers, undelimited bodies, resets

Deno.test("20. bytes after a Content-Length body (a smuggled second response): never served as the next answer", async () => {
  const sub = rawSubgraph(async (conn, request) => {
    if (request.index === 1) {
      await conn.write(concat(ok(graphql("first")), ok(graphql("smuggled"))));
    } else {
      await conn.write(ok(graphql(`own answer ${request.index}`)));
    }
  });
  await withRouter(sub, async (router) => {
    assertData(await query(router), "first");
    for (let i = 0; i < 2; i++) {
      const next = await query(router);
      assert.notEqual(next.body?.data?.hello, "smuggled", JSON.stringify(next));
      if (next.body?.data?.hello === null) assertError(next, { codes: FAILED });
      else assertData(next, `own answer ${sub.requests.length}`);
    }
  });
});

Deno.test("20b. a second response sent later, while the connection is idle: never served as the next answer", async () => {
  const sub = rawSubgraph(async (conn, request) => {
    await conn.write(ok(graphql(`own answer ${request.index}`)));
    if (request.index === 1) {
      // A faulty server answers twice; the second comes once the first was read.
      await conn.sleep(20);
      await conn.write(ok(graphql("stray")));
    }
  });
  await withRouter(sub, async (router) => {
    assertData(await query(router), "own answer 1");
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Every later query gets its own answer (not the one before it).
    for (let i = 0; i < 3; i++) {
      const next = await query(router);
      assertData(next, `own answer ${sub.requests.length}`);
    }
  });
});

Deno.test("21. 204 and 304 without a body: SUBGRAPH_ERROR (no GraphQL response), fast", async (t) => {
  for (const status of ["204 No Content", "304 Not Modified"]) {
    await t.step(status, async () => {
      const sub = rawSubgraph(async (conn) => {
        await conn.write(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\n\r\n`);
      });
      await withRouter(sub, async (router) => {
        assertError(await query(router), {
          codes: BROKEN,
          message: /answered HTTP (204|304) with an empty body/,
        });
        // The connection stays usable (a body-less answer leaves nothing behind).
        assertError(await query(router), { codes: BROKEN });
      });
    });
  }
});

Deno.test("22. HTTP/1.1 without Content-Length or chunked, kept open: no hang past the timeout", async (t) => {
  await t.step("never closed: DEADLINE_EXCEEDED", async () => {
    const sub = rawSubgraph(async (conn) => {
      await conn.write(
        `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n${graphql("open")}`,
      );
      await conn.hold();
    });
    await withRouter(sub, async (router) => {
      assertError(await query(router), LATE);
    });
  });
  await t.step("closed after 200 ms: the data read to the close", async () => {
    const sub = rawSubgraph(async (conn) => {
      await conn.write(
        `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n${graphql("open")}`,
      );
      await conn.sleep(200);
      conn.close();
    });
    await withRouter(sub, async (router) => {
      assertData(await query(router), "open");
    });
  });
});

Deno.test("23. resets: closed with unread request bytes, or mid-head: an error, fast", async (t) => {
  await t.step("closed after reading 16 bytes of the request (RST)", async () => {
    const sub = rawSubgraph(async (conn) => {
      await conn.read(16);
      conn.close();
    }, { raw: true });
    await withRouter(sub, async (router) => {
      assertError(await query(router), { codes: FAILED });
    });
  });
  await t.step("closed in the middle of the head", async () => {
    const sub = rawSubgraph(async (conn) => {
      await conn.write("HTTP/1.1 200 OK\r\nContent-Type: applica");
      conn.close();
    });
    await withRouter(sub, async (router) => {
      assertError(await query(router), { codes: FAILED });
    });
  });
  await t.step("closed in the middle of the status line", async () => {
    const sub = rawSubgraph(async (conn) => {
      await conn.write("HTTP/1.1 2");
      conn.close();
    });
    await withRouter(sub, async (router) => {
      assertError(await query(router), { codes: FAILED });
    });
  });
});

// ---------------------------------------------------------------------------
// 24: the request the router sends

/** The header lines of a request head, lower-cased names. */
function headerLines(head: string): [string, string][] {
  const lines = head.split("\r\n").slice(1);
  return lines.map((line) => {
    const colon = line.indexOf(":");
    assert.ok(colon > 0, `a header line without a name: ${JSON.stringify(line)}`);
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
  });
}

const RULES = `headers:
  all:
    request:
      - { op: propagate, named: X-Client-Id }
      - { op: propagate, matching: "^x-tenant-" }
      - { op: set, name: X-Router, value: gw }
`;

/** Headers any client may add on its own (transport and content negotiation). */
const TRANSPORT = new Set([
  "host",
  "content-length",
  "content-type",
  "accept",
  "accept-encoding",
  "accept-language",
  "user-agent",
  "connection",
  "keep-alive",
]);

Deno.test("24. the request is a well-formed HTTP/1.1 POST carrying only what the header rules forward", async () => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write(ok(graphql("seen")));
  });
  await withRouter(sub, async (router) => {
    assertData(
      await query(router, {
        "x-client-id": "client 1\twith tab",
        "x-tenant-one": "t1",
        "x-secret": "not forwarded",
        authorization: "Bearer not-forwarded",
        cookie: "session=not-forwarded",
      }),
      "seen",
    );
    const [request] = sub.requests;
    assert.ok(request);
    const port = new URL(sub.url).port;
    // One request, exactly: its head, a blank line, its Content-Length body.
    const text = decoder.decode(request.bytes);
    const [requestLine, ...rest] = request.head.split("\r\n");
    assert.equal(requestLine, "POST /graphql HTTP/1.1");
    for (const line of rest) {
      assert.doesNotMatch(line, /[\r\n\0]/, "no bare CR, LF or NUL in a header line");
      assert.match(line, /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[ \t]*[\x20-\x7e\t]*$/, line);
    }
    const headers = headerLines(request.head);
    const one = (name: string) => {
      const values = headers.filter(([n]) => n === name).map(([, v]) => v);
      assert.equal(values.length, 1, `${name}: ${values.length} times`);
      return values[0]!;
    };
    assert.equal(one("host"), `127.0.0.1:${port}`);
    assert.equal(one("content-type"), "application/json");
    assert.equal(Number(one("content-length")), encoder.encode(request.body).length);
    assert.equal(text.length, request.head.length + 4 + request.body.length);
    assert.equal(headers.some(([n]) => n === "transfer-encoding"), false);
    assert.match(JSON.parse(request.body).query, /^(query\s*)?\{\s*hello\s*\}$/);
    // The rules' headers, and nothing else from the client.
    assert.equal(one("x-client-id"), "client 1\twith tab");
    assert.equal(one("x-tenant-one"), "t1");
    assert.equal(one("x-router"), "gw");
    // W3C trace context is the tracer's (on in the production profile), not a header rule's:
    // a fresh traceparent, never the client's.
    const traced = headers.filter(([n]) => n === "traceparent").map(([, v]) => v);
    for (const value of traced) assert.match(value, /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    const forwarded = headers.map(([n]) => n)
      .filter((n) => !TRANSPORT.has(n) && n !== "traceparent").sort();
    assert.deepEqual(forwarded, ["x-client-id", "x-router", "x-tenant-one"]);
  }, { extra: RULES });
});

Deno.test("24b. client header bytes that would fold or split a line reach the subgraph as no header of their own", async (t) => {
  const sub = rawSubgraph(async (conn) => {
    await conn.write(ok(graphql("seen")));
  });
  await withRouter(sub, async (router) => {
    const { hostname, port } = new URL(router.url);
    const tricks = {
      "obs-fold": "X-Client-Id: a\r\n X-Injected: folded\r\n",
      "bare LF": "X-Client-Id: b\nX-Injected: bare-lf\r\n",
      "bare CR": "X-Tenant-One: c\rX-Injected: bare-cr\r\n",
    };
    for (const [name, lines] of Object.entries(tricks)) {
      await t.step(name, async () => {
        const before = sub.requests.length;
        const body = JSON.stringify({ query: "{ hello }" });
        const conn = await Deno.connect({ hostname, port: Number(port) });
        try {
          const request = `POST /graphql HTTP/1.1\r\nHost: router\r\n${lines}` +
            "Content-Type: application/json\r\nAccept: application/json\r\n" +
            `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
          await conn.write(encoder.encode(request));
          let answer = "";
          const buffer = new Uint8Array(16 * 1024);
          while (true) {
            const n = await conn.read(buffer);
            if (n === null) break;
            answer += decoder.decode(buffer.subarray(0, n));
          }
          // Refused by the router's own parser, or parsed into separate headers.
          assert.match(answer, /^HTTP\/1\.1 (200|400) /, answer);
          if (answer.startsWith("HTTP/1.1 200")) {
            assert.equal(sub.requests.length, before + 1, "the subgraph got the query");
          }
        } finally {
          conn.close();
        }
        for (const request of sub.requests.slice(before)) {
          const headers = headerLines(request.head);
          assert.equal(headers.some(([n]) => n === "x-injected"), false, request.head);
          for (const [, value] of headers) assert.doesNotMatch(value, /[\r\n]/);
        }
      });
    }
  }, { extra: RULES });
});
