/**
 * The engine: parse+validate (graphql-js) → normalize → plan (cached) →
 * execute the plan against subgraphs → shape the response.
 *
 * STUB: the engine owner replaces the bodies; the exported names and
 * signatures are the contract the facets use.
 *
 * @module
 */
import type { SupergraphCore } from "../supergraph/types.ts";
import type {
  ExecuteOptions,
  ExecutionResult,
  GraphQLRequest,
  PreparedOperation,
  PrepareResult,
} from "./types.ts";

export type * from "./types.ts";

/** Sends one subgraph HTTP request (injected, so tests and traces can see it). */
export type SubgraphFetch = (request: Request) => Promise<Response>;

/** Options for {@linkcode createEngine}. */
export interface EngineOptions {
  /** Defaults to the global `fetch`. */
  readonly fetch?: SubgraphFetch;
}

/** The engine state for one supergraph: model, plan cache, subgraph client. */
export interface Engine {
  readonly model: SupergraphCore;
}

/**
 * Builds the engine for a supergraph model.
 * @param model The supergraph model.
 * @param _options Subgraph client options.
 * @returns The engine.
 */
export function createEngine(model: SupergraphCore, _options: EngineOptions = {}): Engine {
  return { model };
}

/**
 * Parses, validates and selects the operation (cached by text + name).
 * @param _engine The engine.
 * @param _request The request.
 * @returns The prepared operation or request errors.
 */
export function prepare(_engine: Engine, _request: GraphQLRequest): PrepareResult {
  return { ok: false, stage: "parse", errors: [{ message: "Engine not implemented" }] };
}

/**
 * Coerces variables, plans (cached) and executes the operation.
 * @param _engine The engine.
 * @param _operation The prepared operation.
 * @param _options Variables, headers, signal, observer.
 * @returns The GraphQL response.
 */
export function execute(
  _engine: Engine,
  _operation: PreparedOperation,
  _options: ExecuteOptions = {},
): Promise<ExecutionResult> {
  return Promise.resolve({ errors: [{ message: "Engine not implemented" }] });
}
