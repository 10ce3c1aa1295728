/**
 * Trusted documents and APQ (issue 30): manifests, the documents of a state
 * (prepared once at load), and what document a request runs.
 *
 * @module
 */
export { documentIdOf, type ManifestEntry, parseManifest } from "./manifest.ts";
export {
  buildTrustedDocuments,
  sha256Hex,
  type TrustedDocument,
  type TrustedDocuments,
} from "./documents.ts";
export {
  type DocumentRequest,
  persistedQueryNotFound,
  persistedQueryNotInList,
  type PersistedState,
  type Resolution,
  resolveDocument,
} from "./resolve.ts";
