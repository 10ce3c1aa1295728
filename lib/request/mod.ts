/**
 * What the edge knows of one HTTP request, as small pure helpers: the context
 * a request carries through the stages (`context.ts`: body, request id,
 * signal, rate-limit charge), the client's address (`client_ip.ts`), request
 * ids (`request_id.ts`), the simple-request test CSRF prevention uses
 * (`simple_request.ts`), query-string checks and the URL as the client spoke it.
 *
 * @module
 */
export { hasPreflightHeader, isSimpleRequest } from "./simple_request.ts";
export { type Cidr, clientIp, parseCidr, PEER_HEADER, peerAddress } from "./client_ip.ts";
export { bodyOf, chargeOf, readBodyOf, requestIdOf, withContext } from "./context.ts";
export { isUtf8QueryString } from "./query_string.ts";
export {
  acceptRequestId,
  type AcceptRequestIdOptions,
  type ErrorWithExtensions,
  MAX_REQUEST_ID_LENGTH,
  REQUEST_ID_HEADER,
  withRequestId,
} from "./request_id.ts";
export { spokenUrl } from "./spoken_url.ts";
