/**
 * Deadlines of the streaming e2e tests (issue 39): every read of a stream, and
 * every wait for a client's callback, is raced with a timer, so a regression
 * (an end that never comes, an event never delivered) fails the test with
 * what it waited for instead of hanging the suite.
 *
 * The deadlines are generous (a loaded CI machine); what they bound is a
 * stream that never ends or an event that never comes.
 *
 * @module
 */

/**
 * The default wait for something a stream must deliver (an event, its end): a minute, since a
 * niced test on a loaded 2-core machine was seen to stall for 20 s.
 */
export const STREAM_DEADLINE_MS = 60_000;

/**
 * The longest a whole test with a running router may take before it is failed
 * (the fixtures' safety net: a wait the test did not bound itself).
 */
export const TEST_DEADLINE_MS = 180_000;

/**
 * Races a promise with a deadline.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { within } from "./_deadline.ts";
 * assert.equal(await within(Promise.resolve(1), "one"), 1);
 * await assert.rejects(within(new Promise(() => {}), "never", 5), /never: nothing within 5 ms/);
 * ```
 * @param promise What is awaited.
 * @param what What it is (the error names it).
 * @param ms The deadline (default {@linkcode STREAM_DEADLINE_MS}).
 * @returns The promise's value.
 * @throws {Error} `<what>: nothing within <ms> ms` past the deadline.
 */
export function within<T>(promise: Promise<T>, what: string, ms = STREAM_DEADLINE_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * A streamed response's whole text, read within a deadline; past it, the body
 * is cancelled (the stream is left) and the read fails naming `what`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { textWithin } from "./_deadline.ts";
 * assert.equal(await textWithin(new Response("done"), "the body"), "done");
 * const never = new Response(new ReadableStream({ start() {} }));
 * await assert.rejects(textWithin(never, "the end", 5), /the end: nothing within 5 ms/);
 * ```
 * @param response The response.
 * @param what What its end is (the error names it).
 * @param ms The deadline (default {@linkcode STREAM_DEADLINE_MS}).
 * @returns The text.
 */
export async function textWithin(
  response: Response,
  what: string,
  ms = STREAM_DEADLINE_MS,
): Promise<string> {
  if (response.body === null) return "";
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const read = async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text;
      text += value;
    }
  };
  try {
    return await within(read(), what, ms);
  } catch (error) {
    await reader.cancel().catch(() => {});
    throw error;
  }
}
