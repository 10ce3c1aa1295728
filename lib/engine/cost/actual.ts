/**
 * The actual cost of an answer: the estimate's rules applied to the data the client got, so a
 * list counts the items it has, not the size it was assumed to have (Apollo Router's
 * `ResponseCostCalculator`, its `by_response_shape` measure). Arguments count once per field
 * occurrence in the answer; a `null` counts its field's `@cost` only.
 *
 * The walk follows the client's selections over the data, so its depth is the selection's,
 * bounded by the operation limits checked before execution.
 *
 * @module
 */
import {
  type FieldNode,
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import type { CostSchema } from "../../supergraph/mod.ts";
import { argumentCost } from "./_arguments.ts";

interface Walk {
  readonly schema: CostSchema;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  readonly variables: Readonly<Record<string, unknown>>;
  /** Each field's arguments' cost, once per walk (not once per object of a list answer). */
  readonly argumentCosts: Map<FieldNode, number>;
  cost: number;
}

function visitSelections(
  walk: Walk,
  set: SelectionSetNode,
  parentType: string,
  object: Readonly<Record<string, unknown>>,
): void {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      const value = object[selection.alias?.value ?? selection.name.value];
      if (value !== undefined) {
        scoreValue(walk, { field: selection, parentType, value, args: true });
      }
    } else if (selection.kind === Kind.FRAGMENT_SPREAD) {
      const fragment = walk.fragments.get(selection.name.value);
      if (fragment) {
        visitSelections(walk, fragment.selectionSet, fragment.typeCondition.name.value, object);
      }
    } else {
      const type = selection.typeCondition?.name.value ?? parentType;
      visitSelections(walk, selection.selectionSet, type, object);
    }
  }
}

function scoreValue(
  walk: Walk,
  at: {
    readonly field: FieldNode;
    readonly parentType: string;
    readonly value: unknown;
    readonly args: boolean;
  },
): void {
  const { field, parentType, value } = at;
  if (field.name.value === "__typename") return;
  const definition = walk.schema.types.get(parentType)?.fields.get(field.name.value);
  if (definition === undefined) return; // partial, as Apollo's: nothing to score it by
  if (Array.isArray(value)) {
    for (const item of value) scoreValue(walk, { field, parentType, value: item, args: false });
  } else if (value !== null && typeof value === "object") {
    walk.cost += definition.weight ?? 1;
    if (field.selectionSet) {
      visitSelections(
        walk,
        field.selectionSet,
        definition.namedType,
        value as Record<string, unknown>,
      );
    }
  } else {
    walk.cost += definition.weight ?? 0;
  }
  if (!at.args || field.arguments === undefined || field.arguments.length === 0) return;
  let argumentsCost = walk.argumentCosts.get(field);
  if (argumentsCost === undefined) {
    argumentsCost = 0;
    for (const arg of field.arguments) {
      const argDefinition = definition.arguments.get(arg.name.value);
      if (argDefinition === undefined) continue;
      try {
        argumentsCost += argumentCost(walk.schema, arg.value, {
          definition: argDefinition,
          variables: walk.variables,
        });
      } catch {
        // As Apollo's: an argument that cannot be scored leaves a partial result.
      }
    }
    walk.argumentCosts.set(field, argumentsCost);
  }
  walk.cost += argumentsCost;
}

/**
 * The actual cost of an answer's data.
 *
 * @example Three items of an assumed hundred cost three
 * ```ts
 * import assert from "node:assert/strict";
 * import { parse } from "graphql";
 * import { buildCostSchema } from "../../supergraph/mod.ts";
 * import { actualCost } from "./actual.ts";
 * const schema = buildCostSchema(parse("type Query { many: [T] } type T { id: ID }"));
 * const document = parse("{ many { id } }");
 * const data = { many: [{ id: "1" }, { id: "2" }, { id: "3" }] };
 * assert.equal(actualCost(schema, document, { data, variables: {} }), 3);
 * ```
 * @param schema The supergraph's cost schema.
 * @param document The client's document.
 * @param options The answer's data, the request's variables, the operation run.
 * @returns The actual cost (0 without data).
 */
export function actualCost(
  schema: CostSchema,
  document: { readonly definitions: readonly { readonly kind: string }[] },
  options: {
    readonly data: Readonly<Record<string, unknown>> | null | undefined;
    readonly variables: Readonly<Record<string, unknown>>;
    readonly operation?: OperationDefinitionNode;
  },
): number {
  if (options.data === null || options.data === undefined) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  const operations: OperationDefinitionNode[] = [];
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) {
      const fragment = def as FragmentDefinitionNode;
      fragments.set(fragment.name.value, fragment);
    } else if (def.kind === Kind.OPERATION_DEFINITION) {
      operations.push(def as OperationDefinitionNode);
    }
  }
  const walk: Walk = {
    schema,
    fragments,
    variables: options.variables,
    argumentCosts: new Map(),
    cost: 0,
  };
  for (const operation of operations) {
    if (options.operation !== undefined && operation !== options.operation) continue;
    const root = schema.rootTypes[operation.operation];
    if (root !== null) visitSelections(walk, operation.selectionSet, root, options.data);
  }
  return walk.cost;
}
