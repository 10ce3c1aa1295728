/**
 * The plain model of an Apollo Federation supergraph. The engine owner grows
 * this file; the names below are the contract other areas already rely on.
 *
 * @module
 */
import type { GraphQLSchema } from "graphql";

/** One subgraph of the supergraph. */
export interface SubgraphInfo {
  /** Subgraph name as composed (`accounts`). */
  readonly name: string;
  /** Routing URL. */
  readonly url: string;
  /** Its `join__Graph` enum value (`ACCOUNTS`). */
  readonly enumValue: string;
}

/** `@authenticated` / `@requiresScopes` on a type or field. */
export interface AccessRequirement {
  readonly authenticated: boolean;
  /** OR-of-AND groups, as written in `@requiresScopes(scopes:)`; null when absent. */
  readonly requiresScopes: readonly (readonly string[])[] | null;
}

/** What the rest of the router needs from a supergraph (see `mod.ts` for the full model). */
export interface SupergraphCore {
  /** The API schema clients see: join/link machinery removed, `@inaccessible` hidden. */
  readonly apiSchema: GraphQLSchema;
  /** Subgraphs by name. */
  readonly subgraphs: ReadonlyMap<string, SubgraphInfo>;
  /** Access requirements keyed `"Type"` (type level) and `"Type.field"` (field level). */
  readonly access: ReadonlyMap<string, AccessRequirement>;
}
