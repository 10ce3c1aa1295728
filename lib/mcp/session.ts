/**
 * Signed, stateless `Mcp-Session-Id`s: `v1.<issued>.<nonce>.<mac>` where the
 * HMAC-SHA256 covers the id's fields plus the token's issuer and subject, so
 * any replica with the same secret accepts it and a token of another subject
 * fails the MAC (404, "session not found"). Auth is never stored in a session.
 *
 * A signed id cannot be revoked without state: DELETE records the id in a small
 * in-process {@linkcode SessionRevocations} set until the id would expire
 * anyway ({@linkcode SESSION_MAX_AGE_MS}). Other replicas keep accepting it
 * until then.
 *
 * @module
 */

/** Sessions expire this long after `initialize` (the client then re-initializes). */
export const SESSION_MAX_AGE_MS = 24 * 60 * 60 * 1000;

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Imports the HMAC key for session ids.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { importSessionKey } from "./session.ts";
 * const key = await importSessionKey("0123456789abcdef0123456789abcdef");
 * assert.equal(key.algorithm.name, "HMAC");
 * ```
 * @param secret The secret text, or raw bytes.
 * @returns The key.
 */
export function importSessionKey(secret: string | Uint8Array): Promise<CryptoKey> {
  const raw = typeof secret === "string" ? encoder.encode(secret) : secret;
  return crypto.subtle.importKey(
    "raw",
    raw as Uint8Array<ArrayBuffer>,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
}

/** Who a session belongs to. */
export interface SessionSubject {
  readonly issuer: string;
  readonly subject: string;
}

async function mac(key: CryptoKey, body: string, who: SessionSubject): Promise<string> {
  const data = encoder.encode(`${body}\n${who.issuer}\n${who.subject}`);
  return base64url(new Uint8Array(await crypto.subtle.sign("HMAC", key, data)));
}

/**
 * Issues a session id bound to a subject.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { importSessionKey, issueSessionId, verifySessionId } from "./session.ts";
 * const key = await importSessionKey("0123456789abcdef0123456789abcdef");
 * const alice = { issuer: "idp", subject: "alice" };
 * const id = await issueSessionId(key, alice, { now: 1000 });
 * assert.equal(await verifySessionId(key, id, alice, { now: 2000 }), true);
 * assert.equal(await verifySessionId(key, id, { issuer: "idp", subject: "bob" }, { now: 2000 }), false);
 * ```
 * @param key The HMAC key.
 * @param who Token issuer and subject (empty strings without OAuth).
 * @param options `now` in milliseconds.
 * @returns The id (visible ASCII only).
 */
export async function issueSessionId(
  key: CryptoKey,
  who: SessionSubject,
  options: { readonly now: number },
): Promise<string> {
  const nonce = base64url(crypto.getRandomValues(new Uint8Array(16)));
  const body = `v1.${options.now.toString(36)}.${nonce}`;
  return `${body}.${await mac(key, body, who)}`;
}

/**
 * Verifies a session id: well-formed, not expired, MAC valid for this subject.
 * @param key The HMAC key.
 * @param id The `Mcp-Session-Id` value.
 * @param who The current token's issuer and subject.
 * @param options `now` in milliseconds.
 * @returns True when the session is valid for this subject.
 */
export async function verifySessionId(
  key: CryptoKey,
  id: string,
  who: SessionSubject,
  options: { readonly now: number },
): Promise<boolean> {
  if (id.length > 200) return false;
  const parts = id.split(".");
  if (parts.length !== 4 || parts[0] !== "v1") return false;
  const issued = parseInt(parts[1]!, 36);
  if (!Number.isFinite(issued) || options.now - issued > SESSION_MAX_AGE_MS) return false;
  const expected = await mac(key, `${parts[0]}.${parts[1]}.${parts[2]}`, who);
  // Constant-time comparison of equal-length ASCII strings.
  const given = parts[3]!;
  if (given.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < given.length; i++) diff |= given.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
}

/**
 * Ids ended by DELETE, each kept until it would have expired anyway; bounded
 * (oldest dropped first beyond `maxEntries`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SessionRevocations } from "./session.ts";
 * const revoked = new SessionRevocations();
 * revoked.add("v1.a.b.c", { now: 0 });
 * assert.equal(revoked.has("v1.a.b.c", { now: 1 }), true);
 * ```
 */
export class SessionRevocations {
  #entries = new Map<string, number>();
  readonly #maxEntries: number;

  /** @param options `maxEntries` (default 100000). */
  constructor(options: { readonly maxEntries?: number } = {}) {
    this.#maxEntries = options.maxEntries ?? 100_000;
  }

  /**
   * Shares the ended ids of the previous state's set (a reload builds a new
   * MCP state; without this, every session ended before it was valid again).
   * Both sets then read and write one table, so a request still running on
   * the old state ends its session for the new one too.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SessionRevocations } from "./session.ts";
   * const before = new SessionRevocations();
   * before.add("v1.a.b.c", { now: 0 });
   * const after = new SessionRevocations();
   * after.adopt(before);
   * assert.equal(after.has("v1.a.b.c", { now: 1 }), true);
   * ```
   * @param previous The set of the state being replaced.
   */
  adopt(previous: SessionRevocations): void {
    if (previous !== this) this.#entries = previous.#entries;
  }

  /**
   * Records an ended session.
   * @param id The session id.
   * @param options `now` in milliseconds.
   */
  add(id: string, options: { readonly now: number }): void {
    for (const [old, expires] of this.#entries) {
      if (expires > options.now && this.#entries.size < this.#maxEntries) break;
      this.#entries.delete(old);
    }
    this.#entries.set(id, options.now + SESSION_MAX_AGE_MS);
  }

  /**
   * Tells whether a session was ended.
   * @param id The session id.
   * @param options `now` in milliseconds.
   * @returns True when ended and not yet expired.
   */
  has(id: string, options: { readonly now: number }): boolean {
    const expires = this.#entries.get(id);
    return expires !== undefined && expires > options.now;
  }
}
