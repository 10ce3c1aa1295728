/**
 * The TLS listener of the connection guard (`guarded_serve.ts`): `node:tls`,
 * because Deno 2.9's `Deno.listenTls` takes only `cert`, `key` and
 * `alpnProtocols` — it cannot verify client certificates, nor serve a new
 * certificate without a new listener; `node:tls` does both
 * (`setSecureContext`). ALPN offers HTTP/2 before HTTP/1.1.
 *
 * @module
 */
import { createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import { ALPN_PROTOCOLS, type ServerTls } from "./server_tls.ts";

/** Handshakes owe their end within this when `header_read_timeout` is 0, ms. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;

/** The `node:tls` context options of a certificate. */
export function secureContext(tls: ServerTls): { cert: string; key: string; ca?: string } {
  return { cert: tls.cert, key: tls.key, ...(tls.clientCa === null ? {} : { ca: tls.clientCa }) };
}

/**
 * The TLS listener (`node:tls`: it verifies client certificates and swaps
 * certificates in place, which `Deno.listenTls` does not). The guard's sweep
 * closes a handshake not done within `header_read_timeout` (10 s when that is 0).
 */
export function listenTls(
  options: { readonly hostname: string; readonly port: number; readonly reusePort?: boolean },
  tls: ServerTls,
): Promise<TlsServer> {
  const server = createTlsServer({
    ...secureContext(tls),
    ALPNProtocols: tls.http2 ? [...ALPN_PROTOCOLS] : ["http/1.1"],
    requestCert: tls.clientCa !== null,
    rejectUnauthorized: true,
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({
      host: options.hostname,
      port: options.port,
      ...(options.reusePort ? { reusePort: true } : {}),
    }, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}

/** The bound address of a TLS listener. */
export function tlsAddress(server: TlsServer): Deno.NetAddr {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("TLS listener not bound");
  return { transport: "tcp", hostname: address.address, port: address.port };
}
