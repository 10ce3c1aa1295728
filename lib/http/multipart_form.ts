/**
 * A streaming `multipart/form-data` reader (RFC 7578), as the GraphQL multipart
 * request specification sends file uploads: parts are read one after another
 * from the request body, each part's content is itself a stream, and nothing
 * is held but the chunk being passed on and a delimiter's length of look-ahead.
 * A part must be read (or skipped) before the next one is asked for.
 *
 * @module
 */

/** One part of the form: its name and its content, streamed. */
export interface FormPart {
  /** The `name` of its `Content-Disposition`. */
  readonly name: string;
  /** The `filename` of its `Content-Disposition`, or null (a field). */
  readonly filename: string | null;
  /** Its `Content-Type`, or null. */
  readonly contentType: string | null;
  /** Its content; ends at the next delimiter. */
  readonly body: ReadableStream<Uint8Array<ArrayBuffer>>;
}

/** Thrown for a body that is not the multipart it claims to be. */
export class MalformedMultipart extends Error {
  /** @param message What was wrong. */
  constructor(message: string) {
    super(message);
    this.name = "MalformedMultipart";
  }
}

/** The largest header block of one part, bytes (its headers are held whole). */
const MAX_PART_HEADER_BYTES = 16_384;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const CRLF_CRLF = encoder.encode("\r\n\r\n");

/**
 * The boundary of a `multipart/form-data` content type, or null when the type
 * is another one or names no boundary.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formBoundary } from "./multipart_form.ts";
 * assert.equal(formBoundary('multipart/form-data; boundary="abc 1"'), "abc 1");
 * assert.equal(formBoundary("multipart/form-data; boundary=x-y"), "x-y");
 * assert.equal(formBoundary("application/json"), null);
 * ```
 * @param contentType The `Content-Type` header.
 * @returns The boundary, or null.
 */
export function formBoundary(contentType: string | null): string | null {
  if (contentType === null) return null;
  const [type, ...params] = contentType.split(";");
  if (type?.trim().toLowerCase() !== "multipart/form-data") return null;
  for (const param of params) {
    const eq = param.indexOf("=");
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== "boundary") continue;
    const value = param.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1");
    return value.length > 0 && value.length <= 70 ? value : null;
  }
  return null;
}

/**
 * Reads the parts of a `multipart/form-data` body in order.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MultipartFormReader } from "./multipart_form.ts";
 * const text = '--b\r\ncontent-disposition: form-data; name="a"\r\n\r\nhello\r\n' +
 *   '--b\r\ncontent-disposition: form-data; name="f"; filename="x.txt"\r\ncontent-type: text/plain\r\n\r\nfile\r\n--b--\r\n';
 * const reader = new MultipartFormReader(new Blob([text]).stream(), "b");
 * const a = await reader.next();
 * assert.equal(a?.name, "a");
 * assert.equal(await new Response(a?.body).text(), "hello");
 * const f = await reader.next();
 * assert.deepEqual([f?.name, f?.filename, f?.contentType], ["f", "x.txt", "text/plain"]);
 * assert.equal(await new Response(f?.body).text(), "file");
 * assert.equal(await reader.next(), null);
 * ```
 */
export class MultipartFormReader {
  readonly #source: ReadableStreamDefaultReader<Uint8Array>;
  /** `\r\n--<boundary>`: what ends a part. */
  readonly #delimiter: Uint8Array;
  /** Bytes read and not yet passed on. */
  #pending: Uint8Array;
  #done = false;
  /** The body ended (the closing delimiter, or the source). */
  #ended = false;
  /** The part being read has reached its delimiter. */
  #partEnded = true;
  #first = true;

  /**
   * @param body The request body.
   * @param boundary The boundary ({@linkcode formBoundary}).
   */
  constructor(body: ReadableStream<Uint8Array>, boundary: string) {
    this.#source = body.getReader();
    this.#delimiter = encoder.encode(`\r\n--${boundary}`);
    // The first delimiter has no CRLF before it: one is assumed.
    this.#pending = encoder.encode("\r\n");
  }

  /**
   * The next part, once the previous one was read to its end; null after the last.
   * @returns The part, or null.
   * @throws {MalformedMultipart} When the body breaks the format.
   */
  async next(): Promise<FormPart | null> {
    if (!this.#partEnded) throw new Error("Read the previous part before the next one");
    if (this.#ended) return null;
    if (this.#first) {
      this.#first = false;
      // Skip a preamble up to the first delimiter.
      await this.#skipPart();
    }
    // After a delimiter: `--` ends the body, CRLF starts a part.
    await this.#fill(2);
    if (this.#pending.length < 2) throw new MalformedMultipart("The body ends inside a delimiter");
    if (this.#pending[0] === 0x2d && this.#pending[1] === 0x2d) {
      this.#ended = true;
      await this.cancel();
      return null;
    }
    // Transport padding (spaces, tabs) may precede the CRLF.
    let at = 0;
    for (;;) {
      await this.#fill(at + 2);
      const c = this.#pending[at];
      if (c === 0x20 || c === 0x09) at++;
      else break;
      if (at > 64) throw new MalformedMultipart("Malformed part delimiter");
    }
    if (this.#pending[at] !== 0x0d || this.#pending[at + 1] !== 0x0a) {
      throw new MalformedMultipart("Malformed part delimiter");
    }
    this.#pending = this.#pending.subarray(at + 2);
    const headers = await this.#readHeaders();
    this.#partEnded = false;
    const disposition = headers.get("content-disposition") ?? "";
    const name = dispositionParam(disposition, "name");
    if (name === null) throw new MalformedMultipart("A part has no Content-Disposition name");
    return {
      name,
      filename: dispositionParam(disposition, "filename"),
      contentType: headers.get("content-type"),
      body: this.#partStream(),
    };
  }

  /** Stops reading (the rest of the body is cancelled). */
  async cancel(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.#source.cancel().catch(() => {});
  }

  /** Reads until `pending` holds at least `n` bytes or the source ends. */
  async #fill(n: number): Promise<void> {
    while (this.#pending.length < n && !this.#done) {
      const { value, done } = await this.#read();
      if (done) {
        this.#done = true;
        break;
      }
      this.#append(value);
    }
  }

  /** The next chunk of the body; a body that breaks off (the client gone) is malformed. */
  async #read(): Promise<ReadableStreamReadResult<Uint8Array>> {
    try {
      return await this.#source.read();
    } catch {
      // The transport's own message (a socket error, host and port) is not the client's answer.
      throw new MalformedMultipart("The body broke off before its end");
    }
  }

  #append(chunk: Uint8Array): void {
    if (this.#pending.length === 0) {
      this.#pending = chunk;
      return;
    }
    const joined = new Uint8Array(this.#pending.length + chunk.length);
    joined.set(this.#pending);
    joined.set(chunk, this.#pending.length);
    this.#pending = joined;
  }

  async #readHeaders(): Promise<Headers> {
    for (;;) {
      const end = indexOf(this.#pending, CRLF_CRLF, 0);
      // A part without headers starts with the blank line at once.
      const empty = this.#pending[0] === 0x0d && this.#pending[1] === 0x0a;
      if (empty) {
        this.#pending = this.#pending.subarray(2);
        return new Headers();
      }
      // One chunk may hold a whole header block over the bound: it is refused all the same.
      if (end > MAX_PART_HEADER_BYTES) {
        throw new MalformedMultipart(`A part's headers exceed ${MAX_PART_HEADER_BYTES} bytes`);
      }
      if (end >= 0) {
        const text = decoder.decode(this.#pending.subarray(0, end));
        this.#pending = this.#pending.subarray(end + 4);
        const headers = new Headers();
        for (const line of text.split("\r\n")) {
          const colon = line.indexOf(":");
          if (colon <= 0) throw new MalformedMultipart("Malformed part header");
          try {
            headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
          } catch {
            throw new MalformedMultipart("Malformed part header");
          }
        }
        return headers;
      }
      if (this.#pending.length > MAX_PART_HEADER_BYTES) {
        throw new MalformedMultipart(`A part's headers exceed ${MAX_PART_HEADER_BYTES} bytes`);
      }
      if (this.#done) throw new MalformedMultipart("The body ends inside a part's headers");
      await this.#fill(this.#pending.length + 1);
    }
  }

  /**
   * Takes the next bytes of the current part: a chunk, or null at its end. Holds
   * back a delimiter's length minus one (a delimiter may straddle two chunks).
   */
  async #take(): Promise<Uint8Array | null> {
    if (this.#partEnded) return null;
    const delimiter = this.#delimiter;
    for (;;) {
      const at = indexOf(this.#pending, delimiter, 0);
      if (at >= 0) {
        const chunk = this.#pending.subarray(0, at);
        this.#pending = this.#pending.subarray(at + delimiter.length);
        this.#partEnded = true;
        return chunk.length > 0 ? chunk : null;
      }
      const safe = this.#pending.length - (delimiter.length - 1);
      if (safe > 0) {
        // A view, not a copy: `pending` is replaced, never written into.
        const chunk = this.#pending.subarray(0, safe);
        this.#pending = this.#pending.subarray(safe);
        return chunk;
      }
      if (this.#done) throw new MalformedMultipart("The body ends inside a part");
      // `pending` is a tail shorter than a delimiter. When no delimiter starts in it (one
      // would end within the next chunk's first bytes), it goes out alone and the next
      // chunk is kept as it came: a file streams without a copy per chunk.
      const { value, done } = await this.#read();
      if (done) {
        this.#done = true;
        continue;
      }
      const tail = this.#pending;
      if (tail.length > 0 && value.length >= delimiter.length - 1) {
        const bridge = new Uint8Array(tail.length + delimiter.length - 1);
        bridge.set(tail);
        bridge.set(value.subarray(0, delimiter.length - 1), tail.length);
        if (indexOf(bridge, delimiter, 0) < 0) {
          this.#pending = value;
          return tail;
        }
      }
      this.#append(value);
    }
  }

  async #skipPart(): Promise<void> {
    this.#partEnded = false;
    while (await this.#take() !== null) { /* skipped */ }
    this.#partEnded = true;
  }

  #partStream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    return new ReadableStream<Uint8Array<ArrayBuffer>>({
      pull: async (controller) => {
        try {
          const chunk = await this.#take();
          if (chunk === null) controller.close();
          else controller.enqueue(chunk as Uint8Array<ArrayBuffer>);
        } catch (error) {
          controller.error(error);
        }
      },
      cancel: () => this.cancel(),
    }, { highWaterMark: 0 });
  }
}

/** A parameter of a `Content-Disposition` value (`name="operations"`), or null. */
function dispositionParam(value: string, param: string): string | null {
  const match = new RegExp(`(?:^|;)\\s*${param}="((?:[^"\\\\]|\\\\.)*)"`, "i").exec(value) ??
    new RegExp(`(?:^|;)\\s*${param}=([^;\\s"]+)`, "i").exec(value);
  return match ? match[1]!.replace(/\\(.)/g, "$1") : null;
}

/** The first index of `needle` in `haystack` from `from`, or -1. */
function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0]!;
  const last = haystack.length - needle.length;
  outer: for (
    let i = haystack.indexOf(first, from);
    i >= 0 && i <= last;
    i = haystack.indexOf(first, i + 1)
  ) {
    for (let j = 1; j < needle.length; j++) {
      if (haystack[i + j] !== needle[j]) continue outer;
    }
    return i;
  }
  return -1;
}
