/**
 * Fetch graph: the paths chosen for the operation's fields ({@linkcode bestCombination},
 * {@linkcode bestRoot}) become fetch groups — one subgraph request each, with the selection it
 * sends, the representations it needs and the groups it depends on. Requirements (`@key`,
 * `@requires`) are planned in the parent fetch like client fields, under internal aliases when
 * a client key is taken.
 *
 * @module
 */
import type { FieldSetItem } from "./fieldset.ts";
import type { NField, NormalizedOperation, TypeRef } from "../prepare/mod.ts";
import { mergeRep, type RepField, type RepSelection } from "./rep.ts";
import { Sel } from "./sel.ts";
import type { QueryGraph } from "./graph.ts";
import { createGroup, dependsOn, type Group, keysOf, type Pos, topOf } from "./_groups.ts";
import { bestCombination, bestRoot, type Choice, providedBelow, type SearchState } from "./best.ts";
import { type Candidate, fieldCandidates, keyIsLocal, providedItem } from "./paths.ts";
import { internalField, internalKey, itemsFor, repField, takenBelow } from "./requirements.ts";
import { abstractFields } from "./abstract.ts";
import type { Builder, Walk } from "./_builder.ts";
import { contextField } from "./context.ts";
import { PlanningError } from "./types.ts";

/** Entity fetches planned per operation before planning gives up. */
const MAX_ENTRIES = 10_000;
/** Nested requirement planning depth before it is called a cycle. */
const MAX_NESTING = 32;

/**
 * Builds the fetch graph of an operation.
 *
 * @param graph The query graph.
 * @param options The operation and the search state.
 * @returns The groups in planning order.
 * @throws {PlanningError} When a field cannot be reached.
 */
export function buildFetchGraph(
  graph: QueryGraph,
  options: { readonly operation: NormalizedOperation; readonly search: SearchState },
): Group[] {
  const op = options.operation;
  const b: Builder = {
    graph,
    op,
    search: options.search,
    groups: [],
    recorders: [],
    entering: [],
    entries: 0,
    contextVariables: 0,
  };
  let previous: Group | null = null;
  let root = 0;
  for (const f of op.selection.fields) {
    if (f.introspection || f.name === "__typename") continue;
    const model = graph.field(op.rootType, f.name);
    if (!model || model.resolvableIn.length === 0) {
      throw new PlanningError(`No subgraph resolves the field "${op.rootType}.${f.name}"`);
    }
    let group: Group | undefined;
    if (op.kind === "mutation") {
      if (previous && model.resolvableIn.includes(previous.subgraph)) group = previous;
      else {
        const subgraph = bestRoot(graph, b.search, { field: f, model, open: [] });
        group = newGroup(b, { subgraph, entity: false, path: [], root: root++ });
      }
      previous = group;
    } else {
      const open = b.groups.filter((g) => !g.entity).map((g) => g.subgraph);
      const subgraph = bestRoot(graph, b.search, { field: f, model, open });
      group = b.groups.find((g) => !g.entity && g.subgraph === subgraph) ??
        newGroup(b, { subgraph, entity: false, path: [], root: 0 });
    }
    const pos: Pos = {
      group,
      sel: group.sel,
      type: op.rootType,
      path: [],
      provided: null,
      parent: null,
      clientKeys: new Map(),
    };
    addLocal(b, { pos, field: f });
  }
  return b.groups;
}

function newGroup(
  b: Builder,
  options: { subgraph: string; entity: boolean; path: readonly string[]; root: number },
): Group {
  const group = createGroup(b.groups.length, options);
  b.groups.push(group);
  return group;
}

function touch(b: Builder, group: Group): void {
  for (const r of b.recorders) r.add(group);
}

/** Plans the fields of one level: the best combination of paths, then each path. */
export function planFields(
  b: Builder,
  at: { readonly pos: Pos; readonly fields: readonly NField[] },
): void {
  const { pos, fields } = at;
  const choices: Choice[] = [];
  // Subgraphs with an entity fetch at this path already: only looked up when a field needs a
  // move (most fields are local).
  let existing: Set<string> | null = null;
  const entered = (): ReadonlySet<string> => {
    if (existing) return existing;
    const top = topOf(pos);
    const pathKey = top.group.pathKey + "|" + top.path.join(".");
    existing = new Set<string>();
    for (const g of b.groups) if (g.entity && g.pathKey === pathKey) existing.add(g.subgraph);
    return existing;
  };
  let alternatives = false;
  for (const f of fields) {
    if (f.introspection || f.name === "__typename") continue;
    const model = b.graph.field(pos.type, f.name);
    if (!model) continue;
    const candidates = fieldCandidates(b.graph, pos, {
      model,
      name: f.name,
      entering: b.entering,
      existing: entered,
    });
    if (candidates.length > 1) alternatives = true;
    choices.push({ field: f, model, candidates });
  }
  if (!alternatives) {
    // One way (or none) per field: nothing to choose.
    for (const { field, candidates } of choices) {
      apply(b, pos, { field, chosen: candidates[0] });
    }
    return;
  }
  const best = bestCombination(b.graph, b.search, { choices, existing: entered() });
  for (const { field } of choices) apply(b, pos, { field, chosen: best.get(field) });
}

function apply(
  b: Builder,
  pos: Pos,
  choice: { readonly field: NField; readonly chosen: Candidate | undefined },
): void {
  const { field: f, chosen } = choice;
  if (!chosen) {
    throw new PlanningError(`No subgraph can resolve the field "${pos.type}.${f.name}"`);
  }
  const r = chosen.resolution;
  const model = b.graph.field(pos.type, f.name);
  if (model?.contextArguments && r.kind !== "up") {
    const subgraph = r.kind === "local" ? pos.group.subgraph : r.subgraph;
    return contextField(b, { pos, field: f, model, subgraph }, WALK);
  }
  if (r.kind === "local") return addLocal(b, { pos, field: f });
  if (r.kind === "entity") {
    const requires = b.graph.field(pos.type, f.name)?.requires.get(r.subgraph);
    return addLocal(b, { pos: enter(b, pos, { target: r.subgraph, requires }), field: f });
  }
  let at: Pos;
  const anc = r.chain[0]!;
  if (r.atRoot) {
    // A shared root field: ask the other subgraph's root for the rest of the value.
    const group = b.groups.find((g) => !g.entity && g.subgraph === r.subgraph) ??
      newGroup(b, { subgraph: r.subgraph, entity: false, path: [], root: 0 });
    touch(b, group);
    at = { ...anc, group, sel: group.sel, parent: null };
  } else {
    at = enter(b, anc, { target: r.subgraph, requires: undefined });
  }
  for (let i = 1; i < r.chain.length; i++) {
    const original = r.chain[i]!;
    const link = original.up!;
    const sf = at.sel.field(link.field.key, link.field.name, link.field.args);
    if (!sf) throw new PlanningError(`Conflicting selections of "${link.field.key}"`);
    sf.child ??= new Sel();
    const sel = link.fragment ? sf.child.fragment(link.fragment) : sf.child;
    if (link.fragment) sf.child.typename();
    at = {
      group: at.group,
      sel,
      type: original.type,
      path: original.path,
      provided: null,
      parent: null,
      clientKeys: original.clientKeys,
      up: { pos: at, field: link.field, fragment: link.fragment },
    };
  }
  addLocal(b, { pos: at, field: f });
}

/** Adds (or reuses) an entity fetch to `target` for the object at `pos`; returns its position. */
export function enter(
  b: Builder,
  pos: Pos,
  options: { target: string; requires: string | undefined },
): Pos {
  const { target, requires } = options;
  if (++b.entries > MAX_ENTRIES) {
    throw new PlanningError("The operation needs too many entity fetches to plan");
  }
  if (b.recorders.length > MAX_NESTING) {
    throw new PlanningError(`Cannot plan the requirements of "${pos.type}": they form a cycle`);
  }
  const top = topOf(pos);
  const type = pos.type;
  const move = b.graph.entityMove(type, target);
  if (!move) throw new PlanningError(`No key of "${type}" enters the subgraph "${target}"`);
  // Prefer a key the current subgraph resolves without further fetches.
  const keyText = move.keys.find((key) => keyIsLocal(b.graph, { top, key })) ?? move.keys[0]!;
  const touched = new Set<Group>([top.group]);
  b.recorders.push(touched);
  let reqs: RepSelection;
  try {
    // The key is planned with this move marked (a key never needs the subgraph it enters);
    // `@requires` fields may come from anywhere, the entered subgraph included (a chain
    // A → B → A enters it again for other fields).
    b.entering.push(`${type}@${target}`);
    try {
      reqs = planRequirements(b, {
        pos: top,
        items: itemsFor(b.graph, { type, items: b.graph.fieldSet(keyText) }),
      });
    } finally {
      b.entering.pop();
    }
    const keyNames = new Set(b.graph.fieldSet(keyText).map((i) => i.name));
    for (const f of reqs.fields) if (keyNames.has(f.key)) f.isKey = true;
    if (requires !== undefined) {
      const more = planRequirements(b, {
        pos: top,
        items: itemsFor(b.graph, { type, items: b.graph.fieldSet(requires) }),
      });
      mergeRep(reqs, more);
    }
  } finally {
    b.recorders.pop();
  }
  const group = entityGroup(b, { target, top, type, reqs, touched });
  for (const t of touched) if (t !== group) group.deps.add(t);
  const existing = group.reqs.get(type);
  if (existing) mergeRep(existing, reqs);
  else group.reqs.set(type, reqs);
  if (move.type !== type) group.sendTypename.set(type, move.type);
  touch(b, group);
  return {
    group,
    sel: group.sel.fragment(move.type),
    type: move.type,
    path: top.path,
    provided: null,
    parent: top,
    clientKeys: top.clientKeys,
  };
}

function entityGroup(
  b: Builder,
  options: { target: string; top: Pos; type: string; reqs: RepSelection; touched: Set<Group> },
): Group {
  const { target, top, type, reqs, touched } = options;
  const pathKey = top.group.pathKey + "|" + top.path.join(".");
  for (const g of b.groups) {
    if (!g.entity || g.subgraph !== target || g.pathKey !== pathKey || touched.has(g)) continue;
    let cycle = false;
    for (const t of touched) if (dependsOn(t, g)) cycle = true;
    if (cycle || !compatible(g.reqs.get(type), reqs)) continue;
    return g;
  }
  const group = newGroup(b, {
    subgraph: target,
    entity: true,
    path: top.path,
    root: top.group.root,
  });
  // pathKey includes nothing of the parent: groups at one path share it.
  group.pathKey = pathKey;
  return group;
}

/** True when two representations read every field they share from the same response keys. */
function compatible(existing: RepSelection | undefined, added: RepSelection): boolean {
  if (!existing) return true;
  const same = (a: readonly RepField[], b: readonly RepField[]) =>
    b.every((f) => {
      const other = a.find((e) => e.key === f.key);
      if (!other) return true;
      if (other.dataKey !== f.dataKey) return false;
      return !other.selection || !f.selection || compatible(other.selection, f.selection);
    });
  if (!same(existing.fields, added.fields)) return false;
  for (const [type, list] of added.byType) {
    const other = existing.byType.get(type);
    if (other && !same(other, list)) return false;
  }
  return true;
}

/** Plans requirement fields (keys, requires) at a position; returns how to read them. */
function planRequirements(
  b: Builder,
  at: { readonly pos: Pos; readonly items: readonly FieldSetItem[] },
): RepSelection {
  const { pos, items } = at;
  const rep: RepSelection = { fields: [], byType: new Map() };
  pos.sel.typename();
  touch(b, pos.group);
  rep.fields.push({ key: "__typename", dataKey: "__typename", selection: null });
  for (const item of items) {
    if (item.name === null || item.name === "__typename") continue;
    const model = b.graph.field(pos.type, item.name);
    if (!model) continue;
    const dataKey = internalKey(pos, { name: item.name, args: item.args });
    const taken = takenBelow(pos, { key: dataKey, item });
    const nfield = internalField(b.graph, { key: dataKey, item, type: pos.type, model, taken });
    planFields(b, { pos, fields: [nfield] });
    rep.fields.push(repField(b.graph, item, { dataKey, model, planned: nfield.selection }));
  }
  return rep;
}

/** Adds a field to a position's selection in its own subgraph, then plans its sub-selection. */
export function addLocal(
  b: Builder,
  at: { readonly pos: Pos; readonly field: NField },
): void {
  const { pos, field: f } = at;
  const model = b.graph.field(pos.type, f.name);
  const subgraph = pos.group.subgraph;
  const type = model ? model.typeIn.get(subgraph) ?? model.type : "";
  let key = f.key;
  if (!pos.sel.fields.has(key) && pos.sel.conflicts(key, f.name, f.args, type)) {
    // Same response key, other type in a sibling type condition: alias, renamed back later.
    for (let i = 0;; i++) {
      key = `${f.key}__alias_${i}`;
      if (!pos.sel.fields.has(key) && !pos.sel.conflicts(key, f.name, f.args, type)) break;
    }
    pos.group.rewrites.push({ path: pos.path, type: pos.type, from: key, to: f.key });
  }
  const sf = pos.sel.field(key, f.name, f.args, type);
  if (!sf) throw new PlanningError(`Conflicting selections of "${f.key}" in "${pos.type}"`);
  touch(b, pos.group);
  if (f.defer !== undefined) pos.group.defers.add(f.defer);
  for (const v of f.variables) pos.group.variables.add(v);
  if (!f.selection || !model) return;
  const path = [...pos.path, f.key];
  for (let i = listDepth(f.type); i > 0; i--) path.push("@");
  const item = providedItem(b.graph, pos.provided, { type: pos.type, name: f.name });
  const provided = providedBelow(b.graph, model, { subgraph, item });
  sf.child ??= new Sel();
  const selection = f.selection;
  if (!selection.abstract) {
    planFields(b, {
      pos: {
        group: pos.group,
        sel: sf.child,
        type: selection.typeName,
        path,
        provided,
        parent: null,
        clientKeys: keysOf(selection.fields),
        up: { pos, field: f, fragment: null },
      },
      fields: selection.fields,
    });
    return;
  }
  abstractFields(b, { pos, field: f, child: sf.child, path, provided, subgraphType: type }, WALK);
}

/** The builder's recursive steps, for the modules it calls. */
const WALK: Walk = { planFields, enter, addLocal, planRequirements };

function listDepth(type: TypeRef): number {
  if (type.kind === "nonNull") return listDepth(type.of);
  if (type.kind === "list") return 1 + listDepth(type.of);
  return 0;
}
