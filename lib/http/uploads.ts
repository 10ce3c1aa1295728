/**
 * File uploads on `graphql_path` (`file_uploads`; the GraphQL multipart request
 * specification, as `apollo-upload-client` sends it; issue 43). The request is
 * `multipart/form-data`: an `operations` field (the GraphQL request, files as
 * placeholders), a `map` field (file field name → the variable paths it
 * fills), then the files. The handler does not read such a body ahead: here
 * `operations` and `map` are read (held to `max_request_body_bytes`), and the
 * files stay in the request body until the one subgraph fetch that takes them
 * streams them on, each counted against `max_file_size` as it passes.
 *
 * A file's variable holds its `map` key until the subgraph replaces it with
 * the file (so an `Upload!` variable is not null for the router's checks).
 *
 * @module
 */
import type { FileUploadsConfig } from "../config/mod.ts";
import { clipForMessage, RouterError } from "../errors.ts";
import {
  checkJsonTextDepth,
  type MultipartBody,
  type OperationLimits,
  type UploadedFiles,
} from "../engine/mod.ts";
import { type FormPart, MalformedMultipart, MultipartFormReader } from "./multipart_form.ts";
import { JsonTooDeep, parseJsonRequest, type RawRequest } from "./graphql_request.ts";
import { onAbort } from "../cancellation.ts";

/** A multipart request read up to its files. */
export interface UploadRequest {
  /** The GraphQL request of the `operations` field, with each file's placeholder filled. */
  readonly raw: RawRequest;
  /** The files, for the engine (streamed to the fetch that takes them). */
  readonly files: UploadedFiles;
  /** What stopped the files' stream (a file over the limit, a broken body), or null. */
  failure(): RouterError | null;
  /** True once every file was streamed to the subgraph (the body's end reached). */
  streamed(): boolean;
  /** Bytes of files streamed so far. */
  bytes(): number;
  /** Stops reading the request body (what is left of it is cancelled). */
  close(): Promise<void>;
}

/** Options of {@linkcode readUploadRequest}. */
export interface UploadReadOptions {
  /** `file_uploads`. */
  readonly config: FileUploadsConfig;
  /** The operation limits (the depth of the `operations` JSON). */
  readonly limits: OperationLimits;
  /** `max_request_body_bytes`: the bound of the `operations` and `map` fields each. */
  readonly maxFieldBytes: number;
  /** The request's signal (deadline, client gone): cancels the reading of the body. */
  readonly signal?: AbortSignal;
}

const encoder = new TextEncoder();

/**
 * Reads a multipart request's `operations` and `map` fields.
 * @param request The request (its body not read yet).
 * @param boundary Its multipart boundary.
 * @param options Limits.
 * @returns The request, its files still to come.
 * @throws {RouterError} `BAD_REQUEST` (malformed), `PAYLOAD_TOO_LARGE` (a field, or too many files).
 */
export async function readUploadRequest(
  request: Request,
  boundary: string,
  options: UploadReadOptions,
): Promise<UploadRequest> {
  if (request.body === null) throw badRequest("A multipart request needs a body");
  const reader = new MultipartFormReader(request.body, boundary);
  // Past the deadline (or with the client gone) a read waiting on the body ends.
  const off = options.signal ? onAbort(options.signal, () => void reader.cancel()) : null;
  const close = async () => {
    off?.();
    await reader.cancel();
  };
  try {
    const operations = await field(reader, "operations", options.maxFieldBytes);
    const read = parseJsonRequest(operations, options.limits, 'the "operations" field');
    if ("batch" in read) throw badRequest("A multipart request carries one operation, not a batch");
    const mapText = await field(reader, "map", options.maxFieldBytes);
    const map = parseMap(mapText, read, options);
    const variables = new Set<string>();
    for (const paths of map.values()) for (const path of paths) variables.add(path[1]!);
    const raw = { ...read, variables: withPlaceholders(read.variables, map) };
    let failure: RouterError | null = null;
    let streamed = false;
    let bytes = 0;
    const files: UploadedFiles = {
      variables,
      body: (body) =>
        multipartBody(reader, {
          operations: body,
          map,
          maxFileSize: options.config.max_file_size,
          failed: (error) => (failure ??= error),
          counted: (n) => (bytes += n),
          ended: () => (streamed = true),
        }),
    };
    return {
      raw,
      files,
      failure: () => failure,
      streamed: () => streamed && failure === null,
      bytes: () => bytes,
      close,
    };
  } catch (error) {
    await close();
    if (error instanceof MalformedMultipart) {
      throw badRequest(`Malformed multipart body: ${error.message}`);
    }
    throw error;
  }
}

function badRequest(message: string): RouterError {
  return new RouterError("BAD_REQUEST", message);
}

/** Reads the next part, which must be the field `name`, within `limit` bytes. */
async function field(
  reader: MultipartFormReader,
  name: string,
  limit: number,
): Promise<Uint8Array> {
  const part = await reader.next();
  if (part === null || part.name !== name) {
    throw badRequest(
      `Expected the "${name}" field ${
        part === null ? "" : `where "${clipForMessage(part.name)}" is `
      }(the GraphQL multipart request specification: operations, map, then the files)`,
    );
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of part.body) {
    size += chunk.length;
    if (size > limit) {
      throw new RouterError(
        "PAYLOAD_TOO_LARGE",
        `The "${name}" field is larger than ${limit} bytes (max_request_body_bytes)`,
        { details: { limit } },
      );
    }
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

/** The map: each file's field name → the paths (`["variables", "file"]`) it fills, in order. */
type FileMap = Map<string, readonly (readonly string[])[]>;

function parseMap(
  bytes: Uint8Array,
  request: RawRequest,
  options: { readonly config: FileUploadsConfig; readonly limits: OperationLimits },
): FileMap {
  const { config } = options;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw badRequest('The "map" field is not a JSON object');
  }
  // Its depth is known before it is parsed, as the operations' is (deep nesting costs the parse).
  const tooDeep = checkJsonTextDepth(text, options.limits, {
    outer: 0,
    what: 'nesting depth of the "map" field',
  });
  if (tooDeep !== null) throw new JsonTooDeep(tooDeep);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('The "map" field is not a JSON object');
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw badRequest('The "map" field is not a JSON object');
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > config.max_files) {
    throw new RouterError(
      "PAYLOAD_TOO_LARGE",
      `The request carries ${entries.length} files, more than the ${config.max_files} allowed (file_uploads.max_files)`,
      { details: { limit: config.max_files } },
    );
  }
  const map: FileMap = new Map();
  for (const [key, paths] of entries) {
    const where = `"map" entry "${clipForMessage(key)}"`;
    if (!Array.isArray(paths) || paths.length === 0 || paths.some((p) => typeof p !== "string")) {
      throw badRequest(`The ${where} must be a non-empty list of paths`);
    }
    map.set(
      key,
      (paths as string[]).map((path) => {
        const segments = path.split(".");
        if (segments[0] !== "variables" || segments.length < 2 || segments.includes("")) {
          throw badRequest(
            `The ${where} names "${
              clipForMessage(path)
            }"; a file fills a path in "variables" (variables.<name>…)`,
          );
        }
        if (!request.variables || !Object.hasOwn(request.variables, segments[1]!)) {
          throw badRequest(
            `The ${where} names the variable "${
              clipForMessage(segments[1]!)
            }", which the operations field does not give`,
          );
        }
        return segments;
      }),
    );
  }
  return map;
}

/** The variables with each file's placeholder set to its map key (validated paths). */
function withPlaceholders(
  variables: Readonly<Record<string, unknown>> | null,
  map: FileMap,
): Readonly<Record<string, unknown>> | null {
  if (variables === null) return null;
  // Copied along each path only (the rest is shared: exact numbers stay as parsed), each
  // object or list once: paths into one long list copy it once, not once a path.
  const copy: Record<string, unknown> = { ...variables };
  const copies = new WeakSet<object>([copy]);
  for (const [key, paths] of map) {
    for (const path of paths) {
      let node: Record<string, unknown> = copy;
      for (let i = 1; i < path.length - 1; i++) {
        const child = Object.hasOwn(node, path[i]!) ? node[path[i]!] : undefined;
        if (typeof child !== "object" || child === null) {
          throw badRequest(
            `The "map" path "${clipForMessage(path.join("."))}" is not in the variables`,
          );
        }
        if (copies.has(child)) {
          node = child as Record<string, unknown>;
          continue;
        }
        const copied = (Array.isArray(child) ? [...child] : { ...child }) as Record<
          string,
          unknown
        >;
        copies.add(copied);
        node[path[i]!] = copied;
        node = copied;
      }
      // The placeholder is a slot the client sent (a list's `length` is none).
      const last = path[path.length - 1]!;
      const slot = Array.isArray(node)
        ? /^(0|[1-9][0-9]*)$/.test(last) && Number(last) < node.length
        : Object.hasOwn(node, last);
      if (!slot) {
        throw badRequest(
          `The "map" path "${clipForMessage(path.join("."))}" is not in the variables`,
        );
      }
      node[last] = key;
    }
  }
  return copy;
}

/**
 * The subgraph request's body: `operations` and `map`, then each file part as
 * it is read from the client, its bytes counted; a file over the limit, a
 * part the map does not name or a file missing errors the stream.
 */
function multipartBody(
  reader: MultipartFormReader,
  context: {
    readonly operations: string;
    readonly map: FileMap;
    readonly maxFileSize: number;
    readonly failed: (error: RouterError) => void;
    /** Told each file chunk's size as it passes. */
    readonly counted: (bytes: number) => void;
    /** Told when the last file has passed. */
    readonly ended: () => void;
  },
): MultipartBody {
  const boundary = `gw-upload-${crypto.randomUUID()}`;
  const mapJson = JSON.stringify(
    Object.fromEntries(
      [...context.map].map(([key, paths]) => [key, paths.map((p) => p.join("."))]),
    ),
  );
  const head = encoder.encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n` +
      `Content-Type: application/json\r\n\r\n${context.operations}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="map"\r\n` +
      `Content-Type: application/json\r\n\r\n${mapJson}\r\n`,
  );
  const expected = new Set(context.map.keys());
  let part: FormPart | null = null;
  let partReader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let size = 0;
  let started = false;
  let finished = false;
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: RouterError) => {
    context.failed(error);
    controller.error(error);
    void reader.cancel();
  };
  const stream = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      try {
        if (!started) {
          started = true;
          controller.enqueue(head);
          return;
        }
        if (finished) return;
        if (partReader !== null) {
          const { value, done } = await partReader.read();
          if (!done) {
            size += value.length;
            if (size > context.maxFileSize) {
              return fail(
                controller,
                new RouterError(
                  "PAYLOAD_TOO_LARGE",
                  `The file "${
                    clipForMessage(part?.filename ?? part?.name ?? "")
                  }" is larger than ${context.maxFileSize} bytes (file_uploads.max_file_size)`,
                  { details: { limit: context.maxFileSize } },
                ),
              );
            }
            context.counted(value.length);
            controller.enqueue(value);
            return;
          }
          partReader = null;
          controller.enqueue(encoder.encode("\r\n"));
          return;
        }
        part = await reader.next();
        if (part === null) {
          if (expected.size > 0) {
            return fail(
              controller,
              badRequest(
                `The body ends without the files ${
                  [...expected].map((k) => `"${clipForMessage(k)}"`).join(", ")
                } the "map" names`,
              ),
            );
          }
          finished = true;
          context.ended();
          controller.enqueue(encoder.encode(`--${boundary}--\r\n`));
          controller.close();
          return;
        }
        if (!expected.delete(part.name)) {
          return fail(
            controller,
            badRequest(`The part "${clipForMessage(part.name)}" is not a file the "map" names`),
          );
        }
        size = 0;
        partReader = part.body.getReader();
        const filename = (part.filename ?? part.name).replace(/["\r\n\\]/g, "_");
        const type = (part.contentType ?? "application/octet-stream").replace(/[\r\n]/g, "");
        controller.enqueue(encoder.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="${
            part.name.replace(/["\r\n\\]/g, "_")
          }"; filename="${filename}"\r\n` +
            `Content-Type: ${type}\r\n\r\n`,
        ));
      } catch (error) {
        fail(
          controller,
          error instanceof RouterError
            ? error
            : badRequest(`Malformed multipart body: ${(error as Error).message}`),
        );
      }
    },
    cancel: () => reader.cancel(),
  }, { highWaterMark: 0 });
  return { stream, contentType: `multipart/form-data; boundary=${boundary}` };
}
