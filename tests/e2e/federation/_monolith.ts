/**
 * The monolith of a differential federation test: one graphql-js schema
 * (the supergraph's API schema, rebuilt from its printed SDL so no
 * federation machinery is attached) executing over the scenario's whole
 * data in one process. What a federated graph answers must equal what the
 * monolith answers over the same data.
 *
 * Data is plain objects: a field reads the property of its name, a
 * property that is a function is called with the field's arguments
 * (graphql-js' default resolver), and an abstract type is resolved from
 * the object's `__typename`.
 *
 * @module
 */
import { buildSchema, execute, executeSync, type GraphQLSchema, parse, printSchema } from "graphql";
import { composeSupergraph } from "../../../lib/compose/mod.ts";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import type { Area, ExecutionResult, FedCase } from "./_harness.ts";

/**
 * Builds the monolith schema from an API schema.
 * @param apiSchema The supergraph's API schema.
 * @returns A plain executable schema with the same types.
 */
export function monolithSchema(apiSchema: GraphQLSchema): GraphQLSchema {
  return buildSchema(printSchema(apiSchema));
}

/**
 * Runs one operation on the monolith.
 * @param schema The monolith schema ({@linkcode monolithSchema}).
 * @param request The operation, its variables and the root object (`Query` data).
 * @returns The response, JSON-shaped.
 */
export async function runMonolith(
  schema: GraphQLSchema,
  request: { query: string; variables?: Record<string, unknown>; root: unknown },
): Promise<ExecutionResult> {
  const result = await execute({
    schema,
    document: parse(request.query),
    rootValue: request.root,
    variableValues: request.variables ?? {},
    typeResolver: (value) => (value as { __typename?: string }).__typename,
  });
  return JSON.parse(JSON.stringify(result)) as ExecutionResult;
}

const apiSchemas = new WeakMap<Area["subgraphs"], GraphQLSchema>();

/**
 * The monolith's answer to an operation over an area's graph, computed
 * synchronously (the area's supergraph, or a composition with placeholder
 * URLs; its API schema; then graphql-js): the `override` of a case where the reference gateway is
 * wrong.
 * @param area The area (its subgraph SDLs give the API schema).
 * @param request The operation and the monolith's root object.
 * @returns The response.
 * @throws {Error} When the subgraphs do not compose or a resolver is async.
 */
export function monolithAnswer(
  area: Pick<Area, "name" | "subgraphs" | "supergraphSdl">,
  request: { query: string; root: unknown },
): ExecutionResult {
  let api = apiSchemas.get(area.subgraphs);
  if (api === undefined) {
    let sdl = area.supergraphSdl?.replace(/\{\{url:\w+\}\}/g, "http://localhost/");
    if (sdl === undefined) {
      const composed = composeSupergraph(
        area.subgraphs.map((s) => ({ name: s.name, sdl: s.typeDefs, url: "http://localhost/" })),
      );
      if (!composed.ok) throw new Error(`${area.name}: composition failed`);
      sdl = composed.supergraphSdl;
    }
    api = monolithSchema(buildSupergraph(sdl).apiSchema);
    apiSchemas.set(area.subgraphs, api);
  }
  const result = executeSync({
    schema: api,
    document: parse(request.query),
    rootValue: request.root,
    typeResolver: (value) => (value as { __typename?: string }).__typename,
  });
  return JSON.parse(JSON.stringify(result)) as ExecutionResult;
}

/**
 * A case whose expected response is the monolith's answer: for cases where
 * the reference gateway is wrong (its answer stays in the expected file
 * under `reference`, with the note).
 * @param graph The area's name, subgraphs (and supergraph, if hand-written).
 * @param spec The case's name, operation, the monolith's root and why the reference is not used.
 * @returns The case.
 */
export function monolithCase(
  graph: Pick<Area, "name" | "subgraphs" | "supergraphSdl">,
  spec: { name: string; query: string; root: unknown; note: string },
): FedCase {
  const response = monolithAnswer(graph, { query: spec.query, root: spec.root });
  return { name: spec.name, query: spec.query, override: { response, note: spec.note } };
}
