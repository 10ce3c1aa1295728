import assert from "node:assert/strict";
import fc from "fast-check";
import { readSubgraphBody } from "../../../lib/engine/fetch/subgraph_body.ts";

const OPTIONS = {
  limit: 1_000_000,
  tooLarge: () => new RangeError("too large"),
  notUtf8: () => new TypeError("not UTF-8"),
};

/** Bodies handed over whole beside their response, as the HTTP/1.1 pool does (`wholeBody`). */
const WHOLE = new WeakMap<Response, Uint8Array>();

/** Reads a response of `answers`, passing its whole body when it has one. */
function readBody(response: Response, options: typeof OPTIONS = OPTIONS): Promise<string> {
  const whole = WHOLE.get(response);
  return readSubgraphBody(response, whole === undefined ? options : { ...options, whole });
}

/**
 * The three ways a body is read: with a trusted Content-Length, streamed in two
 * chunks, and whole (its response has no body of its own: the bytes must come
 * from the option).
 */
function answers(bytes: Uint8Array): Response[] {
  const declared = new Response(bytes.slice(), {
    headers: { "content-length": String(bytes.length) },
  });
  const half = bytes.length >> 1;
  const streamed = new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, half));
        controller.enqueue(bytes.slice(half));
        controller.close();
      },
    }),
  );
  const whole = new Response(null);
  WHOLE.set(whole, bytes.slice());
  return [declared, streamed, whole];
}

/** The strict decoding, or null when the bytes are not UTF-8. */
function strict(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

async function read(response: Response): Promise<string | null> {
  try {
    return await readBody(response);
  } catch (error) {
    if (error instanceof TypeError && error.message === "not UTF-8") return null;
    throw error;
  }
}

Deno.test("subgraph body: a U+FFFD the subgraph sent is valid UTF-8 and kept", async () => {
  const bytes = new TextEncoder().encode('{"data":{"name":"a\uFFFDb"}}');
  for (const response of answers(bytes)) {
    assert.equal(await readBody(response), '{"data":{"name":"a\uFFFDb"}}');
  }
});

Deno.test("subgraph body: malformed UTF-8 is refused wherever it is, a U+FFFD sent beside it included", async () => {
  const encode = (text: string) => [...new TextEncoder().encode(text)];
  const cases = [
    [0xff],
    [0xc3], // a sequence cut short at the end
    [0xf0, 0x9f, 0x98], // cut short inside
    [0xed, 0xa0, 0x80], // a surrogate
    [0xc0, 0xaf], // an overlong "/"
    [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
  ];
  for (const bad of cases) {
    for (const bytes of [[...bad], [...encode('{"a":"\uFFFD'), ...bad, ...encode('"}')]]) {
      for (const response of answers(new Uint8Array(bytes))) {
        assert.equal(await read(response), null, JSON.stringify(bytes));
      }
    }
  }
});

Deno.test("subgraph body: a leading byte order mark is dropped as by the strict decoder", async () => {
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode("{}")]);
  for (const response of answers(bytes)) assert.equal(await read(response), "{}");
});

Deno.test("subgraph body: any bytes read as the strict decoder reads them (or are refused when it refuses them)", async () => {
  const text = fc.string({ unit: "binary" }).map((s) => [...new TextEncoder().encode(s)]);
  // Valid text with bytes changed, inserted or cut: mostly malformed, sometimes not.
  const damaged = fc.tuple(text, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }))))
    .map(([bytes, edits]) => {
      for (const [at, byte] of edits) {
        const i = bytes.length === 0 ? 0 : at % (bytes.length + 1);
        if (byte % 3 === 0) bytes.splice(i, 1);
        else if (byte % 3 === 1) bytes.splice(i, 0, byte);
        else bytes[i] = byte;
      }
      return bytes;
    });
  const arbitrary = fc.array(fc.integer({ min: 0, max: 255 }));
  await fc.assert(
    fc.asyncProperty(fc.oneof(text, damaged, arbitrary), async (list) => {
      const bytes = new Uint8Array(list);
      const expected = strict(bytes);
      for (const response of answers(bytes)) assert.equal(await read(response), expected);
    }),
    { numRuns: 500 },
  );
});

Deno.test("subgraph body: a whole body is held to the limit and charged to the budget before decoding", async () => {
  const bytes = new TextEncoder().encode('{"data":{}}');
  const [, , whole] = answers(bytes);
  await assert.rejects(readBody(whole!, { ...OPTIONS, limit: bytes.length - 1 }), /too large/);
  const reserved: number[] = [];
  const text = await readSubgraphBody(new Response(null), {
    ...OPTIONS,
    whole: bytes,
    reserve: (n) => void reserved.push(n),
  });
  assert.equal(text, '{"data":{}}');
  assert.deepEqual(reserved, [bytes.length]);
});
