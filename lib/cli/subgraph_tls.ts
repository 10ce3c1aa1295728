/**
 * TLS to subgraphs (`tls.subgraphs.<name>`, `tls.subgraphs.all`): each
 * entry's PEM files read and checked (a key that is not its certificate's, an
 * expired client certificate, a file that is not PEM are refused naming the
 * key), then made into a `Deno.HttpClient` with the authorities and the client
 * certificate. The engine sends that subgraph's `https:` queries and its
 * subscriptions (`wss:` and SSE) through it; a subgraph without an entry of
 * its own takes `all`'s.
 *
 * Clients are kept across reloads while their files' contents stay the same
 * (open connections and subscriptions keep theirs). A client a reload no
 * longer uses (its files changed, its entry went) is closed after a drain
 * period (`drainMs`, 60 s: requests in flight finish on it); without that,
 * every certificate rotation would leave a client and its pooled connections
 * open for the process's life. {@linkcode SubgraphTlsClients.close} closes
 * them all at shutdown.
 *
 * Not offered: a `server_name` other than the URL's host (Deno's HTTP client
 * checks the certificate against the URL's host and has no option to name
 * another; write that name in the routing URL instead).
 *
 * @module
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import type { TlsSubgraphConfig } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import { readKeyFile } from "../config/mod.ts";
import { unrefTimer } from "../timers.ts";

/** The clients of `tls.subgraphs`, by entry name (`all` included). */
export interface SubgraphTlsClients {
  /** Builds (or reuses) a client per entry of `tls.subgraphs`. */
  update(
    config: Readonly<Record<string, TlsSubgraphConfig>>,
  ): Promise<Map<string, Deno.HttpClient>>;
  /** Closes every client. */
  close(): void;
}

function invalid(key: string, message: string, cause?: unknown): RouterError {
  return new RouterError("CONFIG_INVALID", `"${key}": ${message}`, {
    ...(cause === undefined ? {} : { cause }),
    details: { path: key },
  });
}

/** The PEM texts of one entry. */
interface SubgraphTlsPems {
  readonly ca: string | null;
  readonly cert: string | null;
  readonly key: string | null;
}

/**
 * Checks one entry's PEM texts (pure): the authorities and the certificate
 * parse, the key is the certificate's, the certificate has not ended.
 * @param prefix The entry's key (`tls.subgraphs.accounts`).
 * @param pems Its files' texts.
 * @param now The clock.
 * @throws {RouterError} `CONFIG_INVALID` naming the key that is wrong.
 */
export function checkSubgraphTls(prefix: string, pems: SubgraphTlsPems, now: Date): void {
  if (pems.ca !== null) {
    try {
      new X509Certificate(pems.ca);
    } catch (error) {
      throw invalid(`${prefix}.ca_file`, "not a PEM certificate", error);
    }
  }
  if (pems.cert === null || pems.key === null) return;
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pems.cert);
  } catch (error) {
    throw invalid(`${prefix}.cert_file`, "not a PEM certificate", error);
  }
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(pems.key);
  } catch (error) {
    throw invalid(`${prefix}.key_file`, "not a PEM private key", error);
  }
  if (!certificate.checkPrivateKey(key)) {
    throw invalid(
      `${prefix}.key_file`,
      `does not match the certificate of "${prefix}.cert_file" (${certificate.subject})`,
    );
  }
  const notAfter = new Date(certificate.validTo);
  if (notAfter.getTime() <= now.getTime()) {
    throw invalid(
      `${prefix}.cert_file`,
      `the client certificate (${certificate.subject}) expired on ${notAfter.toISOString()}`,
    );
  }
}

/** Options of {@linkcode subgraphTlsClients}. */
export interface SubgraphTlsClientsOptions {
  /** How long a client a reload retired stays open for requests in flight, ms. @default 60000 */
  readonly drainMs?: number;
}

/**
 * The clients of `tls.subgraphs`, reused while their files' contents stay the
 * same; retired ones closed after `drainMs`.
 *
 * @example No entries, no clients
 * ```ts
 * import assert from "node:assert/strict";
 * import { subgraphTlsClients } from "./subgraph_tls.ts";
 * const clients = subgraphTlsClients();
 * assert.equal((await clients.update({})).size, 0);
 * clients.close();
 * ```
 * @returns The clients' keeper.
 */
export function subgraphTlsClients(options: SubgraphTlsClientsOptions = {}): SubgraphTlsClients {
  const drainMs = options.drainMs ?? 60_000;
  const bySignature = new Map<string, Deno.HttpClient>();
  /** Retired clients waiting for their drain to end. */
  const draining = new Map<Deno.HttpClient, ReturnType<typeof setTimeout>>();
  const retire = (client: Deno.HttpClient) => {
    const timer = setTimeout(() => {
      draining.delete(client);
      client.close();
    }, drainMs);
    unrefTimer(timer);
    draining.set(client, timer);
  };
  return {
    async update(config) {
      const out = new Map<string, Deno.HttpClient>();
      for (const [name, entry] of Object.entries(config)) {
        const prefix = `tls.subgraphs.${name}`;
        const read = (key: keyof TlsSubgraphConfig) =>
          entry[key] === "" ? Promise.resolve(null) : readKeyFile(`${prefix}.${key}`, entry[key]);
        const [ca, cert, key] = await Promise.all([
          read("ca_file"),
          read("cert_file"),
          read("key_file"),
        ]);
        checkSubgraphTls(prefix, { ca, cert, key }, new Date());
        const signature = JSON.stringify([ca, cert, key]);
        let client = bySignature.get(signature);
        if (client === undefined) {
          try {
            client = Deno.createHttpClient({
              ...(ca === null ? {} : { caCerts: [ca] }),
              ...(cert === null || key === null ? {} : { cert, key }),
            });
          } catch (error) {
            throw invalid(prefix, `cannot be used: ${(error as Error).message}`, error);
          }
          bySignature.set(signature, client);
        }
        out.set(name, client);
      }
      // Only after every entry was read and checked: a refused reload retires nothing.
      const used = new Set(out.values());
      for (const [signature, client] of bySignature) {
        if (used.has(client)) continue;
        bySignature.delete(signature);
        retire(client);
      }
      return out;
    },
    close() {
      for (const client of bySignature.values()) client.close();
      bySignature.clear();
      for (const [client, timer] of draining) {
        clearTimeout(timer);
        client.close();
      }
      draining.clear();
    },
  };
}
