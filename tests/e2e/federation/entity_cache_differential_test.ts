/**
 * Issue 42's differential test: generated operations over the federation
 * test graphs (the issue 13 shape corpus: `@requires`, `@context`, interface
 * objects, multiple keys, list keys, null key hops, shared roots…) answer the
 * same with the entity cache on — cold, warm, and partially warm (one
 * subgraph's or type's entries invalidated before each run) — as with it off.
 * Each graph must be served in part from the cache (hits counted), so the
 * comparison is not vacuous.
 *
 * `GW_DIFF_CASES` sets the operations per graph (default 40).
 */
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { createEngine, execute, prepare } from "../../../lib/engine/mod.ts";
import { buildSupergraph } from "../../../lib/supergraph/mod.ts";
import { parseConfig } from "../../../lib/config/mod.ts";
import { EntityCacheStore, MemoryStore } from "../../../lib/store/mod.ts";
import { engineEntityCache } from "../../../lib/state/entity_cache.ts";
import { type Area, engineOptions, normalize, startArea } from "./_harness.ts";
import { drawConditions, generateOperation } from "./_opgen.ts";

(globalThis as { FED_REFERENCE_MODE?: boolean }).FED_REFERENCE_MODE = true;

const GRAPHS = [
  "shape_requires_self",
  "shape_shared_node",
  "shape_context",
  "shape_entity_list_key",
  "shape_interface_object_extension",
  "shape_interface_object_requires",
  "shape_multi_key",
  "shape_null_key_hop",
  "shape_parent_entity",
  "shape_requires_entity_list",
  "shape_requires_requires",
  "shape_nested_provides",
];

const CASES = Number(Deno.env.get("GW_DIFF_CASES") ?? "40");

type Engine = ReturnType<typeof createEngine>;

async function run(engine: Engine, query: string, variables: Record<string, unknown>) {
  const prepared = prepare(engine, { query, operationName: null, variables });
  if (!prepared.ok) return normalize({ errors: [...prepared.errors] });
  return normalize(
    await execute(engine, prepared.operation, { variables, headers: new Headers() }),
  );
}

/** Lets the entries written after an answer land (writes are not awaited by requests). */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

for (const name of GRAPHS) {
  Deno.test(`issue 42 differential: ${name} answers the same with the entity cache cold, warm and partially warm`, async () => {
    const { area } = await import(`./${name}_test.ts`) as { area: Area };
    const started = await startArea(area);
    try {
      const supergraph = buildSupergraph(started.supergraphSdl);
      const off = createEngine(supergraph, engineOptions());
      const store = new EntityCacheStore({
        store: new MemoryStore({ maxBytes: 50_000_000 }),
        prefix: "diff",
      });
      const outcomes = { hit: 0, partial: 0, miss: 0 };
      const types = new Set<string>();
      const cache = engineEntityCache(
        parseConfig({ entity_cache: { enabled: true } }).entity_cache,
        {
          store,
          model: supergraph,
          events: {
            lookup: (subgraph, type, outcome) => {
              outcomes[outcome]++;
              types.add(`${subgraph}:${type}`);
            },
            stored: () => {},
          },
        },
      );
      const on = createEngine(supergraph, { ...engineOptions(), entityCache: cache });
      // Merged in place (no single flight): entries are parsed per request, never shared.
      const inPlace = createEngine(supergraph, {
        ...engineOptions({ enableSingleFlight: false }),
        entityCache: cache,
      });
      const runs: { query: string; variables: Record<string, unknown> }[] = [];
      const seen = new Set<string>();
      for (let seed = 1; seed <= CASES; seed++) {
        const query = generateOperation(supergraph.apiSchema, { seed });
        if (seen.has(query)) continue;
        seen.add(query);
        for (const variables of drawConditions(query, seed)) runs.push({ query, variables });
      }
      const failures: string[] = [];
      const compare = (label: string, at: number, want: unknown, got: unknown) => {
        if (isDeepStrictEqual(want, got)) return;
        const { query, variables } = runs[at]!;
        failures.push(
          `${label}: ${query} ${JSON.stringify(variables)}\n  off: ${
            JSON.stringify(want)
          }\n  on:  ${JSON.stringify(got)}`,
        );
      };
      const wants = [];
      for (const [i, { query, variables }] of runs.entries()) {
        const want = await run(off, query, variables);
        wants.push(want);
        compare("cold", i, want, await run(on, query, variables));
        await settle();
        compare("warm", i, want, await run(on, query, variables));
        compare("warm, in place", i, want, await run(inPlace, query, variables));
        // The shared parses were not written to by the in-place run.
        compare("warm again", i, want, await run(on, query, variables));
      }
      assert.ok(outcomes.hit > 0, `${name}: nothing was served from the cache`);
      // Partially warm: before each run, one subgraph's or one type's entries go.
      const prefixes = [...types].flatMap((t) => [`${t}:`, `${t.split(":")[0]}:`]);
      for (const [i, { query, variables }] of runs.entries()) {
        await store.invalidate(prefixes[i % prefixes.length]!);
        compare("partial", i, wants[i], await run(on, query, variables));
        await settle();
      }
      assert.deepEqual(failures, [], failures.join("\n"));
    } finally {
      await started.close();
    }
  });
}
