/**
 * The GraphQL facet's side of file uploads: a multipart request is read when
 * `file_uploads.enabled` (else 415), and the request keeps its upload until
 * the facet answered, when what is left of its body is cancelled.
 *
 * @module
 */
import type { Config } from "../config/types.ts";
import { RouterError } from "../errors.ts";
import type { OperationLimits } from "../engine/mod.ts";
import { readUploadRequest, type UploadRequest } from "./uploads.ts";
import { signalOf } from "../cancellation.ts";

export type { UploadRequest };

const UPLOAD: unique symbol = Symbol("gw.upload");

type WithUpload = { [UPLOAD]?: UploadRequest };

/**
 * Reads a multipart request's `operations` and `map`; refuses it (415) when
 * file uploads are off.
 * @param request The request (its body not read ahead).
 * @param deps The config and the engine's limits.
 * @param boundary Its multipart boundary.
 * @returns The upload.
 * @throws {RouterError} `UNSUPPORTED_MEDIA_TYPE` when off; what {@linkcode readUploadRequest} throws.
 */
export async function readUpload(
  request: Request,
  deps: { readonly config: Config; readonly engine: { readonly limits: OperationLimits } },
  boundary: string,
): Promise<UploadRequest> {
  const config = deps.config.file_uploads;
  if (!config.enabled) {
    await request.body?.cancel().catch(() => {});
    throw new RouterError(
      "UNSUPPORTED_MEDIA_TYPE",
      "Multipart requests (file uploads) are not enabled (file_uploads.enabled); send the request body as application/json",
    );
  }
  const upload = await readUploadRequest(request, boundary, {
    config,
    limits: deps.engine.limits,
    maxFieldBytes: deps.config.max_request_body_bytes,
    signal: signalOf(request),
  });
  (request as unknown as WithUpload)[UPLOAD] = upload;
  return upload;
}

/**
 * Cancels what is left of a request's upload body (nothing without an upload).
 * @param request The request.
 */
export async function closeUpload(request: Request): Promise<void> {
  await (request as unknown as WithUpload)[UPLOAD]?.close();
}
