/**
 * Differential federation tests: a scenario's federated graph (real
 * subgraphs, composed supergraph, our engine) against its monolith (one
 * graphql-js schema over the same data), on operations drawn by the seeded
 * generator (`_opgen.ts`) from the API schema.
 *
 * `GW_DIFF_CASES` sets the operations per scenario (default 200) and
 * `GW_DIFF_SEED` the first seed (default 1): operation `i` uses seed
 * `GW_DIFF_SEED + i`. A case is the pair (data, whether errors were
 * reported); messages differ between implementations and are not compared.
 * A difference fails the test with the operation and its seed, unless it is
 * listed in `known_gaps.json` as `<area>: differential <hash>` (the FNV-1a
 * hash of the operation text), so a new failing operation still fails.
 *
 * @module
 */
import { fail } from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { createEngine, execute, prepare } from "../../../lib/engine/mod.ts";
import {
  type Area,
  engineOptions,
  type ExecutionResult,
  knownGaps,
  startArea,
} from "./_harness.ts";
import { generateOperation, type OpGenOptions } from "./_opgen.ts";
import { monolithSchema, runMonolith } from "./_monolith.ts";

/** A scenario of the differential tests: the area's graph and the monolith's data. */
export interface DiffScenario {
  /** The federated graph (its cases run in the area's own test). */
  readonly area: Area;
  /** The monolith's root object (`Query` data; the subgraphs serve the same data). */
  readonly root: unknown;
  /** Generator settings (depth, value pools, roots, excluded fields). */
  readonly generator?: Omit<OpGenOptions, "seed">;
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
 * @returns `<area>: differential <hash>`.
 */
export function differentialCaseName(area: Area, operation: string): string {
  return `${area.name}: differential ${operationHash(operation)}`;
}

function outcome(response: ExecutionResult): Outcome {
  return {
    data: JSON.parse(JSON.stringify(response.data ?? null)),
    errors: (response.errors?.length ?? 0) > 0,
  };
}

function settings(): { cases: number; seed: number } {
  const cases = Number(Deno.env.get("GW_DIFF_CASES") ?? "200");
  const seed = Number(Deno.env.get("GW_DIFF_SEED") ?? "1");
  return {
    cases: Number.isInteger(cases) && cases >= 0 ? cases : 200,
    seed: Number.isInteger(seed) ? seed : 1,
  };
}

/**
 * Registers a scenario's differential test (one `Deno.test`).
 * Does nothing when `globalThis.FED_REFERENCE_MODE` is set.
 * @param scenario The scenario.
 */
export function registerDifferential(scenario: DiffScenario): void {
  if ((globalThis as { FED_REFERENCE_MODE?: boolean }).FED_REFERENCE_MODE) return;
  const { area } = scenario;
  Deno.test(`federation differential: ${area.title}`, async () => {
    const { cases, seed } = settings();
    const gaps = knownGaps();
    const started = await startArea(area);
    const failures: string[] = [];
    let known = 0;
    try {
      const supergraph = buildSupergraph(started.supergraphSdl);
      const engine = createEngine(supergraph, engineOptions());
      const monolith = monolithSchema(supergraph.apiSchema);
      const seen = new Set<string>();
      for (let i = 0; i < cases; i++) {
        const query = generateOperation(supergraph.apiSchema, {
          ...scenario.generator,
          seed: seed + i,
        });
        if (seen.has(query)) continue;
        seen.add(query);
        const want = outcome(await runMonolith(monolith, { query, root: scenario.root }));
        const prepared = prepare(engine, { query, operationName: null, variables: null });
        const response: ExecutionResult = prepared.ok
          ? await execute(engine, prepared.operation, { variables: null, headers: new Headers() })
          : { errors: [...prepared.errors] };
        const got = outcome(response);
        if (isDeepStrictEqual(got, want)) continue;
        const name = differentialCaseName(area, query);
        if (gaps.has(name)) {
          known++;
          continue;
        }
        failures.push(
          `${name} (seed ${seed + i})\n${query}\n  monolith: ${JSON.stringify(want)}\n  ` +
            `gw:       ${JSON.stringify(response)}`,
        );
      }
    } finally {
      await started.close();
    }
    if (known > 0) console.log(`${area.name}: ${known} differential case(s) are known gaps`);
    if (failures.length > 0) {
      fail(
        `${failures.length} operation(s) answer differently from the monolith:\n\n` +
          failures.join("\n\n"),
      );
    }
  });
}
