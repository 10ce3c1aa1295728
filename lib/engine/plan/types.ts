/**
 * The planner's public data: the printable {@linkcode QueryPlan} (Apollo/Hive node names), its
 * executable twin ({@linkcode PlanStep}) and {@linkcode PlanningError}.
 *
 * @module
 */
import type { RepField, RepSelection } from "./rep.ts";
import type { KeyTree } from "./sel.ts";

export type { RepField, RepSelection };

/** A plan: plain data (no functions, Maps, Sets or ids), so equal inputs give byte-equal JSON. */
export interface QueryPlan {
  readonly kind: "QueryPlan";
  readonly node: PlanNode | null;
  /**
   * Present (true) only when the search for the best combination hit its bound and the plan
   * falls back to the cheapest alternative found so far (see `plan/best.ts`).
   */
  readonly searchTruncated?: true;
}

/** A node of the plan tree. */
export type PlanNode = FetchNode | SequenceNode | ParallelNode | FlattenNode | DeferNode;

/**
 * An incremental operation (`@defer`): the primary part's fetches, then each deferred
 * fragment's, started once the delivery it `depends` on is in (Apollo's node name).
 */
export interface DeferNode {
  readonly kind: "Defer";
  readonly primary: { readonly node: PlanNode | null };
  readonly deferred: readonly DeferredNode[];
}

/** One deferred fragment's branch of a {@linkcode DeferNode}. */
export interface DeferredNode {
  /** The fragment's id (`DeferredFragment.id`). */
  readonly id: number;
  readonly label?: string;
  /** Response keys to the object the fragment is on. */
  readonly path: readonly string[];
  /** The delivery whose data it starts from: `0` (primary) or a fragment's id. */
  readonly depends: number;
  /** Its own fetches; null when its fields come with the delivery it depends on. */
  readonly node: PlanNode | null;
}

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
  /** `subscription` only for the root fetch of a subscription (the stream its events come from). */
  readonly operationKind: "query" | "mutation" | "subscription";
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

/**
 * A variable of an entity fetch whose value is read, per representation, from an ancestor of the
 * represented object (`@fromContext` arguments): the fetch is sent once per distinct value.
 */
export interface ContextVariable {
  /** The variable name (without `$`). */
  readonly name: string;
  /** Its type, printed (`String`). */
  readonly type: string;
  /** Response path of the ancestor object (a prefix of the fetch's path). */
  readonly path: readonly string[];
  /** Data keys leading from the ancestor object to the value. */
  readonly read: readonly string[];
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
  /** `@fromContext` variables, read per object from an ancestor; absent when none. */
  readonly contextVariables?: readonly ContextVariable[];
  /**
   * The response keys the fetch selects, at every level (root fields; each
   * entity's fields; the fields below them): other members of an answer are
   * not merged, since they could overwrite what another subgraph answered.
   * Absent: every member.
   */
  readonly keys?: KeyTree;
  /**
   * Entity fetches whose client operation has a `$representations` of its own:
   * the name the representations are sent under instead; absent: `representations`.
   */
  readonly representationsVariable?: string;
}

/** Executable plan tree. */
export type PlanStep =
  | FetchStep
  | { readonly kind: "Sequence" | "Parallel"; readonly steps: readonly PlanStep[] };

/** The executable twin of a {@linkcode DeferredNode}. */
export interface DeferredStep {
  readonly id: number;
  readonly label?: string;
  readonly path: readonly string[];
  readonly depends: number;
  readonly step: PlanStep | null;
  /** Plan indexes of its fetches (their errors go to its part). */
  readonly fetches: ReadonlySet<number>;
}

/** The executable twin of a {@linkcode DeferNode}. */
export interface DeferStep {
  readonly primary: PlanStep | null;
  readonly deferred: readonly DeferredStep[];
}

/** A planned operation. */
export interface PlannedOperation {
  readonly plan: QueryPlan;
  /** Every fetch (an incremental operation's primary and deferred ones together). */
  readonly step: PlanStep | null;
  /** Incremental operations with `@defer` fragments: the fetches split by delivery. */
  readonly defer?: DeferStep;
}

/** Planning failed: the operation cannot be served by the subgraphs. */
export class PlanningError extends Error {
  /**
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { PlanningError } from "./types.ts";
   * assert.equal(new PlanningError("No subgraph resolves it").name, "PlanningError");
   * ```
   * @param message Sentence-case message.
   */
  constructor(message: string) {
    super(message);
    this.name = "PlanningError";
  }
}
