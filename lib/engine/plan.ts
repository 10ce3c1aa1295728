/**
 * The query planner (see `plan/mod.ts`): re-exported here for the engine, the executor and
 * the benchmarks.
 *
 * @module
 */
export * from "./plan/mod.ts";
