/**
 * Harness of the federation feature-area e2e tests.
 *
 * An {@linkcode Area} is a small real federated graph (subgraph SDLs +
 * resolvers with deterministic data) plus the operations that prove one
 * federation feature. The harness serves every subgraph in-process on
 * loopback (`demo/subgraph.ts`, recording each subgraph request), composes
 * the supergraph (`lib/compose/`, `@theguild/federation-composition`), builds our engine
 * and runs each operation through `prepare` + `execute`. Each case's whole
 * response is compared with `expected/<area>.json`, produced by the
 * reference gateway (`_reference.ts`, Apollo Gateway) against the same
 * subgraphs.
 *
 * Cases listed in `known_gaps.json` are registered ignored, named
 * `KNOWN GAP: <area>: <case>`.
 *
 * @module
 */
import { deepStrictEqual, equal, fail } from "node:assert/strict";
import { type DocumentNode, Kind, parse, visit } from "graphql";
import { composeSupergraph, formatCompositionError } from "../../../lib/compose/mod.ts";
import type { GraphQLFormattedError } from "graphql";
import {
  type RunningSubgraph,
  serveSubgraph,
  type SubgraphResolvers,
} from "../../../demo/subgraph.ts";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { createEngine, type EngineOptions, execute, prepare } from "../../../lib/engine/mod.ts";
import type { ExecutionResult } from "../../../lib/engine/types.ts";
import type { HeaderRule, HeadersConfig } from "../../../lib/config/types.ts";

/** One subgraph of an area. */
export interface SubgraphDef {
  readonly name: string;
  /** Federation v2 (with `@link`) or v1 subgraph SDL. */
  readonly typeDefs: string;
  readonly resolvers?: SubgraphResolvers;
  /** Composed, then shut down before the cases run (a subgraph that is down). */
  readonly down?: boolean;
}

/** Router configuration a case runs with (mapped to {@linkcode EngineOptions}). */
export interface RouterSettings {
  /** `headers` rules (DESIGN §4); default: none (nothing forwarded). */
  readonly headers?: {
    readonly all?: readonly HeaderRule[];
    readonly subgraphs?: Readonly<Record<string, readonly HeaderRule[]>>;
  };
  /** `engine.enable_single_flight`. */
  readonly enableSingleFlight?: boolean;
  /** `engine.batch_entity_fetches`. */
  readonly batchEntityFetches?: boolean;
}

/** One subgraph request as the subgraph received it. */
export interface RecordedRequest {
  readonly subgraph: string;
  readonly query: string;
  readonly variables: Record<string, unknown>;
  readonly headers: Headers;
}

/** What a case's {@linkcode FedCase.check} gets: the responses and the subgraph requests. */
export interface CaseRun {
  /** The response (the first one when the case runs several times concurrently). */
  readonly response: ExecutionResult;
  /** Every response, when {@linkcode FedCase.concurrent} > 1. */
  readonly responses: readonly ExecutionResult[];
  /** Every subgraph request made while the case ran, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** True when the run is the reference gateway (Apollo), false for our engine. */
  readonly reference: boolean;
}

/** One operation of an area. */
export interface FedCase {
  /** The federation feature it proves (the test name). */
  readonly name: string;
  readonly query: string;
  readonly operationName?: string;
  readonly variables?: Record<string, unknown>;
  /** Client request headers. */
  readonly headers?: Record<string, string>;
  /** Router settings of this case (a fresh engine is built for it). */
  readonly settings?: RouterSettings;
  /** Written to the expected file: what the reference does differently, or why a check exists. */
  readonly note?: string;
  /** Also compare the order of response keys (selection order) with the expected data. */
  readonly ordered?: boolean;
  /** Runs the operation this many times concurrently (default 1). */
  readonly concurrent?: number;
  /** Client headers of each concurrent run (default: {@linkcode headers} for all). */
  readonly concurrentHeaders?: readonly Record<string, string>[];
  /** Extra assertions, e.g. on what subgraphs were (not) asked. */
  readonly check?: (run: CaseRun) => void;
  /**
   * Run {@linkcode check} against the reference gateway too (default true).
   * False for router-specific rules the reference does not implement
   * (header rules, single flight).
   */
  readonly checkReference?: boolean;
  /**
   * Error comparison: `exact` (default) compares each error's message and
   * path; `path` compares only paths (messages are transport or
   * implementation specific); `present` only requires at least one error
   * (a subgraph that is down: message and path are the router's choice).
   */
  readonly errors?: "exact" | "path" | "present";
  /**
   * The response the feature requires when the reference gateway does not
   * give it; `note` says why. The expected file keeps both.
   */
  readonly override?: { readonly response: ExecutionResult; readonly note: string };
  /**
   * Whether the differential tests check this case's expected response
   * against the scenario's monolith (default true; false where the answer is
   * not the data, e.g. a planning failure).
   */
  readonly monolith?: boolean;
}

/** A feature area: one graph and its cases. */
export interface Area {
  /** File stem of the expected file (`keys` → `expected/keys.json`). */
  readonly name: string;
  /** The federation feature, used in test names. */
  readonly title: string;
  readonly subgraphs: readonly SubgraphDef[];
  readonly cases: readonly FedCase[];
  /** A hand-written supergraph SDL template (`{{url:<subgraph>}}` placeholders), skipping composition. */
  readonly supergraphSdl?: string;
}

/** A normalized error: what tests compare. */
export interface NormalizedError {
  readonly message: string;
  readonly path?: readonly (string | number)[];
}

/** A normalized response: what tests compare. */
export interface NormalizedResponse {
  data?: unknown;
  errors?: NormalizedError[];
}

/** An expected file. */
export interface ExpectedFile {
  readonly area: string;
  readonly reference: string;
  readonly cases: Record<string, ExpectedCase>;
}

/** One case of an expected file. */
export interface ExpectedCase {
  /** What our engine must answer (normalized). */
  readonly response: NormalizedResponse;
  /** What the reference answered, when it differs from `response`. */
  readonly reference?: NormalizedResponse;
  /** Why they differ, or what the reference could not do. */
  readonly note?: string;
  /** Whether the case's check passed on the reference (absent when not run). */
  readonly referenceCheck?: "passed" | "skipped" | string;
}

/** A started area: subgraphs up, supergraph composed, request log. */
export interface StartedArea {
  readonly supergraphSdl: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Placeholder marking "any message" in `errors: "path"` comparisons. */
export const ANY_MESSAGE = "<any message>";

/** Placeholder for "one or more errors" in `errors: "present"` comparisons. */
export const AT_LEAST_ONE_ERROR = "<at least one error, any message and path>";

/**
 * Starts an area's subgraphs and composes (or fills in) its supergraph.
 * @param area The area.
 * @returns The running area.
 */
export async function startArea(area: Area): Promise<StartedArea> {
  const requests: RecordedRequest[] = [];
  const running: RunningSubgraph[] = [];
  try {
    for (const def of area.subgraphs) {
      running.push(
        serveSubgraph(def.name, { typeDefs: def.typeDefs, resolvers: def.resolvers ?? {} }, {
          onRequest: (body, headers) => {
            requests.push({
              subgraph: def.name,
              query: body.query,
              variables: (body.variables ?? {}) as Record<string, unknown>,
              headers: new Headers(headers),
            });
          },
        }),
      );
    }
    const urls = new Map(running.map((s) => [s.name, s.url]));
    let supergraphSdl: string;
    if (area.supergraphSdl !== undefined) {
      supergraphSdl = area.supergraphSdl.replace(/\{\{url:(\w+)\}\}/g, (_, name: string) => {
        const url = urls.get(name);
        if (url === undefined) throw new Error(`${area.name}: no subgraph ${name}`);
        return url;
      });
    } else {
      const result = composeSupergraph(area.subgraphs.map((def) => ({
        name: def.name,
        sdl: def.typeDefs,
        url: urls.get(def.name) ?? "",
      })));
      if (!result.ok) {
        throw new Error(
          `${area.name}: composition failed:\n` +
            result.errors.map((e) => `- ${formatCompositionError(e)}`).join("\n"),
        );
      }
      supergraphSdl = result.supergraphSdl;
    }
    const open: RunningSubgraph[] = [];
    for (const [i, def] of area.subgraphs.entries()) {
      const subgraph = running[i]!;
      if (def.down) await subgraph.close();
      else open.push(subgraph);
    }
    return {
      supergraphSdl,
      requests,
      close: async () => {
        await Promise.all(open.map((s) => s.close()));
      },
    };
  } catch (error) {
    await Promise.allSettled(running.map((s) => s.close()));
    throw error;
  }
}

/**
 * Maps router settings to our engine's options.
 * @param settings The case's router settings.
 * @returns Options for `createEngine`.
 */
export function engineOptions(settings: RouterSettings = {}): EngineOptions {
  const headers: HeadersConfig = {
    all: { request: settings.headers?.all ?? [] },
    subgraphs: Object.fromEntries(
      Object.entries(settings.headers?.subgraphs ?? {}).map((
        [name, request],
      ) => [name, { request }]),
    ),
  };
  return {
    headers,
    ...(settings.enableSingleFlight !== undefined
      ? { enableSingleFlight: settings.enableSingleFlight }
      : {}),
    ...(settings.batchEntityFetches !== undefined
      ? { batchEntityFetches: settings.batchEntityFetches }
      : {}),
  };
}

/**
 * Normalizes a response for comparison: errors reduced to message + path,
 * sorted (parallel fetches may report in any order).
 * @param response The response.
 * @param mode `path` replaces messages with {@linkcode ANY_MESSAGE}; `present`
 * replaces all errors with one {@linkcode AT_LEAST_ONE_ERROR}.
 * @returns The normalized response.
 */
export function normalize(
  response: ExecutionResult,
  mode: "exact" | "path" | "present" = "exact",
): NormalizedResponse {
  const out: NormalizedResponse = {};
  // JSON round trip: plain prototypes, no undefined (what a client would see)
  if ("data" in response) out.data = JSON.parse(JSON.stringify(response.data ?? null));
  if (mode === "present" && response.errors !== undefined && response.errors.length > 0) {
    out.errors = [{ message: AT_LEAST_ONE_ERROR }];
  } else if (response.errors !== undefined && response.errors.length > 0) {
    out.errors = response.errors.map((e: GraphQLFormattedError) => {
      const error: { message: string; path?: (string | number)[] } = {
        message: mode === "path" ? ANY_MESSAGE : e.message,
      };
      if (e.path !== undefined) error.path = [...e.path];
      return error;
    }).sort((a, b) => {
      const ka = JSON.stringify([a.path ?? [], a.message]);
      const kb = JSON.stringify([b.path ?? [], b.message]);
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
  }
  return out;
}

/**
 * Field names selected in a subgraph request (all levels, fragments included).
 * @param request The recorded request.
 * @returns The set of field names.
 */
export function selectedFields(request: RecordedRequest): Set<string> {
  const names = new Set<string>();
  const document: DocumentNode = parse(request.query);
  visit(document, {
    [Kind.FIELD]: (node) => {
      names.add(node.name.value);
    },
  });
  return names;
}

/**
 * The requests sent to one subgraph.
 * @param run The case run.
 * @param subgraph Subgraph name.
 * @returns Its requests.
 */
export function requestsTo(run: CaseRun, subgraph: string): RecordedRequest[] {
  return run.requests.filter((r) => r.subgraph === subgraph);
}

/**
 * Whether any request to a subgraph selected a field.
 * @param run The case run.
 * @param subgraph Subgraph name.
 * @param field Field name.
 * @returns True when the field was fetched from that subgraph.
 */
export function fetched(run: CaseRun, subgraph: string, field: string): boolean {
  return requestsTo(run, subgraph).some((r) => selectedFields(r).has(field));
}

/**
 * A readable list of the subgraph requests of a run, for assertion messages.
 * @param run The case run.
 * @returns One line per request.
 */
export function describeRequests(run: CaseRun): string {
  return run.requests.map((r) => `${r.subgraph}: ${r.query.replace(/\s+/g, " ")}`).join("\n");
}

/**
 * Reads `known_gaps.json`: full case names (`<area>: <case>`, and
 * `<area>: differential <hash>` for differential cases).
 * @returns The names.
 */
export function knownGaps(): Set<string> {
  try {
    const text = Deno.readTextFileSync(new URL("./known_gaps.json", import.meta.url));
    return new Set(JSON.parse(text) as string[]);
  } catch {
    return new Set();
  }
}

/**
 * Reads an area's expected file.
 * @param area The area name.
 * @returns The expected file, or null when missing.
 */
export function readExpected(area: string): ExpectedFile | null {
  try {
    const text = Deno.readTextFileSync(new URL(`./expected/${area}.json`, import.meta.url));
    return JSON.parse(text) as ExpectedFile;
  } catch {
    return null;
  }
}

/**
 * The full name of a case (`<area>: <case>`), as listed in `known_gaps.json`.
 * @param area The area.
 * @param c The case.
 * @returns The name.
 */
export function caseName(area: Area, c: FedCase): string {
  return `${area.name}: ${c.name}`;
}

/** Engines of one area by settings: cases share them (and their plan caches), as a router would. */
type EngineCache = Map<string, ReturnType<typeof createEngine>>;

/** Runs one case against our engine. */
async function runCase(
  started: StartedArea,
  engines: EngineCache,
  c: FedCase,
): Promise<CaseRun> {
  const key = JSON.stringify(c.settings ?? {});
  let engine = engines.get(key);
  if (engine === undefined) {
    engine = createEngine(buildSupergraph(started.supergraphSdl), engineOptions(c.settings));
    engines.set(key, engine);
  }
  started.requests.length = 0;
  const once = async (_: unknown, i: number): Promise<ExecutionResult> => {
    const prepared = prepare(engine, {
      query: c.query,
      operationName: c.operationName ?? null,
      variables: c.variables ?? null,
    });
    if (!prepared.ok) return { errors: [...prepared.errors] };
    return await execute(engine, prepared.operation, {
      variables: c.variables ?? null,
      headers: new Headers(c.concurrentHeaders?.[i] ?? c.headers ?? {}),
    });
  };
  const responses = await Promise.all(Array.from({ length: c.concurrent ?? 1 }, once));
  return {
    response: responses[0]!,
    responses,
    requests: [...started.requests],
    reference: false,
  };
}

/**
 * Registers the area's tests: one `Deno.test` (subgraphs up for its
 * duration), one step per case. Cases with the same settings share one
 * engine (so a plan cached for one case must serve the next one's
 * variables). Known gaps are ignored steps.
 * Does nothing when `globalThis.FED_REFERENCE_MODE` is set (`_reference.ts`
 * imports the area modules for their definitions).
 * @param area The area.
 */
export function registerArea(area: Area): void {
  if ((globalThis as { FED_REFERENCE_MODE?: boolean }).FED_REFERENCE_MODE) return;
  const gaps = knownGaps();
  Deno.test(`federation ${area.title}`, async (t) => {
    const expected = readExpected(area.name);
    const started = await startArea(area);
    const engines: EngineCache = new Map();
    try {
      for (const c of area.cases) {
        const full = caseName(area, c);
        const gap = gaps.has(full);
        await t.step({
          name: gap ? `KNOWN GAP: ${full}` : full,
          ignore: gap,
          fn: async () => {
            const want = expected?.cases[c.name];
            if (want === undefined) {
              fail(
                `no expected response for "${c.name}": run tests/e2e/federation/_reference.ts --write`,
              );
            }
            const run = await runCase(started, engines, c);
            for (const response of run.responses) {
              const got = normalize(response, c.errors);
              deepStrictEqual(got, want.response);
              if (c.ordered) {
                equal(
                  JSON.stringify(got.data),
                  JSON.stringify(want.response.data),
                  "selection order",
                );
              }
            }
            c.check?.(run);
          },
        });
      }
    } finally {
      await started.close();
    }
  });
}

/** Re-exported for area files. */
export type { ExecutionResult, SubgraphResolvers };

/**
 * The `@link` line of a Federation v2 subgraph SDL.
 * @param imports Directives to import (`"@key"`, …).
 * @returns `extend schema @link(...)`.
 */
export function fed2(...imports: string[]): string {
  return `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: [${
    imports.map((i) => JSON.stringify(i)).join(", ")
  }])\n`;
}
