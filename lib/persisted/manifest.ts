/**
 * Trusted-document manifests (`persisted_operations.manifests`): Apollo's
 * persisted query manifest (`{"format":"apollo-persisted-query-manifest",
 * "version":1,"operations":[{id,name,type,body}]}`) and a plain
 * `{ "<sha256>": "<document>" }` map (Relay, Cosmo). Pure.
 *
 * @module
 */
import { RouterError } from "../errors.ts";

/** One trusted document of a manifest. */
export interface ManifestEntry {
  /** What clients send: the manifest's id (Apollo) or key (map), without `sha256:`. */
  readonly id: string;
  /** The document text. */
  readonly body: string;
}

/**
 * A document id as clients send it: `sha256:<hex>` or bare hex (hex lower-cased);
 * other ids (Apollo allows any) as they are.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { documentIdOf } from "./manifest.ts";
 * assert.equal(documentIdOf(`sha256:${"AB".repeat(32)}`), "ab".repeat(32));
 * assert.equal(documentIdOf("my-op-1"), "my-op-1");
 * ```
 * @param id The id.
 * @returns The id to look up.
 */
export function documentIdOf(id: string): string {
  const bare = id.startsWith("sha256:") ? id.slice(7) : id;
  return /^[0-9a-fA-F]{64}$/.test(bare) ? bare.toLowerCase() : bare;
}

function invalid(path: string, reason: string): never {
  throw new RouterError(
    "CONFIG_INVALID",
    `Cannot read the manifest "${path}" (persisted_operations.manifests): ${reason}`,
    { details: { path: "persisted_operations.manifests", file: path } },
  );
}

/**
 * Reads a manifest.
 *
 * @example Both formats
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseManifest } from "./manifest.ts";
 * const apollo = JSON.stringify({
 *   format: "apollo-persisted-query-manifest",
 *   version: 1,
 *   operations: [{ id: "a1", name: "A", type: "query", body: "query A { a }" }],
 * });
 * assert.deepEqual(parseManifest(apollo, "pq.json"), [{ id: "a1", body: "query A { a }" }]);
 * assert.deepEqual(parseManifest('{"sha256:B2":"{ b }"}', "map.json"), [{ id: "sha256:B2", body: "{ b }" }]);
 * ```
 * @param text The file's text.
 * @param path The file (for errors).
 * @returns Its entries.
 * @throws {RouterError} `CONFIG_INVALID` naming the file and what is wrong.
 */
export function parseManifest(text: string, path: string): ManifestEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    invalid(path, `not JSON (${(error as Error).message})`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    invalid(path, "expected a JSON object");
  }
  const record = json as Record<string, unknown>;
  if (record.format === "apollo-persisted-query-manifest") {
    if (record.version !== 1) {
      invalid(path, `unsupported version ${JSON.stringify(record.version)}, expected 1`);
    }
    if (!Array.isArray(record.operations)) invalid(path, '"operations" must be an array');
    return record.operations.map((operation: unknown, i: number) => {
      const o = operation as Record<string, unknown>;
      if (typeof o?.id !== "string" || o.id === "" || typeof o.body !== "string") {
        invalid(path, `operations[${i}] needs a string "id" and "body"`);
      }
      return { id: o.id, body: o.body };
    });
  }
  return Object.entries(record).map(([id, body]) => {
    if (typeof body !== "string") {
      invalid(path, `the value of "${id}" must be a document (a string)`);
    }
    return { id, body };
  });
}
