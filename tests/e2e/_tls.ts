/**
 * Certificates for TLS tests, made by the real `openssl`: a private certificate
 * authority per test, and certificates it signs (server: `localhost` and
 * `127.0.0.1`; client: `clientAuth`).
 *
 * @module
 */
import { join } from "node:path";

/** A certificate and its key, as files and as PEM text. */
export interface Issued {
  readonly certFile: string;
  readonly keyFile: string;
  readonly cert: string;
  readonly key: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  const out = await new Deno.Command("openssl", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`openssl ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

async function issued(dir: string, name: string): Promise<Issued> {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  return {
    certFile,
    keyFile,
    cert: await Deno.readTextFile(certFile),
    key: await Deno.readTextFile(keyFile),
  };
}

/**
 * A certificate authority in `dir` (`<name>.crt`, `<name>.key`).
 * @param dir The folder.
 * @param name File names and common name.
 * @returns The authority.
 */
export async function makeCa(dir: string, name = "ca"): Promise<Issued> {
  await openssl([
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.crt`,
    "-days",
    "2",
    "-subj",
    `/CN=${name} test CA`,
  ], dir);
  return await issued(dir, name);
}

/**
 * A certificate `ca` signs, in `dir` (`<name>.crt`, `<name>.key`).
 * @param dir The folder.
 * @param ca The authority.
 * @param options Its name, `server` (SAN localhost, 127.0.0.1) or `client` (clientAuth), days.
 * @returns The certificate.
 */
export async function issue(
  dir: string,
  ca: Issued,
  options: { readonly name: string; readonly use: "server" | "client"; readonly days?: number },
): Promise<Issued> {
  const { name } = options;
  await openssl([
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-out",
    `${name}.csr`,
    "-subj",
    `/CN=${name}`,
  ], dir);
  await Deno.writeTextFile(
    join(dir, `${name}.ext`),
    options.use === "server"
      ? "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
      : "extendedKeyUsage=clientAuth\n",
  );
  await openssl([
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    ca.certFile,
    "-CAkey",
    ca.keyFile,
    "-CAcreateserial",
    "-out",
    `${name}.crt`,
    "-days",
    String(options.days ?? 90),
    "-extfile",
    `${name}.ext`,
  ], dir);
  return await issued(dir, name);
}
