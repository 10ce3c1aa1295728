/**
 * Strict UTF-8 for query strings: `URLSearchParams` replaces a percent-encoded
 * byte sequence that is not UTF-8 (`%FF`) with U+FFFD, so a GET would run with
 * values the client never sent. Bodies are decoded strictly (`fatal`); this
 * holds query strings to the same rule.
 *
 * @module
 */

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

function hexAt(text: string, index: number): number {
  const c = text.charCodeAt(index);
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/**
 * Whether a URL's query string percent-decodes to valid UTF-8 (a `%` not
 * followed by two hex digits stays literal, as in `URLSearchParams`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isUtf8QueryString } from "./query_string.ts";
 * assert.equal(isUtf8QueryString("?query=%7B%20a%20%7D&v=%C3%A9"), true);
 * assert.equal(isUtf8QueryString("?v=100%25&w=%zz"), true);
 * assert.equal(isUtf8QueryString("?v=%FF"), false);
 * assert.equal(isUtf8QueryString("?v=%C3"), false);
 * ```
 * @param search The query string (`URL.search`, with or without `?`).
 * @returns False when a percent-encoded sequence is not UTF-8.
 */
export function isUtf8QueryString(search: string): boolean {
  // The URL parser percent-encodes every non-ASCII character: only escapes can be invalid.
  if (!search.includes("%")) return true;
  const bytes = new Uint8Array(search.length);
  let length = 0;
  for (let i = 0; i < search.length; i++) {
    const c = search.charCodeAt(i);
    const high = c === 0x25 ? hexAt(search, i + 1) : -1;
    const low = high >= 0 ? hexAt(search, i + 2) : -1;
    if (low >= 0) {
      bytes[length++] = high * 16 + low;
      i += 2;
    } else {
      // Any other character is whole: an ASCII byte stands for it.
      bytes[length++] = c < 0x80 ? c : 0x20;
    }
  }
  try {
    STRICT_UTF8.decode(bytes.subarray(0, length));
    return true;
  } catch {
    return false;
  }
}
