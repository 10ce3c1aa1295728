/**
 * Reference run of the federation feature areas (a script, not a test).
 *
 * Runs every area's operations through Apollo Gateway (the reference
 * federation gateway), in-process, against the same subgraphs and the same
 * composed supergraph our tests use, and writes (`--write`) or compares
 * (default) `expected/<area>.json`. A case with an `override` keeps the
 * reference's answer and a note beside the response the feature requires.
 *
 * ```sh
 * deno run -A tests/e2e/federation/_reference.ts [--write] [area ...]
 * ```
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import { ApolloGateway } from "@apollo/gateway";
import { ApolloServer } from "@apollo/server";
import {
  type Area,
  type CaseRun,
  type ExecutionResult,
  type ExpectedCase,
  type ExpectedFile,
  normalize,
  readExpected,
  startArea,
} from "./_harness.ts";

const REFERENCE = "@apollo/gateway@2.14.4";

(globalThis as { FED_REFERENCE_MODE?: boolean }).FED_REFERENCE_MODE = true;

/** Loads every `<area>_test.ts` module's `area` export. */
async function loadAreas(only: readonly string[]): Promise<Area[]> {
  const areas: Area[] = [];
  const dir = new URL("./", import.meta.url);
  const names = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith("_test.ts"))
    .sort();
  for (const file of names) {
    const module = await import(new URL(file, dir).href) as { area?: Area };
    if (module.area === undefined) continue;
    if (only.length > 0 && !only.includes(module.area.name)) continue;
    areas.push(module.area);
  }
  return areas;
}

/** Runs one area through Apollo Gateway; returns its expected file. */
async function referenceArea(area: Area): Promise<{ file: ExpectedFile; problems: string[] }> {
  const problems: string[] = [];
  const started = await startArea(area);
  const gateway = new ApolloGateway({ supergraphSdl: started.supergraphSdl });
  const server = new ApolloServer({ gateway });
  const cases: Record<string, ExpectedCase> = {};
  try {
    // a supergraph the reference cannot load (e.g. @context): every case records why
    const refused = await server.start().then(() => null, (error) => String(error).split("\n")[0]);
    if (refused !== null) {
      problems.push(`${area.name}: reference refused the supergraph: ${refused}`);
    }
    for (const c of area.cases) {
      started.requests.length = 0;
      // the reference has no header rules: client headers do not reach subgraphs
      const once = async (): Promise<ExecutionResult> => {
        if (refused !== null) return { errors: [{ message: `reference refused: ${refused}` }] };
        try {
          const result = await server.executeOperation({
            query: c.query,
            ...(c.operationName !== undefined ? { operationName: c.operationName } : {}),
            ...(c.variables !== undefined ? { variables: c.variables } : {}),
          });
          if (result.body.kind !== "single") return { errors: [{ message: "incremental result" }] };
          return result.body.singleResult as ExecutionResult;
        } catch (error) {
          return { errors: [{ message: `reference threw: ${String(error)}` }] };
        }
      };
      const responses = await Promise.all(Array.from({ length: c.concurrent ?? 1 }, once));
      const response = responses[0]!;
      const run: CaseRun = {
        response,
        responses,
        requests: [...started.requests],
        reference: true,
      };
      let referenceCheck: string = "skipped";
      if (c.check !== undefined && c.checkReference !== false) {
        try {
          c.check(run);
          referenceCheck = "passed";
        } catch (error) {
          referenceCheck = `failed: ${error instanceof Error ? error.message : String(error)}`;
          problems.push(`${area.name}: ${c.name}: reference fails the check: ${referenceCheck}`);
        }
      }
      const got = normalize(response, c.errors);
      const entry: {
        response: ExpectedCase["response"];
        reference?: ExpectedCase["response"];
        note?: string;
        referenceCheck?: string;
      } = { response: got };
      if (c.override !== undefined) {
        const want = normalize(c.override.response, c.errors);
        entry.response = want;
        if (!isDeepStrictEqual(want, got)) {
          entry.reference = got;
          problems.push(`${area.name}: ${c.name}: reference disagrees (${c.override.note})`);
        }
        entry.note = c.override.note;
      }
      if (c.note !== undefined) {
        entry.note = entry.note === undefined ? c.note : `${entry.note}; ${c.note}`;
      }
      if (c.check !== undefined) entry.referenceCheck = referenceCheck;
      cases[c.name] = entry;
    }
  } finally {
    await server.stop().catch(() => {}).then(() => gateway.stop()).catch(() => {});
    await started.close();
  }
  return { file: { area: area.name, reference: REFERENCE, cases }, problems };
}

if (import.meta.main) {
  const write = Deno.args.includes("--write");
  const only = Deno.args.filter((a) => !a.startsWith("--"));
  const areas = await loadAreas(only);
  let differences = 0;
  for (const area of areas) {
    const { file, problems } = await referenceArea(area);
    for (const p of problems) console.log(`NOTE ${p}`);
    const path = new URL(`./expected/${area.name}.json`, import.meta.url);
    const old = readExpected(area.name);
    if (write) {
      await Deno.mkdir(new URL("./expected/", import.meta.url), { recursive: true });
      await Deno.writeTextFile(path, JSON.stringify(file, null, 2) + "\n");
      console.log(`wrote expected/${area.name}.json (${area.cases.length} cases)`);
    } else if (old === null) {
      differences++;
      console.log(`MISSING expected/${area.name}.json`);
    } else {
      for (const [name, entry] of Object.entries(file.cases)) {
        if (!isDeepStrictEqual(old.cases[name], entry)) {
          differences++;
          console.log(
            `DIFFERS ${area.name}: ${name}\n  file: ${JSON.stringify(old.cases[name])}\n  now:  ${
              JSON.stringify(entry)
            }`,
          );
        }
      }
      console.log(`checked expected/${area.name}.json`);
    }
  }
  if (differences > 0) Deno.exit(1);
  Deno.exit(0);
}
