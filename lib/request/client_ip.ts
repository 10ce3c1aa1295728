/**
 * The client's address behind proxies (`rate_limit.trusted_proxies`): the
 * peer of the connection, unless that peer is a trusted proxy; then
 * `X-Forwarded-For` is walked right to left, skipping trusted proxies, and
 * the first address that is not one is the client. A header anyone can send
 * is never believed from a peer that is not trusted. Pure.
 *
 * @module
 */

/**
 * The client connection's peer address as the router's own relay (the
 * connection guard) and worker forwarder pass it on over their private unix
 * sockets: the relay writes it right after each request line, so its value
 * comes first whatever the client sent; the forwarder replaces it. Believed
 * only on requests that came over such a socket ({@linkcode peerAddress}).
 */
export const PEER_HEADER = "x-gw-peer";

/**
 * The peer address of a request: the TCP peer when the router serves the
 * socket itself; over the router's own unix socket (relay, forwarder), the
 * first value of {@linkcode PEER_HEADER}; else null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { peerAddress } from "./client_ip.ts";
 * const tcp = { transport: "tcp" as const, hostname: "203.0.113.9", port: 5000 };
 * const spoofed = new Request("http://r/", { headers: { "x-gw-peer": "1.1.1.1" } });
 * assert.equal(peerAddress(tcp, spoofed), "203.0.113.9");
 * const relayed = new Request("http://r/", { headers: { "x-gw-peer": "198.51.100.4, 1.1.1.1" } });
 * assert.equal(peerAddress({ transport: "unix", path: "" }, relayed), "198.51.100.4");
 * ```
 * @param remote The connection's remote address (absent: unknown).
 * @param request The request.
 * @returns The peer's address, or null.
 */
export function peerAddress(remote: Deno.Addr | undefined, request: Request): string | null {
  if (remote === undefined) return null;
  if (remote.transport === "tcp" || remote.transport === "udp") return remote.hostname;
  if (remote.transport !== "unix") return null;
  const relayed = request.headers.get(PEER_HEADER);
  if (relayed === null) return null;
  const comma = relayed.indexOf(",");
  const first = (comma === -1 ? relayed : relayed.slice(0, comma)).trim();
  return parseIp(first) === null ? null : first;
}

/** A parsed CIDR block: address bytes (4 or 16) and prefix length. */
export interface Cidr {
  readonly bytes: Uint8Array;
  readonly prefix: number;
}

/**
 * Parses an IPv4 or IPv6 address (IPv4-mapped IPv6 is read as IPv4).
 * @param text The address, e.g. `10.0.0.1`, `::1`, `[::1]`.
 * @returns Its bytes (4 or 16), or null when it is not an address.
 */
export function parseIp(text: string): Uint8Array | null {
  let t = text.trim();
  if (t.startsWith("[") && t.endsWith("]")) t = t.slice(1, -1);
  if (t.includes(".") && !t.includes(":")) return parseIpv4(t);
  if (!t.includes(":")) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(t);
  if (mapped) return parseIpv4(mapped[1]!);
  return parseIpv6(t);
}

function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!;
    if (!/^\d{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseIpv6(text: string): Uint8Array | null {
  const zone = text.indexOf("%");
  const t = zone === -1 ? text : text.slice(0, zone);
  const halves = t.split("::");
  if (halves.length > 2) return null;
  const group = (s: string): number[] | null => {
    if (s === "") return [];
    const out: number[] = [];
    for (const g of s.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = group(halves[0]!);
  const tail = halves.length === 2 ? group(halves[1]!) : [];
  if (head === null || tail === null) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const words = [...head, ...new Array(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}

/**
 * Parses a CIDR block (`10.0.0.0/8`, `::1/128`) or a bare address (a /32 or /128).
 * @param text The block.
 * @returns The block, or null when unreadable.
 */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf("/");
  const bytes = parseIp(slash === -1 ? text : text.slice(0, slash));
  if (bytes === null) return null;
  const max = bytes.length * 8;
  if (slash === -1) return { bytes, prefix: max };
  const prefixText = text.slice(slash + 1).trim();
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  return prefix > max ? null : { bytes, prefix };
}

/**
 * Whether an address lies in a block (an IPv4 address never in an IPv6 block).
 * @param ip The address bytes.
 * @param cidr The block.
 * @returns True inside.
 */
export function inCidr(ip: Uint8Array, cidr: Cidr): boolean {
  if (ip.length !== cidr.bytes.length) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip[i]! & mask) !== (cidr.bytes[i]! & mask)) return false;
  }
  return true;
}

/**
 * The client's address: the peer, or (peer a trusted proxy) the right-most
 * `X-Forwarded-For` entry that is not a trusted proxy.
 *
 * @example A spoofed header from an untrusted peer is ignored
 * ```ts
 * import assert from "node:assert/strict";
 * import { clientIp, parseCidr } from "./client_ip.ts";
 * const trusted = [parseCidr("10.0.0.0/8")!];
 * assert.equal(clientIp("203.0.113.9", "1.2.3.4", trusted), "203.0.113.9");
 * assert.equal(clientIp("10.0.0.2", "1.2.3.4, 198.51.100.7, 10.0.0.3", trusted), "198.51.100.7");
 * ```
 * @param peer The connection's remote address (null when unknown).
 * @param forwardedFor The `X-Forwarded-For` value(s), joined with commas.
 * @param trusted The trusted proxies.
 * @returns The client's address (null when the peer is unknown).
 */
export function clientIp(
  peer: string | null,
  forwardedFor: string | null,
  trusted: readonly Cidr[],
): string | null {
  if (peer === null) return null;
  if (trusted.length === 0 || forwardedFor === null || !isTrusted(peer, trusted)) return peer;
  // Only the last MAX_FORWARDED_HOPS entries are read: the header is the client's to
  // lengthen (thousands of trusted-looking hops would each cost a parse).
  const hops = lastHops(forwardedFor, MAX_FORWARDED_HOPS);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!.trim();
    const bytes = parseIp(hop);
    // An unreadable hop ends the walk: whatever lies left of it is anyone's.
    if (bytes === null) return i === hops.length - 1 ? peer : hops[i + 1]!.trim();
    if (!trusted.some((cidr) => inCidr(bytes, cidr))) return hop;
  }
  // Every hop read is a trusted proxy: the left-most read is the best we know.
  return hops[0]!.trim() || peer;
}

/** The last `count` comma-separated entries of a header, in order, without reading the rest. */
function lastHops(value: string, count: number): string[] {
  const hops: string[] = [];
  let end = value.length;
  while (hops.length < count) {
    const comma = value.lastIndexOf(",", end - 1);
    hops.push(value.slice(comma + 1, end));
    if (comma < 0) break;
    end = comma;
  }
  return hops.reverse();
}

/** Proxies in front of the router, at most (entries further left are not read). */
export const MAX_FORWARDED_HOPS = 16;

function isTrusted(address: string, trusted: readonly Cidr[]): boolean {
  const bytes = parseIp(address);
  return bytes !== null && trusted.some((cidr) => inCidr(bytes, cidr));
}
