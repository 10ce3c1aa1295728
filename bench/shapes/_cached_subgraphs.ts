/**
 * Bench subgraphs as one function: a subgraph's path and a request body to
 * the answer's bytes (null: no such subgraph), each subgraph built with
 * `@apollo/subgraph` and answered by graphql-js, answers cached by body
 * (bounded: the oldest goes first). Shared by `query.ts` and `nested.ts`.
 *
 * @module
 */

/** A subgraph path + request body → the answer's bytes, or null. */
export type SubgraphAnswerer = (
  path: string,
  body: string,
) => Promise<Uint8Array<ArrayBuffer> | null>;

/**
 * Builds the subgraphs and their answerer.
 * @param subgraphs Each subgraph's name (its path without `/`), SDL (with its `@link`) and resolvers.
 * @param options The most answers kept.
 * @returns The answerer.
 */
export async function cachedSubgraphs(
  subgraphs: readonly { name: string; sdl: string; resolvers: unknown }[],
  options: { readonly maxCached: number },
): Promise<SubgraphAnswerer> {
  const { parse, execute } = await import("graphql");
  type GraphQLSchema = import("graphql").GraphQLSchema;
  const { buildSubgraphSchema } = await import("@apollo/subgraph");
  const schemas = new Map(subgraphs.map(({ name, sdl, resolvers }) => {
    const input = { typeDefs: parse(sdl), resolvers };
    // The graphql copy @apollo/subgraph types against is another module: same shapes.
    // deno-lint-ignore no-explicit-any
    return [name, buildSubgraphSchema([input] as any) as unknown as GraphQLSchema] as const;
  }));
  const cache = new Map<string, Uint8Array<ArrayBuffer>>();
  const encoder = new TextEncoder();
  return async (path, body) => {
    const schema = schemas.get(path.slice(1));
    if (!schema) return null;
    const key = `${path} ${body}`;
    let bytes = cache.get(key);
    if (!bytes) {
      const parsed = JSON.parse(body);
      const result = await execute({
        schema,
        document: parse(parsed.query),
        variableValues: parsed.variables,
        operationName: parsed.operationName,
      });
      bytes = encoder.encode(JSON.stringify(result));
      if (cache.size >= options.maxCached) cache.delete(cache.keys().next().value!);
      cache.set(key, bytes);
    }
    return bytes;
  };
}
