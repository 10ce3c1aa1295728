/**
 * What document a request runs, by the persisted-query rules (issue 30):
 *
 * - a hash without `query` (`extensions.persistedQuery.sha256Hash` or
 *   `documentId`): a trusted document (prepared at load), else an APQ
 *   registration, else `PERSISTED_QUERY_NOT_FOUND` (Apollo's
 *   `PersistedQueryNotFound`, which makes APQ clients send the text);
 * - `query` with a hash: the hash must be the text's SHA-256 (else 400
 *   `PERSISTED_QUERY_HASH_MISMATCH`, as Apollo Router answers); with APQ on
 *   the text is registered under it;
 * - with `persisted_operations.safelist.enabled`, anything that is not a
 *   trusted document is refused: 400 `PERSISTED_QUERY_NOT_IN_LIST`;
 *   `persisted_operations.log_unknown` reports it instead (the rollout mode).
 *
 * @module
 */
import type { PrepareResult } from "../engine/mod.ts";
import { RouterError } from "../errors.ts";
import type { ApqCache } from "../store/mod.ts";
import { sha256Hex, type TrustedDocument, type TrustedDocuments } from "./documents.ts";

/** The persisted-query state of a router state. */
export interface PersistedState {
  /** Trusted documents (manifests and `operations_dir`). */
  readonly documents: TrustedDocuments;
  /** `persisted_operations.safelist.enabled`. */
  readonly safelist: boolean;
  /** `persisted_operations.log_unknown`. */
  readonly logUnknown: boolean;
  /** APQ registrations; null when APQ is off (always while the safelist is on). */
  readonly apq: ApqCache | null;
  /** Told each operation that is not a trusted document while the safelist or log_unknown is on. */
  readonly onUnknown?: (refused: boolean, info: { readonly hash: string }) => void;
}

/** What a request names. */
export interface DocumentRequest {
  /** The text, or null when only a hash came. */
  readonly query: string | null;
  /** The operation name. */
  readonly operationName: string | null;
  /** The hash or document id (already normalized, see `documentIdOf`), or null. */
  readonly hash: string | null;
}

/** The document to run: its text, and its preparation when it is a trusted document. */
export type Resolution =
  | { readonly ok: true; readonly query: string; readonly trusted: PrepareResult | null }
  | { readonly ok: false; readonly error: RouterError };

/** The error of an unknown hash: Apollo's message, so APQ clients send the text. */
export function persistedQueryNotFound(): RouterError {
  return new RouterError("PERSISTED_QUERY_NOT_FOUND", "PersistedQueryNotFound");
}

/**
 * The refusal of a document that is not trusted.
 * @returns A `PERSISTED_QUERY_NOT_IN_LIST` error.
 */
export function persistedQueryNotInList(): RouterError {
  return new RouterError(
    "PERSISTED_QUERY_NOT_IN_LIST",
    "The operation is not a trusted document (persisted_operations.safelist.enabled); send the id of a persisted operation",
  );
}

function preparedOf(document: TrustedDocument, operationName: string | null): PrepareResult | null {
  return document.prepared.get(operationName ?? "") ?? null;
}

/**
 * Resolves a request's document.
 *
 * @example An unknown hash without text
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveDocument } from "./resolve.ts";
 * const state = { documents: { byId: new Map(), invalid: [] }, safelist: false, logUnknown: false, apq: null };
 * const result = await resolveDocument(state, { query: null, operationName: null, hash: "ab" });
 * assert.equal(result.ok ? "" : result.error.code, "PERSISTED_QUERY_NOT_FOUND");
 * ```
 * @param state The persisted-query state.
 * @param request Text, operation name, hash.
 * @returns The document, or the refusal.
 */
export async function resolveDocument(
  state: PersistedState,
  request: DocumentRequest,
): Promise<Resolution> {
  const { query, operationName, hash } = request;
  if (query === null) {
    if (hash === null) {
      return { ok: false, error: new RouterError("BAD_REQUEST", 'Missing the "query" parameter') };
    }
    const trusted = state.documents.byId.get(hash);
    if (trusted !== undefined) {
      return { ok: true, query: trusted.body, trusted: preparedOf(trusted, operationName) };
    }
    const registered = state.apq === null ? null : await state.apq.get(hash);
    if (registered !== null) return unlisted(state, registered, hash);
    return { ok: false, error: persistedQueryNotFound() };
  }
  if (hash !== null) {
    const trusted = state.documents.byId.get(hash);
    if (trusted !== undefined && trusted.body === query) {
      return { ok: true, query, trusted: preparedOf(trusted, operationName) };
    }
    const actual = await sha256Hex(query);
    if (actual !== hash) {
      return {
        ok: false,
        error: new RouterError(
          "PERSISTED_QUERY_HASH_MISMATCH",
          "provided sha does not match query",
        ),
      };
    }
    if (state.apq !== null) await state.apq.set(hash, query);
    return unlisted(state, query, hash);
  }
  if (!state.safelist && !state.logUnknown) return { ok: true, query, trusted: null };
  const actual = await sha256Hex(query);
  const trusted = state.documents.byId.get(actual);
  if (trusted !== undefined && trusted.body === query) {
    return { ok: true, query, trusted: preparedOf(trusted, operationName) };
  }
  return unlisted(state, query, actual);
}

/** A document that is not trusted: refused with the safelist on, else run (and logged if asked). */
function unlisted(state: PersistedState, query: string, hash: string): Resolution {
  if (state.safelist) {
    state.onUnknown?.(true, { hash });
    return { ok: false, error: persistedQueryNotInList() };
  }
  if (state.logUnknown) state.onUnknown?.(false, { hash });
  return { ok: true, query, trusted: null };
}
