/**
 * The shape of an embedded playground asset (see `assets.generated.ts`).
 *
 * @module
 */

/** One bundled file, embedded in the module graph so `deno compile` ships it. */
export interface EmbeddedAsset {
  /** `Content-Type` to serve it with. */
  readonly contentType: string;
  /** Strong ETag (quoted): a hash of the uncompressed bytes. */
  readonly etag: string;
  /** Uncompressed size in bytes. */
  readonly size: number;
  /** The gzip (RFC 1952) of the file, base64-encoded. */
  readonly gzipBase64: string;
}
