/**
 * The answer side of the subgraph HTTP/1.1 client (`http1.ts`): a
 * connection's read buffer, the head of an answer, its framing (RFC 9112
 * §6.3) and its body as it arrives. Strict: whatever it does not recognise is
 * an {@linkcode Http1ProtocolError}.
 *
 * @module
 */

/** A connection's read buffer while idle (it grows for a large head, up to maxHeaderBytes × 2). */
export const BUFFER_BYTES = 16_384;
/** A header name (RFC 9110 token). */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const latin1 = new TextDecoder("latin1");
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;

/** The server broke HTTP/1.1 (or sent what this client does not speak). */
export class Http1ProtocolError extends Error {
  /**
   * A protocol error (the message names the rule broken).
   * @param message What was wrong, without the server's bytes.
   */
  constructor(message: string) {
    super(message);
    this.name = "Http1ProtocolError";
  }
}

/** A pooled connection closed before any byte of an answer (retried when safe). */
export class StaleConnection extends Error {}

/**
 * A new connection closed (or was reset) before any byte of an answer: the
 * server was reached but did not answer, which breaks no rule of HTTP.
 */
export class ClosedBeforeAnswer extends Error {
  constructor() {
    super("The connection closed before any byte of an answer");
    this.name = "ClosedBeforeAnswer";
  }
}

/** A connection and the bytes read from it but not yet consumed. */
export class Connection {
  /** Bytes read; the unread ones are `buffer[start, end)`. */
  buffer = new Uint8Array(BUFFER_BYTES);
  /** Where the unread bytes start. */
  start = 0;
  /** Where they end. */
  end = 0;
  /** When it was last released to the pool. */
  idleSince = 0;
  /** Answers it carried. */
  uses = 0;
  /** Closed (by an abort, an error, or the pool). */
  closed = false;
  /** In the pool, between answers (see {@linkcode Connection.watch}). */
  idle = false;
  /** The read begun by {@linkcode Connection.watch}: the next `fill` takes its bytes. */
  #pending: Promise<number | null> | null = null;
  /**
   * A connection just opened.
   * @param tcp The socket.
   * @param origin Its pool key (`host:port`).
   */
  constructor(readonly tcp: Deno.TcpConn, readonly origin: string) {}

  /**
   * Marks the connection idle (its buffer empty) and reads on while it is: a
   * server has nothing to send between answers, so bytes arriving now (a
   * stray or late answer, the rest of a body longer than its length) or the
   * connection's end make it unusable, and `unusable` is called. Unwatched,
   * a stray answer would be read as the next request's answer, and every
   * later answer on the connection as the one after it (nginx and Go's
   * client watch idle connections the same way). The read is the one the
   * next answer needs anyway: it costs no extra operation.
   * @param unusable Called once when something arrives while idle.
   */
  watch(unusable: (conn: Connection) => void): void {
    this.idle = true;
    this.start = 0;
    this.end = 0;
    const pending = this.tcp.read(this.buffer);
    this.#pending = pending;
    const seen = () => {
      if (this.idle && this.#pending === pending) unusable(this);
    };
    pending.then(seen, seen);
  }

  /** Reads more bytes; false at the connection's end. */
  async fill(): Promise<boolean> {
    const pending = this.#pending;
    if (pending !== null) {
      // Taken from the pool: the watching read (into the empty buffer) brings the answer.
      this.#pending = null;
      const n = await pending;
      if (n === null) return false;
      this.end += n;
      return true;
    }
    if (this.start === this.end) {
      this.start = 0;
      this.end = 0;
    } else if (this.end === this.buffer.length) {
      // Bounded by the callers: a head up to maxHeaderBytes, a chunk line up to 4 KiB.
      if (this.start > 0) {
        this.buffer.copyWithin(0, this.start, this.end);
        this.end -= this.start;
        this.start = 0;
      } else {
        const next = new Uint8Array(this.buffer.length * 2);
        next.set(this.buffer);
        this.buffer = next;
      }
    }
    const n = await this.tcp.read(this.buffer.subarray(this.end));
    if (n === null) return false;
    this.end += n;
    return true;
  }

  /** Closes the socket (once): pending reads and writes fail. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.tcp.close();
    } catch {
      // Closed already.
    }
  }
}

/** The parsed head of an answer. */
export interface Head {
  /** The status code. */
  readonly status: number;
  /** 1 for HTTP/1.1, 0 for HTTP/1.0. */
  readonly minor: number;
  /** Header lines, names lower case, in order. */
  readonly headers: [string, string][];
}

/** Reads one answer head; the connection's buffer then starts at the body. */
export async function readHead(
  conn: Connection,
  options: { readonly maxHeaderBytes: number; readonly reused: boolean },
): Promise<Head> {
  /** Unread bytes already searched (offsets move when `fill` compacts the buffer). */
  let searched = 0;
  let sawByte = conn.end > conn.start;
  for (;;) {
    const at = indexOfHeadEnd(conn.buffer, conn.start + searched, conn.end);
    if (at >= 0) {
      const text = latin1.decode(conn.buffer.subarray(conn.start, at));
      conn.start = at + 4;
      return parseHead(text);
    }
    if (conn.end - conn.start > options.maxHeaderBytes) {
      throw new Http1ProtocolError(`a header section over ${options.maxHeaderBytes} bytes`);
    }
    searched = Math.max(0, conn.end - conn.start - 3);
    let more: boolean;
    try {
      more = await conn.fill();
    } catch (error) {
      if (options.reused && !sawByte && !conn.closed) throw new StaleConnection(String(error));
      throw error;
    }
    if (!more) {
      if (options.reused && !sawByte) throw new StaleConnection("closed");
      if (!sawByte) throw new ClosedBeforeAnswer();
      throw new Http1ProtocolError("the connection closed inside the answer's head");
    }
    sawByte = true;
  }
}

function indexOfHeadEnd(buffer: Uint8Array, from: number, to: number): number {
  for (let i = buffer.indexOf(13, from); i >= 0 && i + 3 < to; i = buffer.indexOf(13, i + 1)) {
    if (buffer[i + 1] === 10 && buffer[i + 2] === 13 && buffer[i + 3] === 10) return i;
  }
  return -1;
}

function parseHead(text: string): Head {
  const lines = text.split("\r\n");
  const match = STATUS_LINE.exec(lines[0]!);
  if (match === null) throw new Http1ProtocolError("a malformed status line");
  const headers: [string, string][] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    // No obs-fold (RFC 9112 §5.2), no name without a colon, no bare CR or LF.
    if (colon <= 0 || line.includes("\r") || line.includes("\n")) {
      throw new Http1ProtocolError("a malformed header line");
    }
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) throw new Http1ProtocolError("a malformed header name");
    headers.push([name.toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return { status: Number(match[2]), minor: Number(match[1]), headers };
}

type Framing =
  | { readonly kind: "none" }
  | { readonly kind: "length"; readonly length: number }
  | { readonly kind: "chunked" }
  | { readonly kind: "close" };

/** How the body is delimited (RFC 9112 §6.3), and whether the connection may be reused. */
function framingOf(head: Head): { framing: Framing; reusable: boolean; coding: string | null } {
  let lengths: string[] = [];
  let transfer: string[] = [];
  const codings: string[] = [];
  let connection = "";
  for (const [name, value] of head.headers) {
    if (name === "content-length") lengths = lengths.concat(value.split(","));
    else if (name === "transfer-encoding") transfer = transfer.concat(value.split(","));
    else if (name === "content-encoding") codings.push(...value.split(","));
    else if (name === "connection") connection += `,${value.toLowerCase()}`;
  }
  const tokens = connection.split(",").map((t) => t.trim());
  let reusable = head.minor === 1 ? !tokens.includes("close") : tokens.includes("keep-alive");
  const coding = contentCoding(codings);
  let framing: Framing;
  if (head.status === 204 || head.status === 304) {
    framing = { kind: "none" };
  } else if (transfer.length > 0) {
    const list = transfer.map((t) => t.trim().toLowerCase()).filter((t) => t !== "");
    if (list.length !== 1 || list[0] !== "chunked") {
      throw new Http1ProtocolError("a transfer coding other than chunked");
    }
    framing = { kind: "chunked" };
    // Both framings (a smuggling shape): chunked wins, the connection is not reused.
    if (lengths.length > 0) reusable = false;
  } else if (lengths.length > 0) {
    const values = new Set(lengths.map((l) => l.trim()));
    const [only] = values;
    if (values.size !== 1 || !/^\d{1,15}$/.test(only!)) {
      throw new Http1ProtocolError("an invalid or conflicting Content-Length");
    }
    framing = { kind: "length", length: Number(only) };
  } else {
    framing = { kind: "close" };
    reusable = false;
  }
  return { framing, reusable, coding };
}

/** The single content coding to undo ("gzip", "deflate") or null; others are refused. */
function contentCoding(codings: readonly string[]): string | null {
  const list = codings.map((c) => c.trim().toLowerCase()).filter((c) =>
    c !== "" && c !== "identity"
  );
  if (list.length === 0) return null;
  if (list.length === 1 && (list[0] === "gzip" || list[0] === "x-gzip")) return "gzip";
  if (list.length === 1 && list[0] === "deflate") return "deflate";
  throw new Http1ProtocolError("a content coding other than gzip or deflate");
}

/**
 * Largest body read whole before its answer is handed over: a small
 * length-framed body then needs no stream (and no chunk copies). Larger ones
 * stream, so that the in-flight memory budget can hold their reading back.
 */
export const WHOLE_BODY_BYTES = 262_144;

/** The body bytes of answers handed over whole (see {@linkcode wholeBody}). */
const WHOLE = new WeakMap<Response, Uint8Array>();

/**
 * The body of an answer of this client that arrived whole, without reading
 * its stream (the `Response` carries the same bytes for any other reader).
 * @param response An answer of the pool.
 * @returns The body bytes, or undefined when the body streams.
 */
export function wholeBody(response: Response): Uint8Array | undefined {
  return WHOLE.get(response);
}

/**
 * Reads until `length` body bytes are buffered (the buffer grows to hold
 * them). Stops quietly at the connection's end: the answer then streams what
 * arrived and fails as a body cut short.
 */
async function fillWhole(conn: Connection, length: number): Promise<void> {
  if (conn.buffer.length - conn.start < length) {
    const next = new Uint8Array(Math.max(length, conn.buffer.length));
    next.set(conn.buffer.subarray(conn.start, conn.end));
    conn.end -= conn.start;
    conn.start = 0;
    conn.buffer = next;
  }
  while (conn.end - conn.start < length) {
    const n = await conn.tcp.read(conn.buffer.subarray(conn.end));
    if (n === null) return;
    conn.end += n;
  }
}

/**
 * The answer as a `Response`. A small length-framed, unencoded body (at most
 * {@linkcode WHOLE_BODY_BYTES}) is read whole first and handed over from the
 * buffer; others stream.
 */
export async function answerOf(
  conn: Connection,
  head: Head,
  hooks: {
    readonly release: (conn: Connection) => void;
    readonly onStreamEnd: () => void;
    readonly signal: AbortSignal | undefined;
  },
): Promise<{ response: Response; streaming: boolean }> {
  const { framing, reusable, coding } = framingOf(head);
  if (
    framing.kind === "length" && coding === null && framing.length <= WHOLE_BODY_BYTES &&
    conn.end - conn.start < framing.length
  ) {
    await fillWhole(conn, framing.length);
  }
  const headers = new Headers();
  for (const [name, value] of head.headers) {
    // The decoded body has neither the coding nor the coded length.
    if (coding !== null && (name === "content-encoding" || name === "content-length")) continue;
    headers.append(name, value);
  }
  const init = { status: head.status, headers };
  const finish = () => {
    // Bytes after the answer were never asked for: the connection is not trusted again.
    if (reusable && conn.start === conn.end) hooks.release(conn);
    else conn.close();
  };
  if (framing.kind === "none") {
    finish();
    return { response: new Response(null, init), streaming: false };
  }
  if (framing.kind === "length" && coding === null && conn.end - conn.start >= framing.length) {
    const body = conn.buffer.slice(conn.start, conn.start + framing.length);
    conn.start += framing.length;
    finish();
    const response = new Response(body, init);
    WHOLE.set(response, body);
    return { response, streaming: false };
  }
  let stream = bodyStream(conn, framing, {
    signal: hooks.signal,
    done: () => {
      hooks.onStreamEnd();
      finish();
    },
    failed: () => {
      hooks.onStreamEnd();
      conn.close();
    },
  });
  if (coding !== null) {
    stream = stream.pipeThrough(
      new DecompressionStream(coding as CompressionFormat) as unknown as TransformStream<
        Uint8Array,
        Uint8Array
      >,
    );
  }
  return { response: new Response(stream, init), streaming: true };
}

/** Most bytes of buffered chunks handed over as one piece. */
const COALESCE_BYTES = 65_536;

/** The body as it arrives: counted to its length, de-chunked, or to the end. */
function bodyStream(
  conn: Connection,
  framing: Exclude<Framing, { kind: "none" }>,
  hooks: {
    readonly done: () => void;
    readonly failed: () => void;
    /** Its abort closed the connection: the body fails with its reason. */
    readonly signal: AbortSignal | undefined;
  },
): ReadableStream<Uint8Array> {
  let settled = false;
  const settle = (ok: boolean) => {
    if (settled) return;
    settled = true;
    if (ok) hooks.done();
    else hooks.failed();
  };
  const next = framing.kind === "length"
    ? countedBody(conn, framing.length)
    : framing.kind === "close"
    ? () => take(conn, Infinity)
    : chunkedBody(conn);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const bytes = await next();
        if (bytes === null) {
          controller.close();
          settle(true);
        } else {
          controller.enqueue(bytes);
        }
      } catch (error) {
        settle(false);
        controller.error(hooks.signal?.aborted ? hooks.signal.reason : error);
      }
    },
    cancel() {
      settle(false);
    },
  }, { highWaterMark: 0 });
}

/** Takes up to `max` buffered bytes, reading when none are buffered; null at the end. */
async function take(conn: Connection, max: number): Promise<Uint8Array | null> {
  if (conn.start === conn.end && !(await conn.fill())) return null;
  const n = Math.min(max, conn.end - conn.start);
  const bytes = conn.buffer.slice(conn.start, conn.start + n);
  conn.start += n;
  return bytes;
}

/** A body of `length` bytes, piece by piece; null once they are all read. */
function countedBody(conn: Connection, length: number): () => Promise<Uint8Array | null> {
  let left = length;
  return async () => {
    if (left === 0) return null;
    const bytes = await take(conn, left);
    if (bytes === null) throw new Http1ProtocolError("the connection closed inside the body");
    left -= bytes.length;
    return bytes;
  };
}

/** Reads one CRLF-terminated line (chunk sizes, trailers), bounded. */
async function readLine(conn: Connection): Promise<string> {
  for (;;) {
    const at = conn.buffer.subarray(conn.start, conn.end).indexOf(10);
    if (at >= 0) {
      const end = conn.start + at;
      if (at === 0 || conn.buffer[end - 1] !== 13) {
        throw new Http1ProtocolError("a malformed chunk line");
      }
      const text = latin1.decode(conn.buffer.subarray(conn.start, end - 1));
      conn.start = end + 1;
      return text;
    }
    if (conn.end - conn.start > 4_096) throw new Http1ProtocolError("a chunk line over 4 KiB");
    if (!(await conn.fill())) {
      throw new Http1ProtocolError("the connection closed inside a chunk");
    }
  }
}

/** Skips a buffered CRLF (the end of a chunk's data); false when not both bytes are there. */
function skipCrlf(conn: Connection): boolean {
  if (conn.end - conn.start < 2) return false;
  if (conn.buffer[conn.start] !== 13 || conn.buffer[conn.start + 1] !== 10) return false;
  conn.start += 2;
  return true;
}

/**
 * A buffered chunk-size line of hex digits alone (the common shape), read
 * from the bytes; -1 for anything else (not buffered whole, an extension,
 * malformed), which `readLine()` then reads and judges.
 */
function bufferedChunkSize(conn: Connection): number {
  const { buffer, start, end } = conn;
  let size = 0;
  for (let i = start; i < end && i - start <= 12; i++) {
    const byte = buffer[i]!;
    const digit = byte >= 48 && byte <= 57
      ? byte - 48
      : byte >= 97 && byte <= 102
      ? byte - 87
      : byte >= 65 && byte <= 70
      ? byte - 55
      : -1;
    if (digit >= 0) {
      size = size * 16 + digit;
      continue;
    }
    if (byte !== 13 || i === start || i + 1 >= end || buffer[i + 1] !== 10) return -1;
    conn.start = i + 2;
    return size;
  }
  return -1;
}

/**
 * A chunked body, de-chunked: the next piece of its data, null after the last
 * chunk and the trailers.
 */
function chunkedBody(conn: Connection): () => Promise<Uint8Array | null> {
  /** Bytes left in the current chunk; -1 between chunks. */
  let chunkLeft = -1;
  /** The last chunk and the trailers are read. */
  let lastChunkRead = false;
  /** Where buffered chunks are gathered (made when first needed). */
  let scratch: Uint8Array | null = null;
  return async () => {
    if (lastChunkRead) return null;
    // Chunks already buffered are handed over together (up to COALESCE_BYTES,
    // copied into one scratch buffer): a server sending one-byte chunks costs
    // a few byte comparisons each, not a stream read and an array each.
    /** The first chunk's bytes while they are all there is. */
    let piece: Uint8Array | null = null;
    let total = 0;
    const result = () => piece ?? scratch!.slice(0, total);
    for (;;) {
      if (chunkLeft > 0) {
        if (total === 0) {
          piece = await take(conn, chunkLeft);
          if (piece === null) throw new Http1ProtocolError("the connection closed inside a chunk");
          chunkLeft -= piece.length;
          total = piece.length;
        } else {
          // Only buffered bytes come here (see the return below).
          const n = Math.min(chunkLeft, conn.end - conn.start, COALESCE_BYTES - total);
          if (piece !== null) {
            scratch ??= new Uint8Array(COALESCE_BYTES);
            scratch.set(piece);
            piece = null;
          }
          scratch!.set(conn.buffer.subarray(conn.start, conn.start + n), total);
          conn.start += n;
          chunkLeft -= n;
          total += n;
        }
        if (chunkLeft === 0) {
          if (!skipCrlf(conn) && (await readLine(conn)) !== "") {
            throw new Http1ProtocolError("a chunk longer than its size");
          }
          chunkLeft = -1;
        }
        if (total >= COALESCE_BYTES || conn.start === conn.end) return result();
        continue;
      }
      chunkLeft = bufferedChunkSize(conn);
      if (chunkLeft < 0) {
        const size = (await readLine(conn)).split(";")[0]!.trim();
        if (!/^[0-9A-Fa-f]{1,12}$/.test(size)) {
          throw new Http1ProtocolError("a malformed chunk size");
        }
        chunkLeft = parseInt(size, 16);
      }
      if (chunkLeft === 0) {
        // Trailers, up to the empty line.
        for (let n = 0; (await readLine(conn)) !== ""; n++) {
          if (n > 64) throw new Http1ProtocolError("more than 64 trailer lines");
        }
        lastChunkRead = true;
        return total > 0 ? result() : null;
      }
    }
  };
}
