/**
 * The query planner: a normalized operation + the supergraph model → a plain,
 * printable {@linkcode QueryPlan} (Apollo/Hive node names) and its executable
 * twin ({@linkcode PlanStep}). Pure and deterministic: equal inputs give
 * byte-equal JSON.
 *
 * Fields are assigned greedily: a field stays in the subgraph of its parent
 * when that subgraph resolves it (or `@provides` it); otherwise an entity
 * fetch (`_entities`) to a subgraph that resolves it is added at the field's
 * response path, with the `@key` fields (and `@requires` fields) planned in
 * the parent as requirements. Fetches form a dependency graph, printed as
 * `Sequence` of `Parallel` levels. Entity fetches to one subgraph at one level
 * of that graph whose selections cannot interfere are merged into one
 * `_entities` call serving several paths (`Flatten.paths`).
 *
 * @module
 */
import type { FieldModel, TypeModel } from "../supergraph/types.ts";
import type { SupergraphModel } from "../supergraph/mod.ts";
import { type FieldSetItem, parseFieldSet } from "./_fieldset.ts";
import type { NField, NormalizedOperation, NSelection, TypeRef } from "./normalize.ts";
import { Sel, type SelField } from "./_sel.ts";
import { mergeRep, printReps, type RepField, type RepSelection } from "./_rep.ts";

export type { RepField, RepSelection };

/** A plan: plain data (no functions, Maps, Sets or ids), so equal inputs give byte-equal JSON. */
export interface QueryPlan {
  readonly kind: "QueryPlan";
  readonly node: PlanNode | null;
}

/** A node of the plan tree. */
export type PlanNode = FetchNode | SequenceNode | ParallelNode | FlattenNode;

/** Fetches run one after the other. */
export interface SequenceNode {
  readonly kind: "Sequence";
  readonly nodes: readonly PlanNode[];
}

/** Fetches run concurrently. */
export interface ParallelNode {
  readonly kind: "Parallel";
  readonly nodes: readonly PlanNode[];
}

/** An entity fetch merged at a response path (`["products", "@"]`). */
export interface FlattenNode {
  readonly kind: "Flatten";
  readonly path: readonly string[];
  /**
   * Merged entity fetches only: every response path the one `_entities` call serves (`path`
   * is the first). Absent when the fetch serves one path.
   */
  readonly paths?: readonly (readonly string[])[];
  readonly node: FetchNode;
}

/** One subgraph request. */
export interface FetchNode {
  readonly kind: "Fetch";
  readonly serviceName: string;
  /** Client variables the operation uses, sorted. */
  readonly variableUsages: readonly string[];
  /** The printed, minified subgraph operation. */
  readonly operation: string;
  readonly operationKind: "query" | "mutation";
  /** Entity fetches only: the representation selection (`...on Product{__typename upc}`). */
  readonly requires?: string;
}

/** After a fetch: objects of `type` at `path` get key `from` renamed to `to`. */
export interface Rewrite {
  readonly path: readonly string[];
  readonly type: string;
  readonly from: string;
  readonly to: string;
}

/** One response path a merged entity fetch serves, and the data `__typename`s it sends from there. */
export interface FetchTarget {
  readonly path: readonly string[];
  readonly types: ReadonlySet<string>;
}

/** The executable twin of a fetch node. */
export interface FetchStep {
  readonly kind: "Fetch";
  readonly node: FetchNode;
  /** Position of the fetch in planning order (orders errors independently of timing). */
  readonly index: number;
  /** `JSON.stringify(node.operation)`, computed once. */
  readonly queryJson: string;
  readonly subgraph: string;
  /** Merge path; empty for root fetches. */
  readonly path: readonly string[];
  /** Entity fetches: representation selection per `__typename`; null for root fetches. */
  readonly representations: ReadonlyMap<string, RepSelection> | null;
  /**
   * Merged entity fetches only: the paths served and the types sent from each (`path` is the
   * first). Absent: representations are collected at `path` for every type of `representations`.
   */
  readonly targets?: readonly FetchTarget[];
  /** `__typename` to send per data `__typename` (`@interfaceObject` targets get the interface). */
  readonly sendTypename: ReadonlyMap<string, string>;
  readonly variableUsages: readonly string[];
  /** Internal aliases renamed back after the fetch, outermost first. */
  readonly rewrites: readonly Rewrite[];
}

/** Executable plan tree. */
export type PlanStep =
  | FetchStep
  | { readonly kind: "Sequence" | "Parallel"; readonly steps: readonly PlanStep[] };

/** A planned operation. */
export interface PlannedOperation {
  readonly plan: QueryPlan;
  readonly step: PlanStep | null;
}

// ---------------------------------------------------------------- building blocks

interface Group {
  readonly id: number;
  readonly subgraph: string;
  readonly entity: boolean;
  readonly path: readonly string[];
  readonly pathKey: string;
  readonly sel: Sel;
  readonly reqs: Map<string, RepSelection>;
  readonly sendTypename: Map<string, string>;
  readonly deps: Set<Group>;
  readonly variables: Set<string>;
  /** Internal aliases renamed back after the fetch. */
  readonly rewrites: Rewrite[];
  /** Index of the root group it descends from (mutations run roots in order). */
  readonly root: number;
  /** Entity fetches merged into this one (same subgraph, same level), in planning order. */
  readonly merged: Group[];
}

interface Pos {
  readonly group: Group;
  readonly sel: Sel;
  /** Type of the position in the group's subgraph (a concrete object type or interface object). */
  readonly type: string;
  readonly path: readonly string[];
  readonly provided: readonly FieldSetItem[] | null;
  /** Position in the parent group when this is an entity fetch's root. */
  readonly parent: Pos | null;
  /** Client fields at this object (response keys the planner must not reuse). */
  readonly clientKeys: ReadonlyMap<string, NField>;
  /** The position and field this position is the sub-selection of (same group). */
  readonly up?: { readonly pos: Pos; readonly field: NField; readonly fragment: string | null };
}

const EMPTY_KEYS: ReadonlyMap<string, NField> = new Map();

function listDepth(type: TypeRef): number {
  if (type.kind === "nonNull") return listDepth(type.of);
  if (type.kind === "list") return 1 + listDepth(type.of);
  return 0;
}

function typeRefOf(printed: string): TypeRef {
  if (printed.endsWith("!")) return { kind: "nonNull", of: typeRefOf(printed.slice(0, -1)) };
  if (printed.startsWith("[")) return { kind: "list", of: typeRefOf(printed.slice(1, -1)) };
  return { kind: "composite", name: printed };
}

/** Planning failed: the operation cannot be served by the subgraphs. */
export class PlanningError extends Error {
  /** @param message Sentence-case message. */
  constructor(message: string) {
    super(message);
    this.name = "PlanningError";
  }
}

class Planner {
  readonly #model: SupergraphModel;
  readonly #op: NormalizedOperation;
  readonly #groups: Group[] = [];
  readonly #recorders: Set<Group>[] = [];
  readonly #fieldSets = new Map<string, FieldSetItem[]>();
  #root = 0;
  #entries = 0;
  readonly #entering: string[] = [];

  constructor(model: SupergraphModel, op: NormalizedOperation) {
    this.#model = model;
    this.#op = op;
  }

  // -------------------------------------------------------------- model helpers

  #type(name: string): TypeModel | undefined {
    return this.#model.types.get(name);
  }

  #field(type: string, name: string): FieldModel | undefined {
    const model = this.#type(type);
    const own = model?.fields.get(name);
    if (own && own.resolvableIn.length > 0) return own;
    // An @interfaceObject or entity interface may own a field of a concrete type.
    for (const i of model?.interfaces ?? []) {
      const f = this.#type(i)?.fields.get(name);
      if (f && f.resolvableIn.length > 0) return f;
    }
    return own;
  }

  #fieldSet(text: string): FieldSetItem[] {
    let items = this.#fieldSets.get(text);
    if (!items) {
      items = parseFieldSet(text);
      this.#fieldSets.set(text, items);
    }
    return items;
  }

  #isKeyField(type: string, subgraph: string, name: string): boolean {
    for (const key of this.#type(type)?.keys ?? []) {
      if (key.graph !== subgraph) continue;
      if (this.#fieldSet(key.fields).some((item) => item.name === name)) return true;
    }
    return false;
  }

  #provided(
    provided: readonly FieldSetItem[] | null,
    type: string,
    name: string,
  ): FieldSetItem | null {
    if (!provided) return null;
    const interfaces = this.#type(type)?.interfaces ?? [];
    for (const item of provided) {
      if (item.name === name) return item;
      if (
        item.name === null &&
        (item.typeCondition === null || item.typeCondition === type ||
          interfaces.includes(item.typeCondition))
      ) {
        const found = this.#provided(item.selection, type, name);
        if (found) return found;
      }
    }
    return null;
  }

  #resolvable(pos: Pos, name: string): boolean {
    const subgraph = pos.group.subgraph;
    const field = this.#field(pos.type, name);
    if (!field) return false;
    if (field.resolvableIn.includes(subgraph)) {
      // A field of an interface resolved through a concrete type: the subgraph must know the type.
      return true;
    }
    if (this.#provided(pos.provided, pos.type, name)) return true;
    // A key field the subgraph lists without resolving it (Federation 1 `extend type` keys);
    // one it marks @external in Federation 2 is only ever received, never returned.
    return !field.externalIn.includes(subgraph) && this.#isKeyField(pos.type, subgraph, name);
  }

  #possibleIn(subgraph: string, abstract: string, concrete: string): boolean {
    const a = this.#type(abstract);
    const c = this.#type(concrete);
    if (!a || !c || !c.graphs.includes(subgraph)) return false;
    if (a.kind === "union") return (a.membersIn.get(subgraph) ?? []).includes(concrete);
    return (c.implementsIn.get(subgraph) ?? []).includes(abstract);
  }

  // -------------------------------------------------------------- groups

  #touch(group: Group): void {
    for (const r of this.#recorders) r.add(group);
  }

  #newGroup(subgraph: string, entity: boolean, path: readonly string[], root: number): Group {
    const group: Group = {
      id: this.#groups.length,
      subgraph,
      entity,
      path,
      pathKey: path.join("."),
      sel: new Sel(),
      reqs: new Map(),
      sendTypename: new Map(),
      deps: new Set(),
      variables: new Set(),
      rewrites: [],
      root,
      merged: [],
    };
    this.#groups.push(group);
    return group;
  }

  #dependsOn(group: Group, target: Group, seen = new Set<Group>()): boolean {
    if (group === target) return true;
    if (seen.has(group)) return false;
    seen.add(group);
    for (const d of group.deps) if (this.#dependsOn(d, target, seen)) return true;
    return false;
  }

  #compatible(existing: RepSelection | undefined, added: RepSelection): boolean {
    if (!existing) return true;
    for (const f of added.fields) {
      const other = existing.fields.find((e) => e.key === f.key);
      if (other && other.dataKey !== f.dataKey) return false;
    }
    return true;
  }

  #entityGroup(
    subgraph: string,
    top: Pos,
    type: string,
    reqs: RepSelection,
    touched: Set<Group>,
  ): Group {
    const pathKey = top.group.pathKey + "|" + top.path.join(".");
    for (const g of this.#groups) {
      if (!g.entity || g.subgraph !== subgraph || g.pathKey !== pathKey || touched.has(g)) continue;
      let cycle = false;
      for (const t of touched) if (this.#dependsOn(t, g)) cycle = true;
      if (cycle || !this.#compatible(g.reqs.get(type), reqs)) continue;
      return g;
    }
    const group = this.#newGroup(subgraph, true, top.path, top.group.root);
    // pathKey includes nothing of the parent: groups at one path share it.
    (group as { pathKey: string }).pathKey = pathKey;
    return group;
  }

  // -------------------------------------------------------------- planning

  plan(): PlannedOperation {
    const op = this.#op;
    const fields = op.selection.fields;
    const rootType = op.rootType;
    let previous: Group | null = null;
    for (const f of fields) {
      if (f.introspection || f.name === "__typename") continue;
      const model = this.#field(rootType, f.name);
      if (!model || model.resolvableIn.length === 0) {
        throw new PlanningError(`No subgraph resolves the field "${rootType}.${f.name}"`);
      }
      let group: Group | undefined;
      if (op.kind === "mutation") {
        if (previous && model.resolvableIn.includes(previous.subgraph)) group = previous;
        else group = this.#newGroup(this.#chooseRoot(model, f), false, [], this.#root++);
        previous = group;
      } else {
        group = this.#groups.find((g) => !g.entity && model.resolvableIn.includes(g.subgraph));
        group ??= this.#newGroup(this.#chooseRoot(model, f), false, [], 0);
      }
      const pos: Pos = {
        group,
        sel: group.sel,
        type: rootType,
        path: [],
        provided: null,
        parent: null,
        clientKeys: EMPTY_KEYS,
      };
      this.#addLocal(pos, f);
    }
    return this.#build();
  }

  #chooseRoot(model: FieldModel, field: NField): string {
    if (model.resolvableIn.length === 1) return model.resolvableIn[0]!;
    let best = model.resolvableIn[0]!;
    let bestScore = -1;
    for (const subgraph of model.resolvableIn) {
      const score = this.#score(subgraph, field.selection, model.namedType);
      if (score > bestScore) {
        best = subgraph;
        bestScore = score;
      }
    }
    return best;
  }

  #score(subgraph: string, selection: NSelection | null, type: string): number {
    if (!selection) return 0;
    let score = 0;
    const slices = selection.abstract ? [...selection.byType] : [[type, selection.fields] as const];
    for (const [typeName, fields] of slices) {
      for (const f of fields) {
        const m = this.#field(typeName, f.name);
        if (f.name === "__typename" || m?.resolvableIn.includes(subgraph)) {
          score += 1 + (m ? this.#score(subgraph, f.selection, m.namedType) : 0);
        }
      }
    }
    return score;
  }

  #planFields(pos: Pos, fields: readonly NField[]): void {
    for (const f of fields) {
      if (f.introspection || f.name === "__typename") continue;
      this.#planField(pos, f);
    }
  }

  #planField(pos: Pos, f: NField): void {
    const model = this.#field(pos.type, f.name);
    if (!model) return;
    const subgraph = pos.group.subgraph;
    const local = this.#resolvable(pos, f.name);
    const provided = this.#provided(pos.provided, pos.type, f.name) !== null;
    if (local && (provided || !model.requires.has(subgraph))) {
      this.#addLocal(pos, f);
      return;
    }
    const target = local ? subgraph : this.#chooseTarget(model, pos);
    if (target === null && this.#jumpUp(pos, f, model)) return;
    if (target === null) {
      throw new PlanningError(`No subgraph can resolve the field "${pos.type}.${f.name}"`);
    }
    this.#jump(pos, f, target, model);
  }

  /**
   * A field of a value object (no key) that the current subgraph cannot resolve: enter the
   * nearest entity ancestor in a subgraph that resolves the whole path down to the field.
   */
  #jumpUp(pos: Pos, f: NField, model: FieldModel): boolean {
    const chain: Pos[] = [pos];
    for (let cur = pos; cur.up; cur = cur.up.pos) {
      // An entity is reached by its keys only (as Apollo plans): never by refetching a parent.
      if ((this.#type(cur.type)?.keys.length ?? 0) > 0) return false;
      const anc = cur.up.pos;
      chain.unshift(anc);
      const atRoot = !anc.group.entity && anc.path.length === 0 && anc.parent === null &&
        this.#op.kind === "query";
      for (const target of model.resolvableIn) {
        if (!atRoot && !this.#enterable(anc.type, target)) continue;
        let ok = true;
        for (let i = 1; i < chain.length; i++) {
          const link = chain[i]!.up!;
          if (!this.#field(link.pos.type, link.field.name)?.resolvableIn.includes(target)) {
            ok = false;
          }
        }
        if (!ok) continue;
        let at: Pos;
        if (atRoot) {
          // A shared root field: ask the other subgraph's root for the rest of the value.
          const group = this.#groups.find((g) => !g.entity && g.subgraph === target) ??
            this.#newGroup(target, false, [], 0);
          this.#touch(group);
          at = { ...anc, group, sel: group.sel, parent: null };
        } else {
          at = this.#enter(anc, target, undefined);
        }
        for (let i = 1; i < chain.length; i++) {
          const original = chain[i]!;
          const link = original.up!;
          const sf = at.sel.field(link.field.key, link.field.name, link.field.args);
          if (!sf) return false;
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
        this.#addLocal(at, f);
        return true;
      }
    }
    return false;
  }

  #chooseTarget(model: FieldModel, pos: Pos): string | null {
    let top = pos;
    while (top.parent) top = top.parent;
    const pathKey = top.group.pathKey + "|" + top.path.join(".");
    // Never a subgraph whose key is being planned right now (its key would need itself).
    const candidates = model.resolvableIn.filter((s) =>
      this.#enterable(pos.type, s) && !this.#entering.includes(`${pos.type}@${s}`)
    );
    const existing = candidates.find((s) =>
      this.#groups.some((g) => g.entity && g.subgraph === s && g.pathKey === pathKey)
    );
    // Else prefer a subgraph entered by a key the current position resolves without fetches.
    const direct = candidates.find((s) =>
      (this.#entryKey(pos.type, s)?.fields ?? []).some((k) =>
        this.#fieldSet(k).every((item) => item.name === null || this.#resolvable(top, item.name))
      )
    );
    return existing ?? direct ?? candidates[0] ?? null;
  }

  /** The subgraph can be entered for objects of `type` (a resolvable key, maybe on an interface object). */
  #enterable(type: string, subgraph: string): boolean {
    return this.#entryKey(type, subgraph) !== null;
  }

  #entryKey(type: string, subgraph: string): { type: string; fields: string[] } | null {
    const keys = (this.#type(type)?.keys ?? []).filter((k) => k.graph === subgraph && k.resolvable);
    if (keys.length > 0) return { type, fields: keys.map((k) => k.fields) };
    for (const i of this.#type(type)?.interfaces ?? []) {
      const iface = this.#type(i);
      if (!iface) continue;
      const ikeys = iface.keys.filter((k) => k.graph === subgraph && k.resolvable);
      if (ikeys.length > 0 && iface.interfaceObjectIn.includes(subgraph)) {
        return { type: i, fields: ikeys.map((k) => k.fields) };
      }
    }
    return null;
  }

  #jump(pos: Pos, f: NField, target: string, model: FieldModel): void {
    this.#addLocal(this.#enter(pos, target, model.requires.get(target)), f);
  }

  /** Adds (or reuses) an entity fetch to `target` for the object at `pos`; returns its position. */
  #enter(pos: Pos, target: string, requires: string | undefined): Pos {
    if (++this.#entries > 10_000) {
      throw new PlanningError("The operation needs too many entity fetches to plan");
    }
    if (this.#recorders.length > 32) {
      throw new PlanningError(`Cannot plan the requirements of "${pos.type}": they form a cycle`);
    }
    let top = pos;
    while (top.parent) top = top.parent;
    const type = pos.type;
    const entry = this.#entryKey(type, target);
    if (!entry) throw new PlanningError(`No key of "${type}" enters the subgraph "${target}"`);
    // Prefer a key the current subgraph resolves without further fetches.
    let keyText = entry.fields[0]!;
    for (const k of entry.fields) {
      if (
        this.#fieldSet(k).every((item) => item.name === null || this.#resolvable(top, item.name))
      ) {
        keyText = k;
        break;
      }
    }
    const items = [...this.#fieldSet(keyText)];
    if (requires !== undefined) items.push(...this.#fieldSet(requires));
    const touched = new Set<Group>([top.group]);
    this.#recorders.push(touched);
    this.#entering.push(`${type}@${target}`);
    let reqs: RepSelection;
    try {
      reqs = this.#planRequirements(top, type, items);
      const keyNames = new Set(this.#fieldSet(keyText).map((i) => i.name));
      for (const f of reqs.fields) if (keyNames.has(f.key)) f.isKey = true;
    } finally {
      this.#recorders.pop();
      this.#entering.pop();
    }
    const group = this.#entityGroup(target, top, type, reqs, touched);
    for (const t of touched) if (t !== group) group.deps.add(t);
    this.#mergeReqs(group, type, reqs);
    if (entry.type !== type) group.sendTypename.set(type, entry.type);
    this.#touch(group);
    const fragmentType = entry.type !== type ? entry.type : type;
    return {
      group,
      sel: group.sel.fragment(fragmentType),
      type: entry.type !== type ? entry.type : type,
      path: top.path,
      provided: null,
      parent: top,
      clientKeys: top.clientKeys,
    };
  }

  #mergeReqs(group: Group, type: string, reqs: RepSelection): void {
    const existing = group.reqs.get(type);
    if (!existing) {
      group.reqs.set(type, reqs);
      return;
    }
    mergeRep(existing, reqs);
  }

  /** Plans internal fields (keys, requires) at a position; returns how to read them. */
  #planRequirements(pos: Pos, type: string, items: readonly FieldSetItem[]): RepSelection {
    const rep: RepSelection = { fields: [], byType: new Map() };
    pos.sel.typename();
    this.#touch(pos.group);
    rep.fields.push({ key: "__typename", dataKey: "__typename", selection: null });
    this.#planRequirementItems(pos, type, items, rep);
    return rep;
  }

  #planRequirementItems(
    pos: Pos,
    type: string,
    items: readonly FieldSetItem[],
    rep: RepSelection,
  ): void {
    for (const item of items) {
      if (item.name === null) {
        // Inline fragment inside a requirement on an abstract position: handled by the caller.
        continue;
      }
      if (item.name === "__typename") continue;
      const model = this.#field(type, item.name);
      if (!model) continue;
      const dataKey = this.#internalKey(pos, item.name, item.args);
      const nfield = this.#internalField(dataKey, item, type, model);
      this.#planField(pos, nfield);
      rep.fields.push({ key: item.name, dataKey, selection: this.#repSelection(item, model) });
    }
  }

  #repSelection(item: FieldSetItem, model: FieldModel): RepSelection | null {
    if (item.selection.length === 0) return null;
    const rep: RepSelection = { fields: [], byType: new Map() };
    const named = this.#type(model.namedType);
    const abstract = named?.kind === "interface" || named?.kind === "union";
    if (abstract) rep.fields.push({ key: "__typename", dataKey: "__typename", selection: null });
    for (const sub of item.selection) {
      if (sub.name === null) {
        if (!sub.typeCondition) continue;
        const list = rep.byType.get(sub.typeCondition) ?? [];
        for (const s of sub.selection) {
          if (s.name === null) continue;
          const m = this.#field(sub.typeCondition, s.name);
          list.push({
            key: s.name,
            dataKey: s.name,
            selection: m ? this.#repSelection(s, m) : null,
          });
        }
        rep.byType.set(sub.typeCondition, list);
        continue;
      }
      if (sub.name === "__typename") {
        if (!abstract) {
          rep.fields.push({ key: "__typename", dataKey: "__typename", selection: null });
        }
        continue;
      }
      const m = this.#field(model.namedType, sub.name);
      rep.fields.push({
        key: sub.name,
        dataKey: sub.name,
        selection: m ? this.#repSelection(sub, m) : null,
      });
    }
    return rep;
  }

  #internalKey(pos: Pos, name: string, args: string): string {
    const free = (key: string) => {
      const client = pos.clientKeys.get(key);
      if (client && (client.name !== name || client.args !== args)) return false;
      const existing = pos.sel.fields.get(key);
      return !existing || (existing.name === name && existing.args === args);
    };
    if (free(name)) return name;
    for (let i = 1;; i++) {
      const key = `${name}__gw${i}`;
      if (free(key)) return key;
    }
  }

  /** A field set item as a normalized field (so requirements plan like client fields). */
  #internalField(key: string, item: FieldSetItem, type: string, model: FieldModel): NField {
    return {
      key,
      name: item.name ?? "",
      args: item.args,
      variables: [],
      parentType: type,
      namedType: model.namedType,
      type: typeRefOf(model.type),
      selection: item.selection.length > 0
        ? this.#selectionOf(model.namedType, item.selection)
        : null,
      introspection: false,
    };
  }

  #selectionOf(typeName: string, items: readonly FieldSetItem[]): NSelection {
    const type = this.#type(typeName);
    const toFields = (t: string, list: readonly FieldSetItem[]): NField[] => {
      const out: NField[] = [];
      for (const item of list) {
        if (item.name === null || item.name === "__typename") continue;
        const m = this.#field(t, item.name);
        if (m) out.push(this.#internalField(item.name, item, t, m));
      }
      return out;
    };
    if (type?.kind === "interface" || type?.kind === "union") {
      const byType = new Map<string, NField[]>();
      const possible = [...this.#model.types.values()].filter((t) =>
        t.kind === "object" && (t.interfaces.includes(typeName) || type.members.includes(t.name))
      );
      for (const p of possible) {
        const list = items.filter((i) => i.name !== null);
        const fromFragments = items.filter((i) =>
          i.name === null && (i.typeCondition === p.name || i.typeCondition === typeName)
        ).flatMap((i) => i.selection);
        byType.set(p.name, toFields(p.name, [...list, ...fromFragments]));
      }
      const interfaceFields = toFields(typeName, items.filter((i) => i.name !== null));
      return { typeName, abstract: true, fields: [], byType, interfaceFields };
    }
    return {
      typeName,
      abstract: false,
      fields: toFields(typeName, items),
      byType: new Map(),
      interfaceFields: [],
    };
  }

  #addLocal(pos: Pos, f: NField): void {
    const model = this.#field(pos.type, f.name);
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
    this.#touch(pos.group);
    for (const v of f.variables) pos.group.variables.add(v);
    if (!f.selection) return;
    const path = [...pos.path, f.key];
    for (let i = listDepth(f.type); i > 0; i--) path.push("@");
    let provided: readonly FieldSetItem[] | null = null;
    const providesText = model?.provides.get(subgraph);
    if (providesText !== undefined) provided = this.#fieldSet(providesText);
    else provided = this.#provided(pos.provided, pos.type, f.name)?.selection ?? null;
    if (provided && provided.length === 0) provided = null;
    sf.child ??= new Sel();
    const child = sf.child;
    const selection = f.selection;
    if (!selection.abstract) {
      this.#planFields({
        group: pos.group,
        sel: child,
        type: selection.typeName,
        path,
        provided,
        parent: null,
        clientKeys: keysOf(selection.fields),
        up: { pos, field: f, fragment: null },
      }, selection.fields);
      return;
    }
    child.typename();
    const abstractModel = this.#type(selection.typeName);
    if (abstractModel?.interfaceObjectIn.includes(subgraph)) {
      this.#planInterfaceObject(pos.group, child, path, provided, selection);
      return;
    }
    if (this.#atInterfaceLevel(subgraph, selection)) {
      // Same leaf fields for every member, all resolved on the interface: no type conditions.
      this.#planFields({
        group: pos.group,
        sel: child,
        type: selection.typeName,
        path,
        provided: null,
        parent: null,
        clientKeys: keysOf(selection.interfaceFields),
      }, selection.interfaceFields);
      return;
    }
    for (const [concrete, fields] of selection.byType) {
      // `__typename` alone needs no type condition: the abstract field always fetches it.
      if (!fields.some((f) => f.name !== "__typename")) continue;
      if (!this.#possibleIn(subgraph, selection.typeName, concrete)) continue;
      this.#planFields({
        group: pos.group,
        sel: child.fragment(concrete),
        type: concrete,
        path,
        provided,
        parent: null,
        clientKeys: keysOf(fields),
        up: { pos, field: f, fragment: concrete },
      }, fields);
    }
  }

  /**
   * True when an interface selection can be sent without type conditions: every member the
   * subgraph can return selects exactly the interface's own leaf fields, and the subgraph
   * resolves each of them on the interface and on every such member.
   */
  #atInterfaceLevel(subgraph: string, selection: NSelection): boolean {
    const iface = this.#type(selection.typeName);
    if (iface?.kind !== "interface" || !iface.graphs.includes(subgraph)) return false;
    const own = selection.interfaceFields;
    for (const f of own) {
      if (f.selection !== null || f.introspection) return false;
      if (f.name === "__typename") continue;
      if (!iface.fields.get(f.name)?.resolvableIn.includes(subgraph)) return false;
    }
    for (const [concrete, fields] of selection.byType) {
      if (!this.#possibleIn(subgraph, selection.typeName, concrete)) continue;
      if (fields.length !== own.length) return false;
      for (let i = 0; i < fields.length; i++) {
        const a = fields[i]!;
        const b = own[i]!;
        if (a.key !== b.key || a.name !== b.name || a.args !== b.args) return false;
        if (a.name === "__typename") continue;
        const field = this.#type(concrete)?.fields.get(a.name);
        if (!field?.resolvableIn.includes(subgraph) || field.requires.has(subgraph)) return false;
      }
    }
    return true;
  }

  /**
   * An abstract position whose subgraph sees the interface as an object (`@interfaceObject`):
   * interface fields plan on the interface; `__typename` and member-only fields need the
   * interface's owner, entered by the interface key.
   */
  #planInterfaceObject(
    group: Group,
    sel: Sel,
    path: readonly string[],
    provided: readonly FieldSetItem[] | null,
    selection: NSelection,
  ): void {
    const iface = selection.typeName;
    const ifaceKeys = keysOf(selection.interfaceFields);
    const pos: Pos = {
      group,
      sel,
      type: iface,
      path,
      provided,
      parent: null,
      clientKeys: ifaceKeys,
    };
    this.#planFields(pos, selection.interfaceFields);
    let concrete = selection.interfaceFields.some((f) => f.name === "__typename");
    for (const fields of selection.byType.values()) {
      for (const f of fields) {
        const same = ifaceKeys.get(f.key);
        if (!same || f.name === "__typename" || same.name !== f.name) concrete = true;
      }
    }
    if (!concrete) return;
    const model = this.#type(iface);
    const owner = model?.keys.find((k) =>
      k.resolvable && !model.interfaceObjectIn.includes(k.graph)
    )?.graph;
    if (!owner) throw new PlanningError(`No subgraph resolves the concrete type of "${iface}"`);
    const epos = this.#enter(pos, owner, undefined);
    epos.sel.typename();
    for (const [type, fields] of selection.byType) {
      const extra = fields.filter((f) =>
        f.name !== "__typename" && ifaceKeys.get(f.key)?.name !== f.name
      );
      if (extra.length === 0) continue;
      this.#planFields({
        group: epos.group,
        sel: epos.sel.fragment(type),
        type,
        path,
        provided: null,
        parent: null,
        clientKeys: keysOf(fields),
      }, extra);
    }
  }

  // -------------------------------------------------------------- output

  #build(): PlannedOperation {
    const groups = this.#groups;
    if (groups.length === 0) return { plan: { kind: "QueryPlan", node: null }, step: null };
    this.#mergeFetches();
    const built = new Map<Group, { node: PlanNode; step: FetchStep }>();
    for (const g of groups) built.set(g, this.#buildFetch(g));
    const tree = this.#buildTree(built);
    if (tree) return tree;
    const levelOf = dependencyLevels();
    const roots = [...new Set(groups.map((g) => g.root))].sort((a, b) => a - b);
    const perRoot: Built[] = [];
    for (const root of roots) {
      const levels: Group[][] = [];
      for (const g of groups) if (g.root === root) (levels[levelOf(g)] ??= []).push(g);
      const stages: Built[] = [];
      for (const list of levels) {
        if (list && list.length > 0) stages.push(parallelOf(list.map((g) => built.get(g)!)));
      }
      perRoot.push(sequenceOf(stages));
    }
    const top = sequenceOf(perRoot);
    return { plan: { kind: "QueryPlan", node: top.node }, step: top.step };
  }

  /**
   * Merges entity fetches to one subgraph at one level of the plan (the same longest chain of
   * dependencies, so neither depends on the other) into one `_entities` call, as Apollo and Hive
   * planners do: fewer subgraph requests, the same data. Only fetches whose selections cannot
   * interfere merge: a type is either selected by one of them only (with response shapes that
   * cannot conflict), or selected identically (selection, representation, `__typename` sent).
   */
  #mergeFetches(): void {
    const groups = this.#groups;
    const levelOf = dependencyLevels();
    const into = new Map<Group, Group>();
    const candidate = (g: Group) =>
      g.entity && !into.has(g) && g.sel.fields.size === 0 && g.rewrites.length === 0;
    for (let i = 0; i < groups.length; i++) {
      const a = groups[i]!;
      if (!candidate(a)) continue;
      for (let j = i + 1; j < groups.length; j++) {
        const b = groups[j]!;
        if (
          !candidate(b) || b.subgraph !== a.subgraph || b.root !== a.root ||
          levelOf(b) !== levelOf(a)
        ) {
          continue;
        }
        if (!this.#mergeable(a, b) || !a.merged.every((m) => this.#mergeable(m, b))) continue;
        a.merged.push(b);
        into.set(b, a);
      }
    }
    if (into.size === 0) return;
    for (const g of groups) {
      for (const d of [...g.deps]) {
        const to = into.get(d);
        if (!to) continue;
        g.deps.delete(d);
        if (to !== g) g.deps.add(to);
      }
    }
    for (const [b, a] of into) for (const d of b.deps) if (d !== a) a.deps.add(d);
    const kept = groups.filter((g) => !into.has(g));
    groups.length = 0;
    groups.push(...kept);
  }

  /** Two entity fetches can share one `_entities` call (see {@linkcode #mergeFetches}). */
  #mergeable(a: Group, b: Group): boolean {
    // Interface representations expand to their implementations at build time: keep them alone.
    for (const type of [...a.reqs.keys(), ...b.reqs.keys()]) {
      if (this.#type(type)?.kind !== "object") return false;
    }
    for (const [type, sel] of b.sel.fragments) {
      const same = a.sel.fragments.get(type);
      if (same) {
        if (same.print() !== sel.print()) return false;
        continue;
      }
      for (const other of a.sel.fragments.values()) if (!sameShape(other, sel)) return false;
    }
    for (const [type, rep] of b.reqs) {
      const same = a.reqs.get(type);
      if (same && repText(same) !== repText(rep)) return false;
      if (!same && a.sel.fragments.has(type)) return false;
    }
    for (const type of a.reqs.keys()) {
      if (!b.reqs.has(type) && b.sel.fragments.has(type)) return false;
    }
    for (const [type, sent] of b.sendTypename) {
      const same = a.sendTypename.get(type);
      if (same !== undefined && same !== sent) return false;
    }
    return true;
  }

  /**
   * The plan as a tree when every fetch has one last dependency (all its other dependencies
   * come before that one): each fetch is followed by its dependents in parallel, so a branch
   * never waits for an unrelated one. Null when some fetch joins two independent branches.
   */
  #buildTree(
    built: Map<Group, { node: PlanNode; step: FetchStep }>,
  ): PlannedOperation | null {
    const children = new Map<Group, Group[]>();
    const roots: Group[] = [];
    for (const g of this.#groups) {
      const deps = [...g.deps];
      if (deps.length === 0) {
        roots.push(g);
        continue;
      }
      const last = deps.find((d) => deps.every((o) => o === d || this.#dependsOn(d, o)));
      if (!last || last.root !== g.root) return null;
      const list = children.get(last);
      if (list) list.push(g);
      else children.set(last, [g]);
    }
    const sequence = (items: Built[]): Built => {
      const nodes: PlanNode[] = [];
      const steps: PlanStep[] = [];
      for (const item of items) {
        if (item.node.kind === "Sequence" && item.step.kind === "Sequence") {
          nodes.push(...item.node.nodes);
          steps.push(...item.step.steps);
        } else {
          nodes.push(item.node);
          steps.push(item.step);
        }
      }
      return nodes.length === 1
        ? { node: nodes[0]!, step: steps[0]! }
        : { node: { kind: "Sequence", nodes }, step: { kind: "Sequence", steps } };
    };
    const subtree = (g: Group): Built => {
      const own = built.get(g)!;
      const kids = children.get(g) ?? [];
      if (kids.length === 0) return own;
      return sequence([own, parallelOf(kids.map(subtree))]);
    };
    const byRoot = new Map<number, Built[]>();
    for (const g of roots) {
      const list = byRoot.get(g.root);
      if (list) list.push(subtree(g));
      else byRoot.set(g.root, [subtree(g)]);
    }
    const ordered = [...byRoot.keys()].sort((a, b) => a - b).map((r) => parallelOf(byRoot.get(r)!));
    const top = sequenceOf(ordered);
    return { plan: { kind: "QueryPlan", node: top.node }, step: top.step };
  }

  #buildFetch(g: Group): { node: PlanNode; step: FetchStep } {
    const operationKind = !g.entity && this.#op.kind === "mutation" ? "mutation" : "query";
    const members = [g, ...g.merged];
    let sel = g.sel;
    let reqs: ReadonlyMap<string, RepSelection> = g.reqs;
    let sendTypenames: ReadonlyMap<string, string> = g.sendTypename;
    const variables = new Set(g.variables);
    if (g.merged.length > 0) {
      sel = new Sel();
      const mergedReqs = new Map<string, RepSelection>();
      const mergedSend = new Map<string, string>();
      for (const m of members) {
        for (const [type, fragment] of m.sel.fragments) {
          if (!sel.fragments.has(type)) sel.fragments.set(type, fragment);
        }
        for (const [type, rep] of m.reqs) if (!mergedReqs.has(type)) mergedReqs.set(type, rep);
        for (const [type, sent] of m.sendTypename) mergedSend.set(type, sent);
        for (const v of m.variables) variables.add(v);
      }
      reqs = mergedReqs;
      sendTypenames = mergedSend;
    }
    const variableUsages = [...variables].sort();
    const defs: string[] = [];
    if (g.entity) defs.push("$representations:[_Any!]!");
    for (const v of variableUsages) defs.push(`$${v}:${this.#op.variableTypes.get(v) ?? "String"}`);
    const head = `${operationKind}${
      this.#op.name ? ` ${this.#op.name}__${g.subgraph}__${g.id}` : ""
    }${defs.length > 0 ? `(${defs.join(",")})` : ""}`;
    const body = g.entity
      ? `_entities(representations:$representations){${sel.printOrTypename()}}`
      : sel.printOrTypename();
    const operation = `${head}{${body}}`;
    const requires = g.entity ? printReps(reqs) : undefined;
    const fetch: FetchNode = Object.freeze({
      kind: "Fetch",
      serviceName: g.subgraph,
      variableUsages,
      operation,
      operationKind,
      ...(requires === undefined ? {} : { requires }),
    });
    let representations: Map<string, RepSelection> | null = null;
    const sendTypename = new Map(sendTypenames);
    if (g.entity) representations = this.#representations(reqs, sendTypename);
    const targets: FetchTarget[] = [];
    if (g.merged.length > 0) {
      for (const m of members) {
        const types = new Set(this.#representations(m.reqs, new Map(m.sendTypename)).keys());
        targets.push({ path: m.path, types });
      }
    }
    const rewrites = members.flatMap((m) => m.rewrites);
    const step: FetchStep = {
      kind: "Fetch",
      node: fetch,
      index: g.id,
      queryJson: JSON.stringify(operation),
      subgraph: g.subgraph,
      path: g.path,
      representations,
      ...(targets.length > 0 ? { targets } : {}),
      sendTypename,
      variableUsages,
      rewrites: rewrites.sort((a, b) => a.path.length - b.path.length),
    };
    const node: PlanNode = !g.entity
      ? fetch
      : targets.length > 0
      ? { kind: "Flatten", path: [...g.path], paths: targets.map((t) => [...t.path]), node: fetch }
      : { kind: "Flatten", path: [...g.path], node: fetch };
    return { node, step };
  }

  /** Representation selections per data `__typename` (fills `sendTypename` for interfaces). */
  #representations(
    reqs: ReadonlyMap<string, RepSelection>,
    sendTypename: Map<string, string>,
  ): Map<string, RepSelection> {
    const representations = new Map(reqs);
    // Data of an interface (from an @interfaceObject) may already carry the concrete type.
    for (const [type, rep] of reqs) {
      const model = this.#type(type);
      if (model?.kind !== "interface") continue;
      for (const t of this.#model.types.values()) {
        if (t.kind !== "object" || !t.interfaces.includes(type) || representations.has(t.name)) {
          continue;
        }
        representations.set(t.name, rep);
        sendTypename.set(t.name, sendTypename.get(type) ?? type);
      }
    }
    return representations;
  }
}

/** A plan node and its executable twin. */
interface Built {
  readonly node: PlanNode;
  readonly step: PlanStep;
}

/** One item as is, or the items run concurrently. */
function parallelOf(items: readonly Built[]): Built {
  return items.length === 1 ? items[0]! : {
    node: { kind: "Parallel", nodes: items.map((i) => i.node) },
    step: { kind: "Parallel", steps: items.map((i) => i.step) },
  };
}

/** One item as is, or the items run one after the other (nested sequences kept). */
function sequenceOf(items: readonly Built[]): Built {
  return items.length === 1 ? items[0]! : {
    node: { kind: "Sequence", nodes: items.map((i) => i.node) },
    step: { kind: "Sequence", steps: items.map((i) => i.step) },
  };
}

/** All fields of a selection level (its own and its type conditions'), by response key. */
function levelFields(sel: Sel, out: SelField[] = []): SelField[] {
  for (const f of sel.fields.values()) out.push(f);
  for (const fragment of sel.fragments.values()) levelFields(fragment, out);
  return out;
}

/**
 * True when two selections under different object types can be sent in one operation: every
 * response key both select has one known type, recursively (GraphQL's "same response shape").
 */
function sameShape(a: Sel, b: Sel): boolean {
  const mine = new Map<string, SelField[]>();
  for (const f of levelFields(a)) {
    const list = mine.get(f.key);
    if (list) list.push(f);
    else mine.set(f.key, [f]);
  }
  for (const f of levelFields(b)) {
    for (const o of mine.get(f.key) ?? []) {
      if (f.name === "__typename" && o.name === "__typename") continue;
      if (f.type === "" || f.type !== o.type) return false;
      if ((f.child === null) !== (o.child === null)) return false;
      if (f.child && o.child && !sameShape(o.child, f.child)) return false;
    }
  }
  return true;
}

/** A representation selection as comparable text (keys, data keys, nesting). */
function repText(rep: RepSelection): string {
  const fields = (list: readonly RepField[]): string =>
    list.map((f) =>
      `${f.key}:${f.dataKey}${f.isKey ? "!" : ""}${f.selection ? `{${repText(f.selection)}}` : ""}`
    ).join(",");
  const typed = [...rep.byType].map(([t, list]) => `...${t}{${fields(list)}}`).join(",");
  return `${fields(rep.fields)}${typed === "" ? "" : `;${typed}`}`;
}

function keysOf(fields: readonly NField[]): Map<string, NField> {
  const map = new Map<string, NField>();
  for (const f of fields) map.set(f.key, f);
  return map;
}

/**
 * Plans a normalized operation.
 *
 * @example One root field, one fetch
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse } from "graphql";
 * import { normalizeOperation } from "./normalize.ts";
 * import { planOperation } from "./plan.ts";
 * import { buildSupergraph } from "../supergraph/mod.ts";
 * const model = buildSupergraph(`
 * schema @link(url: "https://specs.apollo.dev/link/v1.0")
 *   @link(url: "https://specs.apollo.dev/join/v0.3", for: EXECUTION) { query: Query }
 * directive @join__graph(name: String!, url: String!) on ENUM_VALUE
 * directive @join__type(graph: join__Graph!, key: join__FieldSet, extension: Boolean! = false, resolvable: Boolean! = true, isInterfaceObject: Boolean! = false) repeatable on OBJECT | INTERFACE | UNION | ENUM | INPUT_OBJECT | SCALAR
 * directive @link(url: String, as: String, for: link__Purpose, import: [link__Import]) repeatable on SCHEMA
 * scalar join__FieldSet
 * scalar link__Import
 * enum link__Purpose { SECURITY EXECUTION }
 * enum join__Graph { A @join__graph(name: "a", url: "http://a/graphql") }
 * type Query @join__type(graph: A) { hello: String }
 * `);
 * const op = normalizeOperation(model.apiSchema, parse("{ hello }"));
 * const { plan } = planOperation(model, op);
 * assert.deepEqual(plan.node, {
 *   kind: "Fetch", serviceName: "a", variableUsages: [], operation: "query{hello}", operationKind: "query",
 * });
 * ```
 * @param model The supergraph model.
 * @param operation The normalized operation.
 * @returns The plan and its executable twin.
 * @throws {PlanningError} When no subgraph can resolve a selected field.
 */
export function planOperation(
  model: SupergraphModel,
  operation: NormalizedOperation,
): PlannedOperation {
  return new Planner(model, operation).plan();
}

/**
 * The level of each fetch group in the dependency graph: the length of its
 * longest chain of dependencies (memoized; a cycle counts as level 0).
 */
function dependencyLevels(): (group: Group) => number {
  const level = new Map<Group, number>();
  const levelOf = (g: Group, seen = new Set<Group>()): number => {
    const known = level.get(g);
    if (known !== undefined) return known;
    if (seen.has(g)) return 0;
    seen.add(g);
    let l = 0;
    for (const d of g.deps) l = Math.max(l, levelOf(d, seen) + 1);
    level.set(g, l);
    return l;
  };
  return levelOf;
}
