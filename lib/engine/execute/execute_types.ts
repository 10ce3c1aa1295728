/**
 * The executor's data types: a subgraph response, the per-request options of
 * a plan run and what it produced.
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import type { ExecutionObserver, FetchRecord } from "../types.ts";
import type { SubgraphErrorPolicy } from "./subgraph_errors.ts";
import type { Layers } from "./_layers.ts";
import type { FetchStep, PlanStep } from "../plan/mod.ts";
import type { EntityCacheRun } from "./entity_cache.ts";

/** A subgraph response as the executor needs it. */
export interface SubgraphResponse {
  readonly status: number;
  readonly headers: Headers;
  /** Response body text. */
  readonly body: string;
  /** True when shared with an identical in-flight request. */
  readonly deduplicated: boolean;
  /** `observer.now()` when headers arrived, when observed. */
  readonly firstByteNs?: number;
  /**
   * The body's parse, shared by every caller of one shared response (set by
   * the first to parse it): the parsed data is then never mutated. `value`:
   * cut to the fetch's keys; `whole`: as parsed (a plan of one root fetch).
   */
  readonly parsed?: { value?: unknown; whole?: unknown };
}

/** Sends one subgraph request (the engine's client: headers, timeout, single flight). */
export type SubgraphSender = (
  subgraph: string,
  body: string,
  shareable: boolean,
) => Promise<SubgraphResponse>;

/** Per-request inputs of `executePlan`. */
export interface ExecutePlanOptions {
  readonly send: SubgraphSender;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly operationKind: string;
  /** Builds the request record of a fetch, for the observer. */
  readonly describe?: (subgraph: string, body: string) => FetchRecord["request"];
  readonly observer?: ExecutionObserver;
  /** Interface names: an incoming `__typename` naming one never replaces a concrete type. */
  readonly abstractNames?: ReadonlySet<string>;
  /**
   * Subgraph responses may be shared with other requests (single flight, for a
   * query): merge through layers. False: merge in place. @default true
   */
  readonly sharedResponses?: boolean;
  /** What clients see of subgraph errors. @default RAW_SUBGRAPH_ERRORS */
  readonly subgraphErrors?: SubgraphErrorPolicy;
  /**
   * The largest response, bytes (`engine.max_response_bytes`): the subgraph
   * errors forwarded count toward it. @default Infinity
   */
  readonly maxBytes?: number;
  /** The error thrown when the forwarded errors pass `maxBytes`. */
  readonly tooLarge?: () => Error;
  /**
   * A fetch answered before the plan runs: the root fetch of a subscription, whose
   * answer is one event of the subgraph's stream. It is merged like any answer
   * (errors re-pathed, keys selected) and never sent.
   */
  readonly answered?: { readonly step: FetchStep; readonly response: SubgraphResponse };
  /**
   * Sibling entity fetches of one `Parallel` step to one subgraph share one
   * request (`entity_batch.ts`). @default true
   */
  readonly batchEntityFetches?: boolean;
  /**
   * The entity cache (`entity_cache`, `entity_cache.ts`): entity and root-field
   * fetches of queries looked up before they are sent. None: nothing cached.
   */
  readonly entityCache?: EntityCacheRun;
}

/** What execution produced, before shaping. */
export interface ExecutedData {
  readonly data: Record<string, unknown>;
  readonly errors: GraphQLFormattedError[];
  /** What this request merged into shared subgraph data (read `data` through it). */
  readonly layers: Layers;
  /**
   * The shared subgraph answers `data` was merged from, by fetch index
   * (`undefined`: the fetch had nothing to send), identified by their parse
   * holders: requests that merged the same answers under one plan built the
   * same data. Null when responses are not shared, or when a fetch failed or
   * sent several requests.
   */
  readonly answers: readonly (object | undefined)[] | null;
  /** A lower bound of the JSON size of `errors` (the response's share they take). */
  readonly errorBytes: number;
}

/** A plan being run in parts (an incremental operation's primary part, then its branches). */
export interface PlanRun {
  /** The data merged so far (read through `layers`). */
  readonly data: Record<string, unknown>;
  readonly layers: Layers;
  /** Runs a part of the plan (a fetch already run or running by another part is not sent again). */
  run(step: PlanStep | null): Promise<void>;
  /**
   * The errors of the fetches `of` accepts (by plan index) not taken yet, in plan order.
   * @param of Which fetches; all when omitted.
   */
  takeErrors(of?: (index: number) => boolean): GraphQLFormattedError[];
  /** A lower bound of the JSON size of the subgraph errors forwarded so far. */
  errorBytes(): number;
}
