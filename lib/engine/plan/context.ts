/**
 * `@fromContext` arguments: a field whose argument comes from the nearest ancestor setting a
 * `@context`. The context selection is planned on that ancestor (like a requirement); the field
 * goes into its own entity fetch below the ancestor, with one variable per argument, and the
 * executor sends that fetch once per distinct context value (each with its representations).
 *
 * @module
 */
import type { FieldModel } from "../../supergraph/mod.ts";
import type { NField } from "../prepare/mod.ts";
import type { RepSelection } from "./rep.ts";
import type { QueryGraph } from "./graph.ts";
import type { Builder, Walk } from "./_builder.ts";
import type { Group, Pos } from "./_groups.ts";
import { itemsFor } from "./requirements.ts";
import { type ContextVariable, PlanningError } from "./types.ts";

/** The field with context arguments, where it is selected, and the subgraph resolving it. */
export interface ContextField {
  readonly pos: Pos;
  readonly field: NField;
  readonly model: FieldModel;
  readonly subgraph: string;
}

/**
 * Plans a field taking `@fromContext` arguments.
 *
 * @param b The builder.
 * @param at The field, its position, model and subgraph.
 * @param walk The builder's recursive steps.
 * @throws {PlanningError} When no ancestor sets the context, or the field's parent type cannot
 *   be entered by a key in its subgraph (the value could not be passed per object).
 */
export function contextField(b: Builder, at: ContextField, walk: Walk): void {
  const { pos, field, model, subgraph } = at;
  const args = model.contextArguments ?? [];
  const touched = new Set<Group>();
  const variables: Omit<ContextVariable, "name">[] = [];
  const argNames: string[] = [];
  b.recorders.push(touched);
  try {
    for (const arg of args) {
      const ancestor = contextAncestor(b.graph, { pos, context: arg.context });
      if (!ancestor) {
        throw new PlanningError(
          `No ancestor of "${pos.type}.${field.name}" sets the context "${arg.context}"`,
        );
      }
      const items = itemsFor(b.graph, {
        type: ancestor.type,
        items: b.graph.fieldSet(unwrap(arg.selection)),
      });
      const rep = walk.planRequirements(b, { pos: ancestor, items });
      variables.push({ type: arg.type, path: ancestor.path, read: readPath(rep) });
      argNames.push(arg.name);
    }
  } finally {
    b.recorders.pop();
  }
  if (!b.graph.entityMove(pos.type, subgraph)) {
    throw new PlanningError(
      `The field "${pos.type}.${field.name}" takes @fromContext arguments but "${pos.type}" ` +
        `has no key entering "${subgraph}"`,
    );
  }
  const entry = walk.enter(b, pos, { target: subgraph, requires: model.requires.get(subgraph) });
  const group = entry.group;
  for (const t of touched) if (t !== group) group.deps.add(t);
  const printed: string[] = [];
  variables.forEach((v, i) => {
    // The client's variables keep their names: a generated one never takes one of them.
    let name = `contextualArgument_${b.contextVariables++}`;
    while (b.op.variableTypes.has(name)) name = `contextualArgument_${b.contextVariables++}`;
    group.contexts.push({ name, ...v });
    printed.push(`${argNames[i]}:$${name}`);
  });
  const inner = field.args === "" ? "" : field.args.slice(1, -1) + ",";
  walk.addLocal(b, { pos: entry, field: { ...field, args: `(${inner}${printed.join(",")})` } });
}

/** The nearest position at or above `pos` whose type sets the context. */
function contextAncestor(
  graph: QueryGraph,
  at: { readonly pos: Pos; readonly context: string },
): Pos | null {
  for (let cur: Pos | null = at.pos; cur; cur = cur.up?.pos ?? cur.parent) {
    const type = graph.type(cur.type);
    if (type?.contexts?.includes(at.context)) return cur;
    for (const i of type?.interfaces ?? []) {
      if (graph.type(i)?.contexts?.includes(at.context)) return cur;
    }
  }
  return null;
}

/** Data keys from the context object to the value (the selection's first field, nested). */
function readPath(rep: RepSelection): string[] {
  const out: string[] = [];
  let fields = rep.fields;
  for (;;) {
    const next = fields.find((f) => f.key !== "__typename");
    if (!next) return out;
    out.push(next.dataKey);
    if (!next.selection) return out;
    fields = next.selection.fields;
  }
}

/** A context selection as composed (` { currency }`) without its outer braces. */
function unwrap(selection: string): string {
  const text = selection.trim();
  return text.startsWith("{") && text.endsWith("}") ? text.slice(1, -1) : text;
}
