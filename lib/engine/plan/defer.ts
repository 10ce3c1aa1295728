/**
 * Deferred branches (`@defer`): the fetch graph of an incremental operation is planned whole
 * (so a deferred field's keys and `@requires` inputs are planned in the fetches before it, as
 * any field's), then split by delivery. A fetch belongs to the primary part when it selects a
 * primary client field or feeds a fetch that does; otherwise to each deferred fragment whose
 * fields it selects or feeds. A fragment none of whose fields needs a fetch of its own (they
 * come from a fetch of the delivery it is nested in) is delivered with that delivery, as
 * Apollo Router does.
 *
 * @module
 */
import type { DeferredFragment } from "../prepare/mod.ts";
import type { Group } from "./_groups.ts";
import type {
  DeferNode,
  DeferredNode,
  DeferredStep,
  DeferStep,
  FetchStep,
  PlanNode,
  PlanStep,
} from "./types.ts";

/** A plan node and its executable twin. */
export interface Built {
  readonly node: PlanNode;
  readonly step: PlanStep;
}

/**
 * Splits a whole plan by delivery.
 *
 * @param top The whole plan (every fetch).
 * @param input The fetch groups and the operation's deferred fragments.
 * @returns The printable `Defer` node and its executable twin.
 */
export function splitDeferred(
  top: Built | null,
  input: { readonly groups: readonly Group[]; readonly defers: readonly DeferredFragment[] },
): { readonly node: DeferNode; readonly defer: DeferStep } {
  const need = needs(input.groups);
  const primary = new Set<number>();
  const own = new Map<number, Set<number>>();
  for (const g of input.groups) {
    const n = need.get(g)!;
    if (n.size === 0 || n.has(0)) {
      primary.add(g.id);
      continue;
    }
    for (const d of n) {
      const set = own.get(d);
      if (set) set.add(g.id);
      else own.set(d, new Set([g.id]));
    }
  }
  const byId = new Map(input.defers.map((d) => [d.id, d]));
  /** The delivery a fragment waits for: its nearest ancestor with fetches of its own, or 0. */
  const depends = (d: DeferredFragment): number => {
    let parent = d.parent;
    while (parent !== 0 && !own.has(parent)) parent = byId.get(parent)!.parent;
    return parent;
  };
  const primaryBuilt = top && filter(top, (s) => primary.has(s.index));
  const nodes: DeferredNode[] = [];
  const steps: DeferredStep[] = [];
  for (const d of input.defers) {
    const fetches = own.get(d.id) ?? new Set<number>();
    const branch = top && fetches.size > 0 ? filter(top, (s) => fetches.has(s.index)) : null;
    const head = {
      id: d.id,
      ...(d.label === undefined ? {} : { label: d.label }),
      path: d.path,
      depends: depends(d),
    };
    nodes.push({ ...head, node: branch?.node ?? null });
    steps.push({ ...head, step: branch?.step ?? null, fetches });
  }
  return {
    node: { kind: "Defer", primary: { node: primaryBuilt?.node ?? null }, deferred: nodes },
    defer: { primary: primaryBuilt?.step ?? null, deferred: steps },
  };
}

/**
 * The deliveries each fetch serves: those of the client fields it (or a fetch merged into it)
 * selects, and those of every fetch that depends on it.
 */
function needs(groups: readonly Group[]): Map<Group, Set<number>> {
  const dependents = new Map<Group, Group[]>();
  for (const g of groups) {
    for (const d of g.deps) {
      const list = dependents.get(d);
      if (list) list.push(g);
      else dependents.set(d, [g]);
    }
  }
  const need = new Map<Group, Set<number>>();
  const visit = (g: Group, seen: Set<Group>): Set<number> => {
    const known = need.get(g);
    if (known) return known;
    const out = new Set<number>(g.defers);
    for (const m of g.merged) for (const d of m.defers) out.add(d);
    if (seen.has(g)) return out; // a cycle (never planned): what it selects itself
    seen.add(g);
    for (const h of dependents.get(g) ?? []) for (const d of visit(h, seen)) out.add(d);
    need.set(g, out);
    return out;
  };
  for (const g of groups) visit(g, new Set());
  return need;
}

/** The plan with only the fetches `keep` accepts (order and nesting kept), or null. */
function filter(built: Built, keep: (step: FetchStep) => boolean): Built | null {
  const { node, step } = built;
  if (step.kind === "Fetch") return keep(step) ? built : null;
  if (node.kind !== "Sequence" && node.kind !== "Parallel") return null;
  const nodes: PlanNode[] = [];
  const steps: PlanStep[] = [];
  for (let i = 0; i < step.steps.length; i++) {
    const kept = filter({ node: node.nodes[i]!, step: step.steps[i]! }, keep);
    if (kept === null) continue;
    nodes.push(kept.node);
    steps.push(kept.step);
  }
  if (nodes.length === 0) return null;
  if (nodes.length === 1) return { node: nodes[0]!, step: steps[0]! };
  return { node: { kind: node.kind, nodes }, step: { kind: step.kind, steps } };
}
