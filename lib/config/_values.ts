/**
 * Scalar readers shared by YAML and env input: durations, sizes, booleans,
 * lists, listen addresses. Each returns the value or `undefined` (the caller
 * names the key in its error).
 *
 * @module
 */
import { MAX_TIMER_DELAY_MS } from "../timers.ts";

const DURATION_UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * Reads `1m`, `30s`, `500ms`, `1h30m` or a bare number of milliseconds, up to
 * {@linkcode MAX_TIMER_DELAY_MS} (a longer timer would fire at once, so every
 * deadline would expire immediately).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDuration } from "./_values.ts";
 * assert.equal(parseDuration("1h30m"), 5_400_000);
 * assert.equal(parseDuration("30d"), undefined);
 * assert.equal(parseDuration("9999999999s"), undefined);
 * ```
 * @param text The text.
 * @returns Milliseconds, or undefined when malformed or too long.
 */
export function parseDuration(text: string): number | undefined {
  const value = parseMilliseconds(text.trim());
  return value !== undefined && value <= MAX_TIMER_DELAY_MS ? value : undefined;
}

function parseMilliseconds(trimmed: string): number | undefined {
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(match[1]) * (DURATION_UNITS[match[2] ?? ""] ?? 0);
  }
  return Math.round(total);
}

const SIZE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

/**
 * Reads `5MB` (10^6), `512KiB` (2^10), `100` (bytes).
 * @param text The text.
 * @returns Bytes, or undefined when malformed or past 2^53 − 1 (no exact count).
 */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([a-zA-Z]*)$/.exec(text.trim());
  if (!match) return undefined;
  const unit = SIZE_UNITS[(match[2] ?? "").toLowerCase() || "b"];
  if (unit === undefined) return undefined;
  const bytes = Math.round(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/**
 * Reads `true` / `false` (any case).
 * @param text The text.
 * @returns The boolean, or undefined.
 */
export function parseBoolean(text: string): boolean | undefined {
  const lower = text.trim().toLowerCase();
  return lower === "true" ? true : lower === "false" ? false : undefined;
}

/**
 * Splits an env list on commas and whitespace, dropping empty items.
 * @param text The text.
 * @returns The items.
 */
export function splitList(text: string): string[] {
  return text.split(/[\s,]+/).filter((item) => item !== "");
}

/** A listen address split into its parts. */
export interface ListenAddress {
  /** Host name or IP (IPv6 without brackets); `0.0.0.0` when empty. */
  readonly hostname: string;
  /** Port; 0 means any free port. */
  readonly port: number;
}

/**
 * Reads `host:port` (`localhost:3002`, `127.0.0.1:0`, `[::1]:8080`, `:3002`).
 * @param text The address.
 * @returns The parts, or undefined when malformed.
 */
export function parseListenAddr(text: string): ListenAddress | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]*):(\d{1,5})$/.exec(text);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port > 65535) return undefined;
  const host = match[1] ?? "";
  const hostname = host === "" ? "0.0.0.0" : host.replace(/^\[|\]$/g, "");
  return { hostname, port };
}

/**
 * True for an address that binds every interface (`0.0.0.0`, `::`).
 * @param hostname The listen host.
 * @returns Whether it is a wildcard.
 */
export function isWildcardHost(hostname: string): boolean {
  return hostname === "0.0.0.0" || hostname === "::" || hostname === "";
}

/**
 * The base URL clients use for a listen address: a wildcard (`0.0.0.0`, `::`)
 * becomes the machine's name when one is given, else `localhost`; IPv6 goes in
 * brackets.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { listenUrl } from "./_values.ts";
 * assert.equal(listenUrl({ hostname: "0.0.0.0", port: 3002 }), "http://localhost:3002");
 * assert.equal(listenUrl({ hostname: "0.0.0.0", port: 3002 }, "vm1"), "http://vm1:3002");
 * assert.equal(listenUrl({ hostname: "::1", port: 8080 }, "vm1"), "http://[::1]:8080");
 * ```
 * @param address The listen address.
 * @param machine The machine's name, for a wildcard address.
 * @returns `http://host:port`.
 */
export function listenUrl(address: ListenAddress, machine?: string): string {
  const { hostname, port } = address;
  const host = isWildcardHost(hostname)
    ? (machine || "localhost")
    : hostname.includes(":")
    ? `[${hostname}]`
    : hostname;
  return `http://${host}:${port}`;
}

/**
 * A listener URL with the scheme its listener speaks: `https:` when it serves
 * TLS (`tls.server`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { withScheme } from "./_values.ts";
 * assert.equal(withScheme("http://vm1:443", true), "https://vm1:443");
 * assert.equal(withScheme("http://vm1:80", false), "http://vm1:80");
 * ```
 * @param url A `listenUrl` result.
 * @param secure Whether the listener serves TLS.
 * @returns The URL.
 */
export function withScheme(url: string, secure: boolean): string {
  return secure ? url.replace(/^http:/, "https:") : url;
}
