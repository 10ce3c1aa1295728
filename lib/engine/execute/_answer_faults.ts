/**
 * The errors of a subgraph answer that is no GraphQL response (issue 34),
 * each saying which way: an empty body, text that is not JSON (and where it
 * goes wrong: V8's `SyntaxError` names a position only for some mistakes and
 * quotes the text for others, and a subgraph's text is not for clients), JSON
 * that is not an object, an object with neither `data` nor `errors`. Pure.
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import { isObject } from "./_data.ts";

const enum Expect {
  /** A value. */
  Value,
  /** A value or `]` (after `[`). */
  ValueOrClose,
  /** A key or `}` (after `{`). */
  KeyOrClose,
  /** A key (after `,` in an object). */
  Key,
  /** `:` after a key. */
  Colon,
  /** `,`, a closing bracket or the end. */
  After,
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/** The end of the string starting at `i` (its opening quote), or the offset of its first fault. */
function stringEnd(text: string, i: number): { readonly end: number; readonly ok: boolean } {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) return { end: j + 1, ok: true };
    if (c < 0x20) return { end: j, ok: false };
    if (c === 0x5c) {
      ESCAPE.lastIndex = j;
      if (!ESCAPE.test(text)) return { end: j, ok: false };
      j = ESCAPE.lastIndex - 1;
    }
  }
  return { end: text.length, ok: false };
}

/** The end of the scalar starting at `i`, or -1 when none starts there. */
function scalarEnd(text: string, i: number): number {
  for (const literal of ["true", "false", "null"]) {
    if (text.startsWith(literal, i)) return i + literal.length;
  }
  NUMBER.lastIndex = i;
  return NUMBER.test(text) ? NUMBER.lastIndex : -1;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The offset of the first character that makes `text` not JSON (its length
 * when the text ends too early), or -1 when it is JSON.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonErrorOffset } from "./_answer_faults.ts";
 * assert.equal(jsonErrorOffset('{"data":{}}'), -1);
 * assert.equal(jsonErrorOffset("<html>"), 0);
 * assert.equal(jsonErrorOffset('{"data": tru}'), 9);
 * assert.equal(jsonErrorOffset('{"data":{}'), 10);
 * assert.equal(jsonErrorOffset('{"a":1}x'), 7);
 * ```
 * @param text The text.
 * @returns The offset, or -1.
 */
export function jsonErrorOffset(text: string): number {
  /** Open containers: true for an object. */
  const open: boolean[] = [];
  let expect = Expect.Value;
  let i = 0;
  while (true) {
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (i === text.length) return expect === Expect.After && open.length === 0 ? -1 : i;
    const c = text[i];
    switch (expect) {
      case Expect.ValueOrClose:
      case Expect.Value: {
        if (c === "]" && expect === Expect.ValueOrClose) {
          open.pop();
          i++;
          expect = Expect.After;
        } else if (c === "{") {
          open.push(true);
          i++;
          expect = Expect.KeyOrClose;
        } else if (c === "[") {
          open.push(false);
          i++;
          expect = Expect.ValueOrClose;
        } else if (c === '"') {
          const s = stringEnd(text, i);
          if (!s.ok) return s.end;
          i = s.end;
          expect = Expect.After;
        } else {
          const end = scalarEnd(text, i);
          if (end < 0) return i;
          i = end;
          expect = Expect.After;
        }
        break;
      }
      case Expect.KeyOrClose:
      case Expect.Key: {
        if (c === "}" && expect === Expect.KeyOrClose) {
          open.pop();
          i++;
          expect = Expect.After;
        } else if (c === '"') {
          const s = stringEnd(text, i);
          if (!s.ok) return s.end;
          i = s.end;
          expect = Expect.Colon;
        } else return i;
        break;
      }
      case Expect.Colon: {
        if (c !== ":") return i;
        i++;
        expect = Expect.Value;
        break;
      }
      case Expect.After: {
        if (open.length === 0) return i;
        const object = open[open.length - 1]!;
        if (c === ",") expect = object ? Expect.Key : Expect.Value;
        else if (c === (object ? "}" : "]")) open.pop();
        else return i;
        i++;
        break;
      }
    }
  }
}

/**
 * What {@linkcode parseOnce} gives for JSON whose large integers could not be
 * kept exact: nested deeper than `JSON.parse`'s reviver recurses (~4 000
 * levels; the plain parse has no such limit, but would round them).
 */
export const TOO_DEEP: unknown = Object.freeze({ tooDeep: true });

/** The parse of an answer whose body is not JSON. */
export const NOT_JSON: unknown = Object.freeze({ notJson: true });

/**
 * The error of an answer that is no GraphQL response, saying which way (issue
 * 34): an empty body, text that is not JSON (where it goes wrong), JSON that
 * is not an object, or an object with neither `data` nor `errors`; each names
 * the status, and never quotes the body.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { NOT_JSON, notGraphQL } from "./_answer_faults.ts";
 * const error = notGraphQL("a", { status: 502, body: "<html>" }, NOT_JSON);
 * assert.equal(error.message, 'The subgraph "a" answered HTTP 502 with a body that is not JSON (invalid at position 0)');
 * assert.equal(error.extensions?.statusCode, 502);
 * ```
 * @param subgraph The subgraph's name.
 * @param response Its status and body.
 * @param payload The parse: {@linkcode NOT_JSON}, {@linkcode TOO_DEEP} or the value.
 * @returns The error.
 */
export function notGraphQL(
  subgraph: string,
  response: { readonly status: number; readonly body: string },
  payload: unknown,
): GraphQLFormattedError {
  const status = response.status;
  const answered = `The subgraph "${subgraph}" answered HTTP ${status}`;
  let message: string;
  if (payload === TOO_DEEP) {
    message =
      `The subgraph "${subgraph}" answered JSON nested too deeply to read with its integers beyond 2^53 exact`;
  } else if (payload === NOT_JSON) {
    message = response.body.trim() === ""
      ? `${answered} with an empty body`
      : `${answered} with a body that is not JSON (invalid at position ${
        jsonErrorOffset(response.body)
      })`;
  } else if (!isObject(payload)) {
    message = `${answered} with JSON that is not an object, not a GraphQL response`;
  } else {
    message = `${answered} with a JSON object holding neither "data" nor "errors"`;
  }
  const failed = status < 200 || status > 299;
  return {
    message,
    extensions: {
      code: "SUBGRAPH_ERROR",
      serviceName: subgraph,
      ...(failed ? { statusCode: status } : {}),
    },
  };
}
