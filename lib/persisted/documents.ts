/**
 * The trusted documents of a state: every manifest entry and every operation
 * of `operations_dir` (under the SHA-256 of its file's text), each parsed and
 * validated once here by the engine's prepare stage, never through the parse
 * cache (a persisted document costs no cache room and no lookup).
 *
 * @module
 */
import { Kind, parse } from "graphql";
import type { PrepareResult } from "../engine/mod.ts";
import { documentIdOf, type ManifestEntry } from "./manifest.ts";

/** One trusted document, prepared per operation name. */
export interface TrustedDocument {
  /** The document text. */
  readonly body: string;
  /** Prepared per operation name ("" for the request that names none). */
  readonly prepared: ReadonlyMap<string, PrepareResult>;
}

/** The trusted documents by id (the SHA-256 of the body, and a manifest's own id). */
export interface TrustedDocuments {
  /** By id (lower-case hex for SHA-256s). */
  readonly byId: ReadonlyMap<string, TrustedDocument>;
  /** Documents that failed validation against this supergraph (logged at load). */
  readonly invalid: readonly { readonly id: string; readonly message: string }[];
}

/**
 * The SHA-256 of a text, lower-case hex (what APQ and documentId name).
 * @param text The text.
 * @returns The hash.
 */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => HEX[b]).join("");
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * Prepares every trusted document once.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildTrustedDocuments, sha256Hex } from "./documents.ts";
 * const docs = await buildTrustedDocuments([{ id: "x", body: "{ a }" }], {
 *   prepare: () => ({ ok: false, stage: "parse", errors: [] }),
 * });
 * assert.equal(docs.byId.get("x")?.body, "{ a }");
 * assert.equal(docs.byId.get(await sha256Hex("{ a }"))?.body, "{ a }");
 * ```
 * @param entries Manifest entries and operation files (`{ id: sha256, body }`).
 * @param options The engine's prepare stage, uncached.
 * @returns The documents.
 */
export async function buildTrustedDocuments(
  entries: readonly ManifestEntry[],
  options: {
    readonly prepare: (query: string, operationName: string | null) => PrepareResult;
  },
): Promise<TrustedDocuments> {
  const byBody = new Map<string, TrustedDocument>();
  const byId = new Map<string, TrustedDocument>();
  const invalid: { id: string; message: string }[] = [];
  for (const entry of entries) {
    let document = byBody.get(entry.body);
    if (document === undefined) {
      const prepared = new Map<string, PrepareResult>();
      prepared.set("", options.prepare(entry.body, null));
      for (const name of operationNames(entry.body)) {
        prepared.set(name, options.prepare(entry.body, name));
      }
      document = { body: entry.body, prepared };
      byBody.set(entry.body, document);
      const failed = [...prepared.values()].find((p) => !p.ok && p.stage !== "select");
      if (failed !== undefined && !failed.ok) {
        invalid.push({ id: entry.id, message: failed.errors[0]?.message ?? "invalid" });
      }
      byId.set(await sha256Hex(entry.body), document);
    }
    byId.set(documentIdOf(entry.id), document);
  }
  return { byId, invalid };
}

function operationNames(body: string): string[] {
  try {
    return parse(body, { noLocation: true }).definitions.flatMap((d) =>
      d.kind === Kind.OPERATION_DEFINITION && d.name ? [d.name.value] : []
    );
  } catch {
    return [];
  }
}
