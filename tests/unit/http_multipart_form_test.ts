/**
 * Issue 43: the streaming multipart/form-data reader (lib/http/multipart_form.ts)
 * reads the same parts however the body is cut into chunks, contents that look
 * like delimiters included; malformed bodies are refused, never hung on.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { MalformedMultipart, MultipartFormReader } from "../../lib/http/multipart_form.ts";

const BOUNDARY = "gw-b0undary";
const encoder = new TextEncoder();

/** A body cut at the given offsets. */
function chunked(bytes: Uint8Array, cuts: readonly number[]): ReadableStream<Uint8Array> {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let at = 0;
  for (const point of [...points, bytes.length]) {
    if (point > at) chunks.push(bytes.slice(at, point));
    at = Math.max(at, point);
  }
  return new ReadableStream({
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
}

function body(parts: readonly { name: string; content: Uint8Array }[]): Uint8Array {
  const pieces: Uint8Array[] = [];
  for (const { name, content } of parts) {
    pieces.push(encoder.encode(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.bin"\r\n\r\n`,
    ));
    pieces.push(content, encoder.encode("\r\n"));
  }
  pieces.push(encoder.encode(`--${BOUNDARY}--\r\n`));
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

async function readAll(stream: ReadableStream<Uint8Array>) {
  const reader = new MultipartFormReader(stream, BOUNDARY);
  const parts: { name: string; content: Uint8Array }[] = [];
  for (;;) {
    const part = await reader.next();
    if (part === null) return parts;
    parts.push({
      name: part.name,
      content: new Uint8Array(await new Response(part.body).arrayBuffer()),
    });
  }
}

/** Contents made of bytes that resemble the delimiter: CR, LF, dashes, the boundary's letters. */
const content = fc.array(
  fc.oneof(
    fc.constantFrom(..."\r\n-gwb0undary".split("").map((c) => c.charCodeAt(0))),
    fc.integer({ min: 0, max: 255 }),
  ),
  { maxLength: 200 },
).map((bytes) => new Uint8Array(bytes));

Deno.test("issue 43: any chunking of any contents reads back the same parts", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ name: fc.constantFrom("operations", "map", "0", "1"), content }), {
        maxLength: 4,
      }),
      fc.array(fc.nat({ max: 2000 }), { maxLength: 30 }),
      async (parts, cuts) => {
        // A delimiter inside a part's content would end it early (senders pick a boundary
        // the content does not hold): such cases are not multipart bodies.
        const delimiter = `\r\n--${BOUNDARY}`;
        fc.pre(
          parts.every((p) => !new TextDecoder("latin1").decode(p.content).includes(delimiter)),
        );
        const read = await readAll(chunked(body(parts), cuts));
        assert.deepEqual(read, parts.map(({ name, content }) => ({ name, content })));
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("issue 43: a body cut short, or with a part without a name, is refused", async () => {
  const whole = body([{ name: "operations", content: encoder.encode("{}") }]);
  for (const cut of [3, 20, whole.length - 8]) {
    await assert.rejects(readAll(chunked(whole.slice(0, cut), [])), MalformedMultipart);
  }
  const nameless = encoder.encode(
    `--${BOUNDARY}\r\ncontent-type: text/plain\r\n\r\nx\r\n--${BOUNDARY}--`,
  );
  await assert.rejects(readAll(chunked(nameless, [])), /no Content-Disposition name/);
  const endless = encoder.encode(`--${BOUNDARY}\r\nx-long: ${"a".repeat(20_000)}`);
  await assert.rejects(readAll(chunked(endless, [100])), /headers exceed 16384 bytes/);
  // The same block whole in one chunk, its blank line included.
  const oneChunk = encoder.encode(`--${BOUNDARY}\r\nx-long: ${"a".repeat(20_000)}\r\n\r\nx`);
  await assert.rejects(readAll(chunked(oneChunk, [])), /headers exceed 16384 bytes/);
  // A body that breaks off (the client gone) is malformed, whatever the transport said.
  const head = encoder.encode(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="a"\r\n\r\nx`);
  let sent = false;
  const broken = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(new Error("connection reset by 10.0.0.7:4000"));
      sent = true;
      controller.enqueue(head);
    },
  });
  await assert.rejects(
    readAll(broken),
    (error: Error) => error instanceof MalformedMultipart && /broke off/.test(error.message),
  );
  // Transport padding after a delimiter is bounded (else each space waits for, and copies, more).
  const padded = (spaces: number) =>
    encoder.encode(
      `--${BOUNDARY}${
        " ".repeat(spaces)
      }\r\ncontent-disposition: form-data; name="a"\r\n\r\nx\r\n--${BOUNDARY}--`,
    );
  assert.equal((await readAll(chunked(padded(64), [10, 40]))).length, 1);
  await assert.rejects(readAll(chunked(padded(100_000), [10, 40])), /Malformed part delimiter/);
});
