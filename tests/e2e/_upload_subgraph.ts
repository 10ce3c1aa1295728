/**
 * A federation subgraph that takes file uploads the way Node servers do:
 * `node:http` with `graphql-upload`'s `processRequest` (the GraphQL multipart
 * request specification) and its `Upload` scalar. Each file is read as a
 * stream and described by its name, type, size and SHA-256.
 *
 * @module
 */
import http from "node:http";
import https from "node:https";
import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import { execute, parse } from "graphql";
import { buildSubgraphSchema } from "@apollo/subgraph";
import processRequest from "graphql-upload/processRequest.mjs";
import GraphQLUpload from "graphql-upload/GraphQLUpload.mjs";
import { composeSupergraph } from "../../lib/compose/mod.ts";

const LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])';

/** What the subgraph read of one file. */
export interface FileInfo {
  readonly filename: string;
  readonly mimetype: string;
  readonly size: number;
  readonly sha256: string;
}

/** A running upload subgraph. */
export interface UploadSubgraph {
  readonly url: string;
  readonly sdl: string;
  /** The `Content-Type` of each request it received. */
  readonly contentTypes: string[];
  close(): Promise<void>;
}

interface Upload {
  readonly filename: string;
  readonly mimetype: string;
  createReadStream(): AsyncIterable<Uint8Array>;
}

async function describe(upload: Promise<Upload>): Promise<FileInfo> {
  const { filename, mimetype, createReadStream } = await upload;
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream()) {
    size += chunk.length;
    hash.update(chunk);
  }
  return { filename, mimetype, size, sha256: hash.digest("hex") };
}

/**
 * Starts the subgraph on a free port.
 * @param mutations The mutation fields it serves: `upload`, `uploadMany`, or `avatar`.
 * @param tls Serve HTTPS with this certificate (`https://127.0.0.1:…`).
 * @returns The running subgraph.
 */
export async function startUploadSubgraph(
  mutations: readonly ("upload" | "uploadMany" | "avatar")[],
  tls?: { readonly cert: string; readonly key: string },
): Promise<UploadSubgraph> {
  const fields = {
    upload: "upload(file: Upload!): FileInfo!",
    uploadMany: "uploadMany(files: [Upload!]!): [FileInfo!]!",
    avatar: "avatar(file: Upload!): String!",
  };
  const sdl = `${LINK}
scalar Upload
type FileInfo @shareable { filename: String! mimetype: String! size: Int! sha256: String! }
type Query { ${mutations.join("")}Ready: Boolean }
type Mutation { ${mutations.map((m) => fields[m]).join("\n")} }`.replace(
    '"@key"]',
    '"@key", "@shareable"]',
  );
  const schema = buildSubgraphSchema([{
    typeDefs: parse(sdl),
    resolvers: {
      Upload: GraphQLUpload,
      Mutation: {
        upload: (_: unknown, args: { file: Promise<Upload> }) => describe(args.file),
        uploadMany: (_: unknown, args: { files: Promise<Upload>[] }) =>
          Promise.all(args.files.map(describe)),
        avatar: async (_: unknown, args: { file: Promise<Upload> }) =>
          (await describe(args.file)).sha256,
      },
      // deno-lint-ignore no-explicit-any
    } as any,
  }]);
  const contentTypes: string[] = [];
  const server = (tls ? https.createServer.bind(null, tls) : http.createServer)(async (
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ) => {
    contentTypes.push(String(request.headers["content-type"]));
    // As Apollo Server's csrfPrevention: a multipart request needs a preflight header.
    if (
      String(request.headers["content-type"]).startsWith("multipart/form-data") &&
      !request.headers["apollo-require-preflight"]
    ) {
      response.writeHead(400, { "content-type": "application/json" });
      response.end(JSON.stringify({ errors: [{ message: "Blocked as a potential CSRF" }] }));
      return;
    }
    try {
      let body: { query: string; variables?: Record<string, unknown>; operationName?: string };
      if (String(request.headers["content-type"]).startsWith("multipart/form-data")) {
        body = await processRequest(request, response, { maxFileSize: 200_000_000, maxFiles: 10 });
      } else {
        let text = "";
        const decoder = new TextDecoder();
        for await (const chunk of request) text += decoder.decode(chunk, { stream: true });
        body = JSON.parse(text + decoder.decode());
      }
      const result = await execute({
        schema,
        document: parse(body.query),
        variableValues: body.variables ?? {},
        ...(body.operationName ? { operationName: body.operationName } : {}),
      });
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(result));
    } catch (error) {
      response.writeHead(400, { "content-type": "application/json" });
      response.end(JSON.stringify({ errors: [{ message: String(error) }] }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? "https" : "http"}://127.0.0.1:${port}/graphql`,
    sdl,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Random bytes (getRandomValues takes 64 KiB at a time). */
export function randomBytes(size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536));
  return bytes;
}

/** A multipart request as the specification writes it. */
export function multipart(
  operations: unknown,
  map: Record<string, string[]>,
  files: Record<string, Blob>,
): FormData {
  const form = new FormData();
  form.set("operations", JSON.stringify(operations));
  form.set("map", JSON.stringify(map));
  for (const [key, file] of Object.entries(files)) form.set(key, file, `${key}.bin`);
  return form;
}

/** The `media` (upload, uploadMany) and `avatars` (avatar) subgraphs, composed. */
export async function composedUploadGraph(): Promise<
  { sdl: string; media: UploadSubgraph; avatars: UploadSubgraph }
> {
  const media = await startUploadSubgraph(["upload", "uploadMany"]);
  const avatars = await startUploadSubgraph(["avatar"]);
  const result = composeSupergraph([
    { name: "media", url: media.url, sdl: media.sdl },
    { name: "avatars", url: avatars.url, sdl: avatars.sdl },
  ]);
  if (!result.ok) throw new Error(`does not compose: ${JSON.stringify(result)}`);
  return { sdl: result.supergraphSdl, media, avatars };
}

/** One file, `$file`, to `media`. */
export const UPLOAD = {
  query: "mutation($file: Upload!) { upload(file: $file) { size } }",
  variables: { file: null },
};
