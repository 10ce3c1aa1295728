/**
 * The listener's certificate (`tls.server`): its PEM files read and checked
 * before they serve — a certificate that does not parse, a key that is not its
 * key, a certificate past its end are refused with the key that named them; a
 * certificate that ends within {@linkcode EXPIRY_WARNING_DAYS} days is served
 * with a warning. {@linkcode checkServerTls} is pure; {@linkcode readServerTls}
 * reads the files.
 *
 * @module
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { dirname, resolve } from "node:path";
import type { TlsServerConfig } from "../config/mod.ts";
import { describeError, RouterError } from "../errors.ts";
import type { Logger } from "../log/mod.ts";
import { readKeyFile } from "../config/mod.ts";

/** A certificate ending within this many days is served with a warning. */
export const EXPIRY_WARNING_DAYS = 30;

const DAY_MS = 86_400_000;

/** The protocols the listener offers by ALPN, preferred first. */
export const ALPN_PROTOCOLS: readonly string[] = ["h2", "http/1.1"];

/** A checked certificate, ready to serve. */
export interface ServerTls {
  /** The certificate and its chain (PEM). */
  readonly cert: string;
  /** Its private key (PEM). */
  readonly key: string;
  /** Authorities of client certificates (PEM); null: none asked for. */
  readonly clientCa: string | null;
  /** The certificate's subject (`CN=router.example.com`). */
  readonly subject: string;
  /** When the certificate ends. */
  readonly notAfter: Date;
  /** Whole days until then (negative: ended). */
  readonly daysLeft: number;
  /** SHA-256 fingerprint of the certificate (`AB:CD:…`): what a reload log names. */
  readonly fingerprint: string;
  /** Offer HTTP/2 by ALPN (`tls.server.http2`; fixed at start). */
  readonly http2: boolean;
}

/** The PEM texts of `tls.server`'s files. */
export interface ServerTlsPems {
  /** `cert_file`'s text. */
  readonly cert: string;
  /** `key_file`'s text. */
  readonly key: string;
  /** `client_ca_file`'s text, or null. */
  readonly clientCa: string | null;
  /** `http2`. @default {true} */
  readonly http2?: boolean;
}

function invalid(key: string, message: string, cause?: unknown): RouterError {
  return new RouterError("CONFIG_INVALID", `"tls.server.${key}": ${message}`, {
    ...(cause === undefined ? {} : { cause }),
    details: { path: `tls.server.${key}` },
  });
}

/**
 * Checks the listener's PEM texts: the certificate parses, the key parses and
 * is the certificate's, the certificate has not ended, the client authorities
 * parse. Pure.
 *
 * @example A key that is not the certificate's is refused
 * ```ts ignore
 * import assert from "node:assert/strict";
 * import { checkServerTls } from "./server_tls.ts";
 * assert.throws(() => checkServerTls({ cert: certA, key: keyB, clientCa: null }, new Date()), /does not match/);
 * ```
 * @param pems The files' texts.
 * @param now The clock.
 * @returns The checked certificate.
 * @throws {RouterError} `CONFIG_INVALID` naming the key (`tls.server.key_file`) that is wrong.
 */
export function checkServerTls(pems: ServerTlsPems, now: Date): ServerTls {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pems.cert);
  } catch (error) {
    throw invalid("cert_file", `not a PEM certificate (${(error as Error).message})`, error);
  }
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(pems.key);
  } catch (error) {
    throw invalid("key_file", `not a PEM private key (${(error as Error).message})`, error);
  }
  if (!certificate.checkPrivateKey(key)) {
    throw invalid(
      "key_file",
      `does not match the certificate of "tls.server.cert_file" (${certificate.subject})`,
    );
  }
  const notAfter = new Date(certificate.validTo);
  const daysLeft = Math.floor((notAfter.getTime() - now.getTime()) / DAY_MS);
  if (notAfter.getTime() <= now.getTime()) {
    throw invalid(
      "cert_file",
      `the certificate (${certificate.subject}) expired on ${notAfter.toISOString()}, ${
        Math.floor((now.getTime() - notAfter.getTime()) / DAY_MS)
      } day(s) ago`,
    );
  }
  if (pems.clientCa !== null) {
    try {
      new X509Certificate(pems.clientCa);
    } catch (error) {
      throw invalid(
        "client_ca_file",
        `not a PEM certificate (${(error as Error).message})`,
        error,
      );
    }
  }
  return {
    cert: pems.cert,
    key: pems.key,
    clientCa: pems.clientCa,
    subject: certificate.subject,
    notAfter,
    daysLeft,
    fingerprint: certificate.fingerprint256,
    http2: pems.http2 ?? true,
  };
}

/**
 * Reads and checks `tls.server`'s files.
 * @param config `tls.server`.
 * @param now The clock (tests).
 * @returns The certificate, or null when `cert_file` is empty (plain HTTP).
 * @throws {RouterError} `CONFIG_INVALID` naming the key whose file is missing or wrong.
 */
export async function readServerTls(
  config: TlsServerConfig,
  now: Date = new Date(),
): Promise<ServerTls | null> {
  if (config.cert_file === "") return null;
  const [cert, key, clientCa] = await Promise.all([
    readKeyFile("tls.server.cert_file", config.cert_file),
    readKeyFile("tls.server.key_file", config.key_file),
    config.client_ca_file === ""
      ? null
      : readKeyFile("tls.server.client_ca_file", config.client_ca_file),
  ]);
  return checkServerTls({ cert, key, clientCa, http2: config.http2 }, now);
}

/**
 * The files a running listener's certificate comes from (watched for changes).
 * @param config `tls.server`.
 * @returns Their paths (none for plain HTTP).
 */
export function serverTlsFiles(config: TlsServerConfig): string[] {
  return [config.cert_file, config.key_file, config.client_ca_file].filter((file) => file !== "");
}

/**
 * The warning a certificate that ends soon deserves, or null.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { expiryWarning } from "./server_tls.ts";
 * assert.equal(expiryWarning({ daysLeft: 90 }), null);
 * assert.match(expiryWarning({ daysLeft: 3 })!, /expires in 3 day/);
 * ```
 * @param tls The checked certificate.
 * @returns The message, or null.
 */
export function expiryWarning(tls: Pick<ServerTls, "daysLeft">): string | null {
  return tls.daysLeft < EXPIRY_WARNING_DAYS
    ? `The certificate of "tls.server.cert_file" expires in ${tls.daysLeft} day(s): replace it (the router reloads it when the file changes)`
    : null;
}

/**
 * Logs a certificate that starts serving (subject, fingerprint, end, days
 * left), and the warning of one that ends soon.
 * @param log The logger.
 * @param tls The certificate.
 * @param message `TLS certificate loaded` or `… reloaded`.
 */
export function logServerTls(log: Logger, tls: ServerTls, message: string): void {
  log.info(message, {
    subject: tls.subject,
    fingerprint_sha256: tls.fingerprint,
    not_after: tls.notAfter.toISOString(),
    days_left: tls.daysLeft,
    client_certificates: tls.clientCa === null ? "not asked for" : "required",
  });
  const warning = expiryWarning(tls);
  if (warning !== null) {
    log.warn(warning, { key: "tls.server.cert_file", days_left: tls.daysLeft });
  }
}

/** Keeps a listener's certificate current ({@linkcode serverTlsKeeper}). */
export interface ServerTlsKeeper {
  /** The certificate serving now. */
  current(): ServerTls;
  /**
   * Re-reads `tls.server`'s files; a changed certificate serves new
   * connections from now on (open ones keep theirs); a broken one is logged
   * and the previous one keeps serving.
   */
  reload(config: TlsServerConfig): Promise<void>;
}

/**
 * A keeper of the certificate a listener serves.
 * @param first The certificate it serves now.
 * @param options How to swap it (`GuardedServer.setTls`), the logger.
 * @returns The keeper.
 */
export function serverTlsKeeper(
  first: ServerTls,
  options: { readonly setTls: (tls: ServerTls) => void; readonly log: () => Logger },
): ServerTlsKeeper {
  let serving = first;
  return {
    current: () => serving,
    async reload(config) {
      const log = options.log();
      if (config.cert_file === "") {
        log.warn(
          "tls.server was removed while serving HTTPS; restart the router to serve plain HTTP",
        );
        return;
      }
      try {
        const fresh = (await readServerTls(config))!;
        if (fresh.fingerprint === serving.fingerprint && fresh.clientCa === serving.clientCa) {
          return;
        }
        options.setTls(fresh);
        serving = fresh;
        logServerTls(log, fresh, "TLS certificate reloaded");
      } catch (error) {
        log.error("TLS certificate reload failed; keeping the previous one", describeError(error));
      }
    },
  };
}

/**
 * Watches `tls.server`'s files (their folders: a renamed-in file is seen) and
 * calls `reload` once per burst of changes (the supervisor of `workers > 1`,
 * which terminates TLS).
 * @param config `tls.server`.
 * @param options What to call, and the burst's quiet time, ms.
 * @returns Its closer.
 */
export function watchServerTls(
  config: TlsServerConfig,
  options: { readonly reload: () => Promise<void>; readonly debounceMs: number },
): { close(): void } {
  const files = new Set(serverTlsFiles(config).map((file) => resolve(file)));
  const watcher = Deno.watchFs([...new Set([...files].map((file) => dirname(file)))], {
    recursive: false,
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  (async () => {
    try {
      for await (const event of watcher) {
        if (!event.paths.some((path) => files.has(path))) continue;
        clearTimeout(timer);
        timer = setTimeout(() => {
          // A broken certificate is logged by the keeper; the previous one keeps serving.
          if (!closed) void options.reload().catch(() => {});
        }, options.debounceMs);
      }
    } catch {
      // The watcher was closed.
    }
  })();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      watcher.close();
    },
  };
}
