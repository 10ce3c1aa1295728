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

/** `@authenticated` / `@requiresScopes` / `@policy` on a type or field. */
export interface AccessRequirement {
  readonly authenticated: boolean;
  /** OR-of-AND groups, as written in `@requiresScopes(scopes:)`; null when absent. */
  readonly requiresScopes: readonly (readonly string[])[] | null;
  /**
   * OR-of-AND groups of policy names, as written in `@policy(policies:)`;
   * absent or null when none. A plugin or the coprocessor grants policies per
   * request (`apollo::authorization::required_policies`).
   */
  readonly policies?: readonly (readonly string[])[] | null;
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

/** A `@key` of an entity in one subgraph. */
export interface KeyModel {
  /** Subgraph name. */
  readonly graph: string;
  /** The field set as written (`id organization { id }`). */
  readonly fields: string;
  /** False for `resolvable: false` keys (the subgraph cannot be entered by this key). */
  readonly resolvable: boolean;
}

/** A progressive `@override` of a field (`join__field(override:, overrideLabel:)`). */
export interface ProgressiveOverride {
  /** The label (`percent(25)`, or a name the router activates). */
  readonly label: string;
  /** The subgraph the field moves away from. */
  readonly from: string;
  /** The overriding subgraph. */
  readonly to: string;
}

/** An argument whose value comes from an ancestor's `@context` (`@fromContext`). */
export interface ContextArgument {
  /** The context name (`@context(name:)` on the ancestor type, as composed). */
  readonly context: string;
  /** The argument name. */
  readonly name: string;
  /** The argument type, printed (`String`). */
  readonly type: string;
  /** The selection on the context type giving the value (` { currency }`). */
  readonly selection: string;
}

/** What the supergraph says about one field. */
export interface FieldModel {
  readonly name: string;
  /** Subgraphs that resolve the field (not external, not overridden away). */
  readonly resolvableIn: readonly string[];
  /** Subgraphs that declare the field `@external` (or keep it only as an overridden key). */
  readonly externalIn: readonly string[];
  /** `@requires` field sets by subgraph. */
  readonly requires: ReadonlyMap<string, string>;
  /** `@provides` field sets by subgraph. */
  readonly provides: ReadonlyMap<string, string>;
  /** The field's type in a subgraph when it differs from the supergraph's (`join__field(type:)`). */
  readonly typeIn: ReadonlyMap<string, string>;
  /**
   * A progressive `@override(from:, label:)`: while the label is active the field is resolved in
   * `to` only, otherwise in `from` only (both are in `resolvableIn`). Absent for other fields.
   */
  readonly progressiveOverride?: ProgressiveOverride;
  /**
   * Arguments a subgraph takes from an ancestor's `@context` (`@fromContext`,
   * `join__field(contextArguments:)`). Absent for other fields.
   */
  readonly contextArguments?: readonly ContextArgument[];
  /** The field's type in the supergraph, printed (`[Product!]!`). */
  readonly type: string;
  /** Named type of the field's type. */
  readonly namedType: string;
}

/** What the supergraph says about one named type. */
export interface TypeModel {
  readonly name: string;
  readonly kind: "object" | "interface" | "union" | "enum" | "input" | "scalar";
  /** Context names this type sets (`@context(name:)`). Absent when none. */
  readonly contexts?: readonly string[];
  /** Subgraphs that define the type. */
  readonly graphs: readonly string[];
  /** Keys of the type, all subgraphs. */
  readonly keys: readonly KeyModel[];
  /** Subgraphs where this interface is an `@interfaceObject`. */
  readonly interfaceObjectIn: readonly string[];
  /** Fields by name (objects, interfaces, input objects). */
  readonly fields: ReadonlyMap<string, FieldModel>;
  /** Interfaces implemented, per subgraph. */
  readonly implementsIn: ReadonlyMap<string, readonly string[]>;
  /** Union members, per subgraph. */
  readonly membersIn: ReadonlyMap<string, readonly string[]>;
  /** All implemented interfaces / union members in the supergraph. */
  readonly interfaces: readonly string[];
  readonly members: readonly string[];
  /** Enum values in the supergraph (all, hidden included). */
  readonly enumValues: readonly string[];
}
