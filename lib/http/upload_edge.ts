/**
 * The GraphQL facet's side of file uploads: a multipart request is read when
 * `file_uploads.enabled` (else 415), and the request keeps its upload until
 * the facet answered, when what is left of its body is cancelled.
 *
 * @module
 */
import type { Config } from "../config/mod.ts";
import { RouterError } from "../errors.ts";
import type { OperationLimits } from "../engine/mod.ts";
import { readUploadRequest, type UploadRequest } from "./uploads.ts";
import { signalOf } from "../cancellation.ts";
import type { RouterMetrics } from "../telemetry/mod.ts";

export type { UploadRequest };

const UPLOAD: unique symbol = Symbol("gw.upload");

type WithUpload = { [UPLOAD]?: { readonly upload: UploadRequest; readonly deps: UploadDeps } };

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
  deps: UploadDeps,
  boundary: string,
  options: { readonly signal?: AbortSignal } = {},
): Promise<UploadRequest> {
  const config = deps.config.file_uploads;
  if (!config.enabled) {
    await request.body?.cancel().catch(() => {});
    throw new RouterError(
      "UNSUPPORTED_MEDIA_TYPE",
      "Multipart requests (file uploads) are not enabled (file_uploads.enabled); send the request body as application/json",
    );
  }
  let upload: UploadRequest;
  try {
    upload = await readUploadRequest(request, boundary, {
      config,
      limits: deps.engine.limits,
      maxFieldBytes: deps.config.max_request_body_bytes,
      signal: options.signal ?? signalOf(request),
    });
  } catch (error) {
    deps.telemetry?.metrics?.upload("refused", 0);
    throw error;
  }
  (request as unknown as WithUpload)[UPLOAD] = { upload, deps };
  return upload;
}

/**
 * The upload {@linkcode readUpload} read for a request (the edge reads its
 * `operations` and `map` before the request takes a slot), or null.
 * @param request The request.
 * @returns Its upload, or null.
 */
export function uploadOf(request: Request): UploadRequest | null {
  return (request as unknown as WithUpload)[UPLOAD]?.upload ?? null;
}

/** What an upload reads of the facet's dependencies. */
export interface UploadDeps {
  readonly config: Config;
  readonly engine: { readonly limits: OperationLimits };
  /** Counts each upload's outcome and bytes (`gw_router_uploads_total`). */
  readonly telemetry?: { readonly metrics: RouterMetrics | null } | null;
}

/**
 * Ends a request's upload once answered: counts its outcome, cancels what is
 * left of its body (nothing without an upload).
 * @param request The request.
 */
export async function closeUpload(request: Request): Promise<void> {
  const held = (request as unknown as WithUpload)[UPLOAD];
  if (held === undefined) return;
  // Once: the facet closes it when answered, the edge again when the facet never ran.
  delete (request as unknown as WithUpload)[UPLOAD];
  const { upload, deps } = held;
  deps.telemetry?.metrics?.upload(upload.streamed() ? "streamed" : "refused", upload.bytes());
  await upload.close();
}
