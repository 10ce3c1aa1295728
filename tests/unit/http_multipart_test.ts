import assert from "node:assert/strict";
import { multipartBody } from "../../lib/http/multipart.ts";
import { acceptsIncremental } from "../../lib/http/_media.ts";

Deno.test("issue 31: a part is complete (delimiter after it) before the next part is produced", async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  async function* parts() {
    yield '{"data":{},"hasNext":true}';
    await gate;
    yield '{"hasNext":false}';
  }
  const reader = multipartBody(parts()).getReader();
  const decoder = new TextDecoder();
  const first = decoder.decode((await reader.read()).value);
  assert.equal(
    first,
    '\r\n---\r\ncontent-type: application/json; charset=utf-8\r\n\r\n{"data":{},"hasNext":true}\r\n---',
  );
  release();
  let rest = "";
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    rest += decoder.decode(r.value);
  }
  assert.equal(
    rest,
    '\r\ncontent-type: application/json; charset=utf-8\r\n\r\n{"hasNext":false}\r\n-----\r\n',
  );
});

Deno.test("issue 31: a producer failing mid-stream ends the body with the part onError gives", async () => {
  async function* parts(): AsyncGenerator<string> {
    yield "1";
    throw new Error("boom");
  }
  const text = await new Response(multipartBody(parts(), { onError: () => '{"hasNext":false}' }))
    .text();
  assert.ok(text.endsWith('\r\n\r\n{"hasNext":false}\r\n-----\r\n'), text);
});

Deno.test("issue 31: a cancelled body returns the producer (its finally runs)", async () => {
  let closed = false;
  async function* parts() {
    try {
      yield "1";
      yield "2";
    } finally {
      closed = true;
    }
  }
  const reader = multipartBody(parts()).getReader();
  await reader.read();
  await reader.cancel();
  assert.equal(closed, true);
});

Deno.test("issue 31: Accept allows deferred parts only for multipart/mixed with q > 0 and deferSpec 20220824 (or none)", () => {
  assert.equal(acceptsIncremental("multipart/mixed;deferSpec=20220824,application/json"), true);
  assert.equal(acceptsIncremental('multipart/mixed; deferSpec="20220824"'), true);
  assert.equal(acceptsIncremental("multipart/mixed"), true);
  assert.equal(acceptsIncremental("multipart/mixed;deferSpec=99990101"), false);
  assert.equal(acceptsIncremental("multipart/mixed;q=0"), false);
  assert.equal(acceptsIncremental("application/json, */*"), false);
  assert.equal(acceptsIncremental(null), false);
});
