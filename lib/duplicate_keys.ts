/**
 * Duplicate member names in JSON text (JSON.parse keeps the last one
 * silently, other parsers the first: a GraphQL request or a Connect message
 * must not be ambiguous to the proxies in front). One iterative pass.
 *
 * @module
 */

interface Frame {
  readonly keys: Set<string> | null; // null: an array
  expectKey: boolean;
}

/**
 * The first member name that appears twice in one object of valid JSON text,
 * with the path of the object (`$.a.b`), or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { findDuplicateKey } from "./duplicate_keys.ts";
 * assert.deepEqual(findDuplicateKey('{"a": 1, "b": {"c": 1, "c": 2}}'), { key: "c", at: "$.b" });
 * assert.equal(findDuplicateKey('{"a": ["a", "a"], "b": {"a": 1}}'), null);
 * assert.deepEqual(findDuplicateKey('{"\\u0061": 1, "a": 2}'), { key: "a", at: "$" });
 * ```
 * @param text JSON text that `JSON.parse` accepts.
 * @returns The duplicate and where, or null.
 */
export function findDuplicateKey(text: string): { key: string; at: string } | null {
  const stack: Frame[] = [];
  const names: string[] = [];
  let lastKey = "";
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) { // "
      const start = i;
      i = closingQuote(text, start);
      const top = stack[stack.length - 1];
      if (top?.keys && top.expectKey) {
        const raw = text.slice(start + 1, i);
        const key = raw.includes("\\") ? JSON.parse(text.slice(start, i + 1)) as string : raw;
        if (top.keys.has(key)) return { key, at: ["$", ...names].join(".") };
        top.keys.add(key);
        top.expectKey = false;
        lastKey = key;
      }
    } else if (c === 0x7b) { // {
      const top = stack[stack.length - 1];
      if (top !== undefined) names.push(top.keys ? lastKey : "[]");
      stack.push({ keys: new Set(), expectKey: true });
    } else if (c === 0x5b) { // [
      const top = stack[stack.length - 1];
      if (top !== undefined) names.push(top.keys ? lastKey : "[]");
      stack.push({ keys: null, expectKey: false });
    } else if (c === 0x7d || c === 0x5d) { // } ]
      stack.pop();
      if (stack.length > 0) names.pop();
    } else if (c === 0x2c) { // ,
      const top = stack[stack.length - 1];
      if (top?.keys) top.expectKey = true;
    }
  }
  return null;
}

/**
 * The index of the quote closing the string opened at `start` (the text's length when
 * none): found with `indexOf` (a long query string is the usual body), skipping quotes
 * escaped by an odd run of backslashes.
 */
function closingQuote(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}
