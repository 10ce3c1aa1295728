/**
 * The HTTP edge: `createHandler(() => state)` for `Deno.serve`, the GraphQL
 * over HTTP facet (with batches, `batch.ts`, and file uploads, `uploads.ts`,
 * `upload_edge.ts`, `multipart_form.ts`), CORS, body limit, health, and the
 * error → status mapping.
 *
 * @module
 */
export {
  createHandler,
  type FacetHandler,
  type Facets,
  type HandlerOptions,
  HEALTH_LIVE_PATH,
  HEALTH_READY_PATH,
  PROTECTED_RESOURCE_PATH,
} from "./handler.ts";
export { errorResponse, type ErrorResponseOptions, STATUS } from "./errors.ts";
export { type GraphQLDeps, handleGraphQL } from "./graphql.ts";
export { ALWAYS_EXPOSED, compileCors, type CorsPolicy } from "./cors.ts";
export { readBodyLimited } from "./body.ts";
export {
  APPLICATION_JSON,
  GRAPHQL_RESPONSE_JSON,
  type GraphQLMediaType,
  isJsonContentType,
  negotiateMediaType,
} from "./_media.ts";
