/**
 * Serves a real Apollo Federation subgraph in-process (`@apollo/subgraph` +
 * graphql-js), on loopback. Used by `deno task demo` and by the e2e tests.
 *
 * @module
 */
import { buildSubgraphSchema } from "@apollo/subgraph";
import { execute, type GraphQLSchema, parse, validate } from "graphql";
import type { DocumentNode } from "graphql";

/** Resolver map in the `@apollo/subgraph` shape (`__resolveReference` allowed). */
// deno-lint-ignore no-explicit-any
export type SubgraphResolvers = Record<string, any>;

/** Options for {@linkcode serveSubgraph}. */
export interface ServeSubgraphOptions {
  /** Port; 0 (default) picks a free one. */
  readonly port?: number;
  /** Host; default `127.0.0.1`. */
  readonly hostname?: string;
  /** Called with each request body (tests count and inspect subgraph calls). */
  readonly onRequest?: (body: { query: string; variables?: unknown }, headers: Headers) => void;
}

/** A running subgraph. */
export interface RunningSubgraph {
  readonly name: string;
  readonly url: string;
  readonly sdl: string;
  readonly schema: GraphQLSchema;
  close(): Promise<void>;
}

/**
 * Starts a federation subgraph server answering `POST /graphql`.
 * @param name Subgraph name.
 * @param definition SDL (a federation v2 subgraph schema) and resolvers.
 * @param options Port, host, request hook.
 * @returns The running subgraph.
 */
export function serveSubgraph(
  name: string,
  definition: { typeDefs: string | DocumentNode; resolvers?: SubgraphResolvers },
  options: ServeSubgraphOptions = {},
): RunningSubgraph {
  const typeDefs = typeof definition.typeDefs === "string"
    ? parse(definition.typeDefs)
    : definition.typeDefs;
  const schema = buildSubgraphSchema([{ typeDefs, resolvers: definition.resolvers ?? {} }]);
  const server = Deno.serve({
    port: options.port ?? 0,
    hostname: options.hostname ?? "127.0.0.1",
    onListen: () => {},
  }, async (request) => {
    if (request.method !== "POST") return new Response("POST only", { status: 405 });
    let body: { query: string; variables?: Record<string, unknown>; operationName?: string };
    try {
      body = await request.json();
      options.onRequest?.(body, request.headers);
    } catch {
      return Response.json({ errors: [{ message: "Invalid JSON body" }] }, { status: 400 });
    }
    let document: DocumentNode;
    try {
      document = parse(body.query);
    } catch (error) {
      return Response.json({ errors: [{ message: String(error) }] }, { status: 400 });
    }
    const errors = validate(schema, document);
    if (errors.length > 0) {
      return Response.json({ errors: errors.map((e) => e.toJSON()) }, { status: 400 });
    }
    const result = await execute({
      schema,
      document,
      variableValues: body.variables ?? {},
      operationName: body.operationName ?? null,
      contextValue: { headers: request.headers },
    });
    return Response.json(result);
  });
  const sdl = typeof definition.typeDefs === "string" ? definition.typeDefs : "";
  return {
    name,
    url: `http://127.0.0.1:${server.addr.port}/graphql`,
    sdl,
    schema,
    close: () => server.shutdown(),
  };
}
