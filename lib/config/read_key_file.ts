/**
 * Reading a file a config key names (certificates, keys, CA bundles): one
 * error for every such key, naming the key as the user wrote it and the file.
 *
 * @module
 */
import { RouterError } from "../errors.ts";

/**
 * Reads the text of the file a config key names.
 *
 * @example A missing file names the key and the file
 * ```ts
 * import assert from "node:assert/strict";
 * import { readKeyFile } from "./read_key_file.ts";
 * await assert.rejects(readKeyFile("tls.server.cert_file", "/nonexistent/cert.pem"), {
 *   code: "CONFIG_INVALID",
 *   message: 'Cannot read "tls.server.cert_file": file "/nonexistent/cert.pem": no such file',
 * });
 * ```
 * @param key The key's path as written (`tls.server.cert_file`).
 * @param path The file it names.
 * @returns The file's text.
 * @throws {RouterError} `CONFIG_INVALID` naming the key and the file when it cannot be read.
 */
export async function readKeyFile(key: string, path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    const reason = error instanceof Deno.errors.NotFound
      ? "no such file"
      : (error as Error).message;
    throw new RouterError("CONFIG_INVALID", `Cannot read "${key}": file "${path}": ${reason}`, {
      cause: error,
      details: { path: key, file: path },
    });
  }
}
