/**
 * Emit: the optimised fetch graph → today's plan nodes (`Fetch`, `Flatten`, `Sequence`,
 * `Parallel`) and their executable twins ({@linkcode PlanStep}). A fetch is followed by its
 * dependents in parallel when the graph is a tree; otherwise fetches run in dependency levels.
 *
 * @module
 */
import type { NormalizedOperation } from "../prepare/mod.ts";
import { printReps, type RepSelection } from "./rep.ts";
import { Sel } from "./sel.ts";
import type { QueryGraph } from "./graph.ts";
import { dependencyLevels, type Group, lastDependency } from "./_groups.ts";
import { type Built, splitDeferred } from "./defer.ts";
import type {
  FetchNode,
  FetchStep,
  FetchTarget,
  PlannedOperation,
  PlanNode,
  PlanStep,
} from "./types.ts";

/**
 * Emits the plan of a fetch graph.
 *
 * @param graph The query graph.
 * @param input The operation and its (optimised) fetch groups in planning order.
 * @returns The plan and its executable twin (no node when there is no fetch).
 */
export function emitPlan(
  graph: QueryGraph,
  input: { readonly operation: NormalizedOperation; readonly groups: readonly Group[] },
): PlannedOperation {
  const { groups, operation } = input;
  let top: Built | null = null;
  if (groups.length > 0) {
    const built = new Map<Group, Built>();
    for (const g of groups) built.set(g, emitFetch(graph, { op: operation, group: g }));
    top = asTree(groups, built) ?? asLevels(groups, built);
  }
  if (operation.defers !== undefined && operation.defers.length > 0) {
    const { node, defer } = splitDeferred(top, { groups, defers: operation.defers });
    return { plan: { kind: "QueryPlan", node }, step: top?.step ?? null, defer };
  }
  if (top === null) return { plan: { kind: "QueryPlan", node: null }, step: null };
  return { plan: { kind: "QueryPlan", node: top.node }, step: top.step };
}

/** Fetches by dependency level, per root (mutation roots in order). */
function asLevels(groups: readonly Group[], built: ReadonlyMap<Group, Built>): Built {
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
  return sequenceOf(perRoot);
}

/**
 * The plan as a tree when every fetch has one last dependency (all its other dependencies
 * come before that one): each fetch is followed by its dependents in parallel, so a branch
 * never waits for an unrelated one. Null when some fetch joins two independent branches.
 */
function asTree(groups: readonly Group[], built: ReadonlyMap<Group, Built>): Built | null {
  const children = new Map<Group, Group[]>();
  const roots: Group[] = [];
  for (const g of groups) {
    const deps = [...g.deps];
    if (deps.length === 0) {
      roots.push(g);
      continue;
    }
    const last = lastDependency(deps);
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
  return sequenceOf(
    [...byRoot.keys()].sort((a, b) => a - b).map((r) => parallelOf(byRoot.get(r)!)),
  );
}

function emitFetch(
  graph: QueryGraph,
  of: { readonly op: NormalizedOperation; readonly group: Group },
): Built {
  const { op, group: g } = of;
  // Entity fetches are queries; a root fetch has the operation's kind (a subscription's root
  // fetch is the subgraph stream; the fetches after it run once per event).
  const operationKind = g.entity ? "query" : op.kind;
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
  // `$representations` unless the client's operation has a variable of that name.
  const representationsVariable = g.entity ? freeVariable(op, "representations") : null;
  if (representationsVariable !== null) defs.push(`$${representationsVariable}:[_Any!]!`);
  for (const v of variableUsages) {
    const byDefault = op.variableDefaults.get(v);
    const declared = `$${v}:${op.variableTypes.get(v) ?? "String"}`;
    defs.push(byDefault === undefined ? declared : `${declared}=${byDefault}`);
  }
  for (const c of g.contexts) defs.push(`$${c.name}:${c.type}`);
  const head = `${operationKind}${op.name ? ` ${op.name}__${g.subgraph}__${g.id}` : ""}${
    defs.length > 0 ? `(${defs.join(",")})` : ""
  }`;
  const body = g.entity
    ? `_entities(representations:$${representationsVariable}){${sel.printOrTypename()}}`
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
  const sendTypename = new Map(sendTypenames);
  const representations = g.entity ? expandReps(graph, reqs, sendTypename) : null;
  const targets: FetchTarget[] = [];
  if (g.merged.length > 0) {
    for (const m of members) {
      const types = new Set(expandReps(graph, m.reqs, new Map(m.sendTypename)).keys());
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
    keys: sel.keyTree(),
    rewrites: rewrites.sort((a, b) => a.path.length - b.path.length),
    ...(g.contexts.length > 0 ? { contextVariables: [...g.contexts] } : {}),
    ...(representationsVariable !== null && representationsVariable !== "representations"
      ? { representationsVariable }
      : {}),
  };
  const node: PlanNode = !g.entity
    ? fetch
    : targets.length > 0
    ? { kind: "Flatten", path: [...g.path], paths: targets.map((t) => [...t.path]), node: fetch }
    : { kind: "Flatten", path: [...g.path], node: fetch };
  return { node, step };
}

/**
 * A variable name for the router's own use in a subgraph operation: `name`,
 * or `name__gw1`, `name__gw2`… when the client's operation declares it (the
 * subgraph operation carries the client's variables beside the router's).
 */
function freeVariable(op: NormalizedOperation, name: string): string {
  if (!op.variableTypes.has(name)) return name;
  for (let i = 1;; i++) if (!op.variableTypes.has(`${name}__gw${i}`)) return `${name}__gw${i}`;
}

/** Representation selections per data `__typename` (fills `sendTypename` for interfaces). */
function expandReps(
  graph: QueryGraph,
  reqs: ReadonlyMap<string, RepSelection>,
  sendTypename: Map<string, string>,
): Map<string, RepSelection> {
  const representations = new Map(reqs);
  // Data of an interface (from an @interfaceObject) may already carry the concrete type.
  for (const [type, rep] of reqs) {
    if (graph.type(type)?.kind !== "interface") continue;
    for (const t of graph.implementations(type)) {
      if (representations.has(t.name)) continue;
      representations.set(t.name, rep);
      sendTypename.set(t.name, sendTypename.get(type) ?? type);
    }
  }
  return representations;
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
