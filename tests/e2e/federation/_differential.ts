/**
 * Differential federation tests: a scenario's federated graph (real
 * subgraphs, composed supergraph, our engine) against its monolith (one
 * graphql-js schema over the same data), on operations drawn by the seeded
 * generator (`_opgen.ts`) from the API schema.
 *
 * The scenario's own cases are checked too: their expected responses (from
 * the reference gateway, or an `override`) must be the monolith's answer.
 *
 * `GW_DIFF_CASES` sets the operations per scenario (default 300) and
 * `GW_DIFF_SEED` the first seed (default 1): operation `i` uses seed
 * `GW_DIFF_SEED + i`; an operation with `@skip`/`@include` variables runs
 * twice (a drawn assignment and its complement) on one engine, so a cached
 * plan must serve other variables. A case is the pair (data, whether errors were
 * reported); messages differ between implementations and are not compared.
 * A scenario's `unreachable` coordinates may be drawn too: a run that selects one must be
 * refused at planning (`QUERY_PLANNING_FAILED`, `data: null`, no subgraph request), or, when
 * the selection is redundant (the same field on the interface beside it), answer exactly as
 * the monolith without errors.
 * A difference fails the test with the operation and its seed, unless it is
 * listed in `known_gaps.json` as `<area>: differential <hash>` (the FNV-1a
 * hash of the operation text, and of its variables when it has any), so a
 * new failing operation still fails.
 *
 * @module
 */
import { fail } from "node:assert/strict";
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  getNamedType,
  type GraphQLCompositeType,
  type GraphQLSchema,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  Kind,
  parse,
  type SelectionSetNode,
} from "graphql";
import { isDeepStrictEqual } from "node:util";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { createEngine, execute, executeIncremental, prepare } from "../../../lib/engine/mod.ts";
import { mergeParts } from "./_incremental.ts";
import { isIncluded } from "../../../lib/engine/prepare/normalize.ts";
import {
  type Area,
  engineOptions,
  type ExecutionResult,
  knownGaps,
  readExpected,
  startArea,
} from "./_harness.ts";
import { drawConditions, generateOperation, type OpGenOptions } from "./_opgen.ts";
import { monolithSchema, runMonolith } from "./_monolith.ts";

/** A scenario of the differential tests: the area's graph and the monolith's data. */
export interface DiffScenario {
  /** The federated graph (its cases run in the area's own test). */
  readonly area: Area;
  /** The monolith's root object (`Query` data; the subgraphs serve the same data). */
  readonly root: unknown;
  /** Names a second differential test of the same area (other generator settings). */
  readonly label?: string;
  /** Generator settings (depth, value pools, roots, excluded fields). */
  readonly generator?: Omit<OpGenOptions, "seed">;
  /**
   * Coordinates (`Type.field`, `Type.__typename`) that no path from the generator's roots
   * reaches. The generator may select them; an operation that does (after `@skip`/`@include`)
   * must be refused at planning: `QUERY_PLANNING_FAILED`, `data: null`, no subgraph request.
   */
  readonly unreachable?: readonly string[];
}

/** What a differential case compares. */
interface Outcome {
  readonly data: unknown;
  readonly errors: boolean;
}

/**
 * FNV-1a (32 bit) of a text, as 8 hex digits: the stable id of an operation.
 * @param text The operation.
 * @returns The hash.
 */
export function operationHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/**
 * The `known_gaps.json` name of a differential case.
 * @param area The scenario's area.
 * @param operation The operation text.
 * @param variables Its variables (part of the hash when there are any).
 * @returns `<area>: differential <hash>`.
 */
export function differentialCaseName(
  area: Area,
  operation: string,
  variables: Record<string, unknown> = {},
): string {
  const text = Object.keys(variables).length === 0
    ? operation
    : `${operation}\n${JSON.stringify(variables)}`;
  return `${area.name}: differential ${operationHash(text)}`;
}

function outcome(response: ExecutionResult): Outcome {
  return {
    data: JSON.parse(JSON.stringify(response.data ?? null)),
    errors: (response.errors?.length ?? 0) > 0,
  };
}

/**
 * The first coordinate of `unreachable` an operation selects once `@skip`/`@include` are applied
 * (fragments followed, type conditions taken as the coordinate's type), or null.
 * @param schema The API schema.
 * @param options The operation, its variables and the unreachable coordinates.
 * @returns The coordinate, or null.
 */
export function selectsUnreachable(
  schema: GraphQLSchema,
  options: {
    query: string;
    variables: Record<string, unknown>;
    unreachable: ReadonlySet<string>;
  },
): string | null {
  const document: DocumentNode = parse(options.query);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  }
  const walk = (set: SelectionSetNode, type: GraphQLCompositeType): string | null => {
    for (const s of set.selections) {
      if (!isIncluded(s.directives, options.variables)) continue;
      let found: string | null = null;
      if (s.kind === Kind.FIELD) {
        const coordinate = `${type.name}.${s.name.value}`;
        if (options.unreachable.has(coordinate)) return coordinate;
        if (s.selectionSet && (isObjectType(type) || isInterfaceType(type))) {
          const named = getNamedType(type.getFields()[s.name.value]!.type);
          if (isCompositeType(named)) found = walk(s.selectionSet, named);
        }
      } else {
        const fragment = s.kind === Kind.INLINE_FRAGMENT ? s : fragments.get(s.name.value)!;
        const condition = fragment.typeCondition?.name.value;
        const inner = condition === undefined ? type : schema.getType(condition);
        if (isCompositeType(inner)) found = walk(fragment.selectionSet, inner);
      }
      if (found !== null) return found;
    }
    return null;
  };
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  const root = schema.getQueryType();
  if (operation?.kind !== Kind.OPERATION_DEFINITION || !root) return null;
  return walk(operation.selectionSet, root);
}

/** Why a refused operation's answer is not a planning refusal before any fetch, or null. */
function refusalProblem(response: ExecutionResult, requests: number): string | null {
  const codes = (response.errors ?? []).map((e) => e.extensions?.code);
  if (response.data !== null) return `data is ${JSON.stringify(response.data)}, not null`;
  if (codes.length === 0 || codes.some((c) => c !== "QUERY_PLANNING_FAILED")) {
    return `error codes ${JSON.stringify(codes)}, not QUERY_PLANNING_FAILED`;
  }
  if (requests > 0) return `${requests} subgraph request(s) sent`;
  return null;
}

function settings(): { cases: number; seed: number } {
  const cases = Number(Deno.env.get("GW_DIFF_CASES") ?? "300");
  const seed = Number(Deno.env.get("GW_DIFF_SEED") ?? "1");
  return {
    cases: Number.isInteger(cases) && cases >= 0 ? cases : 300,
    seed: Number.isInteger(seed) ? seed : 1,
  };
}

/**
 * Runs one operation through our engine; `incremental`: honouring `@defer`, with the parts
 * merged as a client merges them.
 */
async function runEngine(
  engine: ReturnType<typeof createEngine>,
  query: string,
  variables: Record<string, unknown>,
  incremental = false,
): Promise<ExecutionResult> {
  const prepared = prepare(engine, { query, operationName: null, variables });
  if (!prepared.ok) return { errors: [...prepared.errors] };
  const options = { variables, headers: new Headers() };
  if (!incremental) return await execute(engine, prepared.operation, options);
  const outcome = await executeIncremental(engine, prepared.operation, options);
  if (!("initial" in outcome)) return outcome;
  const parts: Record<string, unknown>[] = [{ ...outcome.initial }];
  for await (const part of outcome.subsequent) parts.push({ ...part });
  if (parts.at(-1)?.hasNext !== false) throw new Error("the last part must say hasNext: false");
  return mergeParts(parts) as ExecutionResult;
}

/** Checks the area's expected responses (from the reference gateway) against the monolith. */
async function checkExpected(scenario: DiffScenario, monolith: GraphQLSchema): Promise<void> {
  const expected = readExpected(scenario.area.name);
  const problems: string[] = [];
  for (const c of scenario.area.cases) {
    const want = expected?.cases[c.name];
    if (c.monolith === false || want === undefined || c.variables !== undefined) continue;
    const mono = outcome(await runMonolith(monolith, { query: c.query, root: scenario.root }));
    const file = {
      data: want.response.data ?? null,
      errors: (want.response.errors ?? []).length > 0,
    };
    if (!isDeepStrictEqual(mono, file)) {
      problems.push(
        `${c.name}\n  monolith: ${JSON.stringify(mono)}\n  expected: ${JSON.stringify(file)}`,
      );
    }
  }
  if (problems.length > 0) {
    fail(
      `expected/${scenario.area.name}.json disagrees with the monolith:\n` + problems.join("\n"),
    );
  }
}

/** What {@linkcode compareWithMonolith} found. */
export interface Comparison {
  /** Differences not listed as known gaps: name, seed, operation and both answers. */
  readonly failures: readonly string[];
  /** Differences listed as known gaps. */
  readonly known: number;
  /** Known gaps whose operation now answers as the monolith (to be removed from the list). */
  readonly fixed: readonly string[];
  /** Distinct operations compared. */
  readonly compared: number;
  /** Runs that selected an unreachable field and were refused at planning, as they must be. */
  readonly refused: number;
  /**
   * Runs that selected an unreachable coordinate redundantly (a member fragment repeating an
   * interface field the interface object resolves) and answered exactly as the monolith.
   */
  readonly redundant: number;
}

/**
 * Runs generated operations through our engine (over a running area's
 * supergraph) and the monolith, and reports the differences.
 * @param scenario The scenario.
 * @param options The running area's supergraph SDL, how many seeds from which one, the known gaps.
 * @returns The differences.
 */
export async function compareWithMonolith(
  scenario: DiffScenario,
  options: {
    supergraphSdl: string;
    cases: number;
    seed: number;
    gaps: ReadonlySet<string>;
    /** The running area's request log (emptied before each run): refusals must send nothing. */
    requests?: unknown[];
    /** Draw `@defer` too (this probability) and merge the incremental parts before comparing. */
    defer?: number;
  },
): Promise<Comparison> {
  const supergraph = buildSupergraph(options.supergraphSdl);
  const engine = createEngine(supergraph, engineOptions());
  const monolith = monolithSchema(supergraph.apiSchema);
  const failures: string[] = [];
  const fixed: string[] = [];
  let known = 0;
  let refused = 0;
  let redundant = 0;
  const unreachable = new Set(scenario.unreachable ?? []);
  const seen = new Set<string>();
  for (let i = 0; i < options.cases; i++) {
    const seed = options.seed + i;
    const query = generateOperation(supergraph.apiSchema, {
      ...scenario.generator,
      seed,
      ...(options.defer ? { defer: options.defer } : {}),
    });
    const incremental = options.defer !== undefined && options.defer > 0;
    if (seen.has(query)) continue;
    seen.add(query);
    // one engine for all runs: a plan cached for one assignment serves the other
    for (const variables of drawConditions(query, seed)) {
      const name = differentialCaseName(scenario.area, query, variables);
      const vars = Object.keys(variables).length === 0
        ? ""
        : `\n  variables: ${JSON.stringify(variables)}`;
      const blocked = unreachable.size === 0
        ? null
        : selectsUnreachable(supergraph.apiSchema, { query, variables, unreachable });
      if (blocked !== null) {
        if (options.requests) options.requests.length = 0;
        const response = await runEngine(engine, query, variables, incremental);
        const problem = refusalProblem(response, options.requests?.length ?? 0);
        if (problem === null) refused++;
        else if (
          !response.errors?.length &&
          isDeepStrictEqual(
            outcome(response),
            outcome(await runMonolith(monolith, { query, variables, root: scenario.root })),
          )
        ) {
          // The selection is redundant (`{ score ... on User { score } }` needs no type): answered.
          redundant++;
        } else {
          failures.push(
            `${name} (seed ${seed}) selects unreachable ${blocked}: ${problem}\n${query}${vars}` +
              `\n  gw: ${JSON.stringify(response)}`,
          );
        }
        continue;
      }
      const want = outcome(await runMonolith(monolith, { query, variables, root: scenario.root }));
      const response = await runEngine(engine, query, variables, incremental);
      if (isDeepStrictEqual(outcome(response), want)) {
        if (options.gaps.has(name)) fixed.push(name);
        continue;
      }
      if (options.gaps.has(name)) {
        known++;
        continue;
      }
      failures.push(
        `${name} (seed ${seed})\n${query}${vars}\n  monolith: ${JSON.stringify(want)}\n  ` +
          `gw:       ${JSON.stringify(response)}`,
      );
    }
  }
  return { failures, known, fixed, compared: seen.size, refused, redundant };
}

/**
 * Registers a scenario's differential test: one `Deno.test` with two steps,
 * the area's expected responses checked against the monolith, then the
 * generated operations run through our engine and the monolith.
 * Does nothing when `globalThis.FED_REFERENCE_MODE` is set.
 * @param scenario The scenario.
 */
export function registerDifferential(scenario: DiffScenario): void {
  if ((globalThis as { FED_REFERENCE_MODE?: boolean }).FED_REFERENCE_MODE) return;
  const { area } = scenario;
  const label = scenario.label === undefined ? "" : ` (${scenario.label})`;
  Deno.test(`federation differential: ${area.title}${label}`, async (t) => {
    const started = await startArea(area);
    try {
      if (scenario.label === undefined) {
        await t.step("the expected responses agree with the monolith", async () => {
          const api = buildSupergraph(started.supergraphSdl).apiSchema;
          await checkExpected(scenario, monolithSchema(api));
        });
      }
      await t.step("generated operations answer as the monolith", async () => {
        const { failures, known, fixed, compared, refused, redundant } = await compareWithMonolith(
          scenario,
          {
            supergraphSdl: started.supergraphSdl,
            ...settings(),
            gaps: knownGaps(),
            requests: started.requests,
          },
        );
        const refusals = scenario.unreachable === undefined
          ? ""
          : `, ${refused} run(s) refused at planning (unreachable fields), ${redundant} ` +
            `redundant unreachable selection(s) answered as the monolith`;
        console.log(
          `${area.name}: ${compared} distinct operations, ${known} known gap(s)${refusals}`,
        );
        if (fixed.length > 0) {
          console.log(
            `known gaps that now pass (remove them from known_gaps.json):\n${fixed.join("\n")}`,
          );
        }
        if (failures.length > 0) {
          fail(
            `${failures.length} operation(s) answer differently from the monolith:\n\n` +
              failures.join("\n\n"),
          );
        }
      });
      await t.step(
        "generated operations with random @defer, parts merged, answer as the monolith",
        async () => {
          const { failures, compared } = await compareWithMonolith(scenario, {
            supergraphSdl: started.supergraphSdl,
            ...settings(),
            gaps: knownGaps(),
            requests: started.requests,
            defer: 0.35,
          });
          console.log(`${area.name}: ${compared} distinct operations with @defer`);
          if (failures.length > 0) {
            fail(
              `${failures.length} deferred operation(s) answer differently from the monolith:\n\n` +
                failures.join("\n\n"),
            );
          }
        },
      );
    } finally {
      await started.close();
    }
  });
}
