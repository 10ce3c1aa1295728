/**
 * The cost of arguments and input objects (Apollo Router's `score_argument` and
 * `score_variable`), shared by the estimate and the actual cost.
 *
 * @module
 */
import { Kind, type ValueNode } from "graphql";
import type { CostInput, CostSchema } from "../../supergraph/mod.ts";
import { CostError } from "./cost_error.ts";

interface ArgCtx {
  readonly schema: CostSchema;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly touched: Set<string> | undefined;
}

/**
 * The cost of an argument's value (Apollo's `score_argument`): an input object its weight (1
 * without `@cost`) plus its fields', a list its weight (0) plus its items', a variable its value
 * scored the same way, null 0, any other value the argument's weight (0 without `@cost`).
 */
function scoreArgument(ctx: ArgCtx, value: ValueNode, definition: CostInput): number {
  const type = ctx.schema.types.get(definition.namedType);
  if (value.kind === Kind.VARIABLE) {
    ctx.touched?.add(value.name.value);
    const json = ctx.variables[value.name.value];
    return json === undefined ? 0 : scoreJson(ctx, json, definition);
  }
  if (value.kind === Kind.NULL) return 0;
  if (value.kind === Kind.OBJECT && type?.kind === "input") {
    let cost = definition.weight ?? 1;
    for (const field of value.fields) {
      const inner = type.inputFields.get(field.name.value);
      if (inner === undefined) {
        throw new CostError(
          `input type ${definition.namedType} has no field ${field.name.value}`,
        );
      }
      cost += scoreArgument(ctx, field.value, inner);
    }
    return cost;
  }
  if (value.kind === Kind.LIST) {
    let cost = definition.weight ?? 0;
    for (const item of value.values) cost += scoreArgument(ctx, item, definition);
    return cost;
  }
  return definition.weight ?? 0;
}

/** {@linkcode scoreArgument} for a variable's JSON value (Apollo's `score_variable`). */
function scoreJson(ctx: ArgCtx, json: unknown, definition: CostInput): number {
  if (json === null) return 0;
  const type = ctx.schema.types.get(definition.namedType);
  if (Array.isArray(json)) {
    let cost = definition.weight ?? 0;
    for (const item of json) cost += scoreJson(ctx, item, definition);
    return cost;
  }
  if (typeof json === "object" && type?.kind === "input") {
    let cost = definition.weight ?? 1;
    for (const [name, value] of Object.entries(json as Record<string, unknown>)) {
      const inner = type.inputFields.get(name);
      if (inner === undefined) {
        throw new CostError(
          `input type ${definition.namedType} has no field ${name}`,
        );
      }
      cost += scoreJson(ctx, value, inner);
    }
    return cost;
  }
  return definition.weight ?? 0;
}

/**
 * The cost of one argument's value.
 * @param schema The cost schema.
 * @param value The argument's value as written.
 * @param options Its definition, the request's variables, a set told the variables read.
 * @returns The cost.
 * @throws {CostError} When an input object names a field its type lacks.
 */
export function argumentCost(
  schema: CostSchema,
  value: ValueNode,
  options: {
    readonly definition: CostInput;
    readonly variables: Readonly<Record<string, unknown>>;
    readonly touched?: Set<string>;
  },
): number {
  return scoreArgument(
    { schema, variables: options.variables, touched: options.touched },
    value,
    options.definition,
  );
}
