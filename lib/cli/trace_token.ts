/**
 * The `trace-token` subcommand: mints an ART request token (`X-GW-Token`) with
 * a PKCS8 PEM ES256 private key, or writes a fresh key pair. Self-hosted
 * routers need no control plane: put the public key in
 * `engine.request_tracing_public_key_file`, keep the private key for this
 * command.
 *
 * ```
 * gw-router trace-token --key trace_private.pem [--ttl 1h] [--iss X] [--aud Y]
 * gw-router trace-token --generate-key --out DIR
 * ```
 *
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { generateTraceKeyPair, mintTraceToken } from "../trace/mod.ts";
import type { CommandOptions } from "./types.ts";

const USAGE = `Usage:
  gw-router trace-token --key FILE [--ttl 1h] [--iss ISSUER] [--aud AUDIENCE]
      Print an ART request token (send it as X-GW-Token) signed with the PKCS8
      PEM ES256 private key FILE, valid for --ttl (s, m, h, d; default 1h).
  gw-router trace-token --generate-key --out DIR
      Write DIR/trace_private.pem (PKCS8) and DIR/trace_public.pem (SPKI, for
      engine.request_tracing_public_key_file).`;

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 };

/**
 * Parses a lifetime: a number of seconds, or number+unit parts (`90s`, `15m`,
 * `1h30m`, `7d`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTtl } from "./trace_token.ts";
 * assert.equal(parseTtl("1h"), 3600);
 * assert.equal(parseTtl("1h30m"), 5400);
 * assert.equal(parseTtl("45"), 45);
 * assert.throws(() => parseTtl("soon"), RangeError);
 * ```
 *
 * @param text The `--ttl` value.
 * @returns Seconds (a positive integer).
 * @throws {RangeError} When the text is not a positive duration.
 */
export function parseTtl(text: string): number {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const seconds = Number(trimmed);
    if (seconds > 0) return seconds;
  } else if (/^(\d+[smhd])+$/.test(trimmed)) {
    let seconds = 0;
    for (const [, amount, unit] of trimmed.matchAll(/(\d+)([smhd])/g)) {
      seconds += Number(amount) * (UNIT_SECONDS[unit ?? "s"] ?? 1);
    }
    if (seconds > 0) return seconds;
  }
  throw new RangeError(`Cannot read --ttl "${text}": expected a duration like 90s, 15m, 1h or 7d`);
}

/**
 * Runs `trace-token`.
 * @param args Command-line arguments after the subcommand.
 * @param _options Shared options.
 * @returns The exit code (0 done, 2 usage error, 1 failure).
 */
export async function traceTokenCommand(args: string[], _options: CommandOptions): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        key: { type: "string" },
        ttl: { type: "string", default: "1h" },
        iss: { type: "string" },
        aud: { type: "string" },
        "generate-key": { type: "boolean", default: false },
        out: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`trace-token: ${error instanceof Error ? error.message : String(error)}`);
    console.error(USAGE);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values["generate-key"]) {
    if (values.out === undefined) {
      console.error("trace-token: --generate-key needs --out DIR");
      return 2;
    }
    const pair = await generateTraceKeyPair();
    await Deno.mkdir(values.out, { recursive: true });
    const privatePath = join(values.out, "trace_private.pem");
    const publicPath = join(values.out, "trace_public.pem");
    await Deno.writeTextFile(privatePath, pair.privateKeyPem, { mode: 0o600 });
    await Deno.writeTextFile(publicPath, pair.publicKeyPem);
    console.log(`Wrote ${privatePath} (keep it secret) and ${publicPath}`);
    console.log(`Set engine.request_tracing_public_key_file: ${publicPath}`);
    return 0;
  }
  if (values.key === undefined) {
    console.error("trace-token: --key FILE (a PKCS8 PEM ES256 private key) is required");
    console.error(USAGE);
    return 2;
  }
  let ttlSeconds: number;
  try {
    ttlSeconds = parseTtl(values.ttl);
  } catch (error) {
    console.error(`trace-token: ${(error as Error).message}`);
    return 2;
  }
  let pem: string;
  try {
    pem = await Deno.readTextFile(values.key);
  } catch (error) {
    console.error(`trace-token: cannot read --key "${values.key}": ${(error as Error).message}`);
    return 1;
  }
  try {
    const token = await mintTraceToken(pem, {
      ttlSeconds,
      ...(values.iss ? { issuer: values.iss } : {}),
      ...(values.aud ? { audience: values.aud } : {}),
    });
    console.log(token);
    return 0;
  } catch (error) {
    console.error(`trace-token: --key "${values.key}": ${(error as Error).message}`);
    return 1;
  }
}
