/**
 * Maps the engine's plan (`QueryPlan {kind, node}` of `Fetch` / `Sequence` /
 * `Parallel` / `Flatten {path, node}`) onto Cosmo's fetch tree. Read
 * structurally, so plan nodes this file does not know (`Condition`, `Defer`)
 * still show their fetches.
 *
 * @module
 */
import type { FetchRecord } from "../engine/mod.ts";
import type { FetchTraceNode, FetchTreeTraceNode } from "./types.ts";

/** A fetch of the plan: the node, the Flatten around it, and its loads. */
export interface PlannedFetch {
  readonly kind: FetchTraceNode["kind"];
  readonly subgraph: string;
  /** Path from the plan (Flatten path), used when no load reports one. */
  readonly planPath: string;
  readonly records: readonly FetchRecord[];
}

/** Renders one fetch of the tree. */
export type RenderFetch = (fetch: PlannedFetch) => FetchTraceNode;

/** Cosmo omits empty `children` (Go `omitempty`): `{"kind":"Sequence"}`. */
function withChildren(
  kind: "Sequence" | "Parallel",
  children: FetchTreeTraceNode[],
): FetchTreeTraceNode {
  return children.length === 0 ? { kind } : { kind, children };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Builds the fetch tree. The root is always a `Sequence` (as in Cosmo); loads
 * that match no plan node (matched by `record.node` identity, to the `Fetch`
 * or its `Flatten`) are appended to it as `Single` nodes, so none is lost.
 * @param plan The plan given to `observer.plan`, or undefined.
 * @param records Every load reported by `observer.fetch`.
 * @param render Renders a fetch.
 * @returns The tree, or null when there is neither plan nor load.
 */
export function buildFetchTree(
  plan: unknown,
  records: readonly FetchRecord[],
  render: RenderFetch,
): FetchTreeTraceNode | null {
  if (plan === undefined && records.length === 0) return null;
  const byNode = new Map<unknown, FetchRecord[]>();
  for (const record of records) {
    const list = byNode.get(record.node);
    if (list === undefined) byNode.set(record.node, [record]);
    else list.push(record);
  }
  const used = new Set<unknown>();
  // Response paths start with the operation type (`query.topProducts.@`).
  let rootKind = "query";
  function fetchNode(node: Record<string, unknown>, flatten: Record<string, unknown> | null) {
    const mine = [...(byNode.get(node) ?? []), ...(flatten ? byNode.get(flatten) ?? [] : [])];
    used.add(node);
    if (flatten) used.add(flatten);
    const first = mine[0];
    const planKind = flatten !== null || typeof node.requires === "string" ? "Entity" : "Single";
    const flattenPath = flatten && Array.isArray(flatten.path)
      ? [rootKind, ...flatten.path].join(".")
      : rootKind;
    const planned: PlannedFetch = {
      kind: first?.kind ?? planKind,
      subgraph: first?.subgraph ?? String(node.serviceName ?? ""),
      planPath: flattenPath,
      records: mine,
    };
    return { kind: "Single" as const, fetch: render(planned) };
  }
  function visit(
    node: unknown,
    flatten: Record<string, unknown> | null,
  ): FetchTreeTraceNode | null {
    if (!isRecord(node)) return null;
    switch (node.kind) {
      case "QueryPlan":
        return visit(node.node, null);
      case "Fetch":
        if (flatten === null && node.operationKind === "mutation") rootKind = "mutation";
        return fetchNode(node, flatten);
      case "Flatten":
        return visit(node.node, node);
      case "Sequence":
      case "Parallel":
        return withChildren(node.kind, visitAll(node.nodes));
      case "Defer": {
        // `@defer`: the primary part, then the deferred branches (each after its dependency).
        const primary = isRecord(node.primary) ? visitAll([node.primary.node]) : [];
        const deferred = Array.isArray(node.deferred)
          ? visitAll(node.deferred.map((d) => isRecord(d) ? d.node : null))
          : [];
        const branches = deferred.length > 1 ? [withChildren("Parallel", deferred)] : deferred;
        const children = [...primary, ...branches];
        return children.length === 1 ? children[0] ?? null : withChildren("Sequence", children);
      }
      default: {
        // Unknown wrappers: keep their fetches in order.
        const children = [...visitAll(node.nodes), ...visitAll([node.node])];
        return children.length === 1 ? children[0] ?? null : withChildren("Sequence", children);
      }
    }
  }
  function visitAll(nodes: unknown): FetchTreeTraceNode[] {
    if (!Array.isArray(nodes)) return [];
    const out: FetchTreeTraceNode[] = [];
    for (const child of nodes) {
      const mapped = visit(child, null);
      if (mapped !== null) out.push(mapped);
    }
    return out;
  }
  const mapped = visit(plan, null);
  const root: FetchTreeTraceNode = mapped === null
    ? { kind: "Sequence" }
    : mapped.kind === "Sequence"
    ? mapped
    : { kind: "Sequence", children: [mapped] };
  for (const [node, list] of byNode) {
    if (used.has(node)) continue;
    // Loads without a usable identity each get their own node.
    const groups = typeof node === "object" && node !== null ? [list] : list.map((r) => [r]);
    for (const group of groups) {
      const first = group[0];
      if (first === undefined) continue;
      (root.children ??= []).push({
        kind: "Single",
        fetch: render({ kind: first.kind, subgraph: first.subgraph, planPath: "", records: group }),
      });
    }
  }
  return root;
}
