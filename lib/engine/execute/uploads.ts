/**
 * File uploads in a plan (issue 43): the files of a multipart request go, as
 * they stream in, with the one subgraph fetch that takes them. Planning
 * decides which fetch that is, and refuses what cannot be streamed: files in
 * variables no fetch uses (they would never be read), used by two fetches (a
 * stream is read once), or by an entity fetch (sent for many objects, or
 * after other fetches' answers).
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import type { FetchStep, PlanStep } from "../plan/mod.ts";

/** The stable code of an upload the plan cannot route. */
export const UPLOAD_NOT_ROUTABLE = "FILE_UPLOAD_NOT_ROUTABLE";

/**
 * The fetch that takes the files of `variables`, or the error refusing the operation.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { uploadFetchOf } from "./uploads.ts";
 * const fetch = (subgraph: string, variableUsages: string[]) => ({
 *   kind: "Fetch" as const, subgraph, variableUsages, representations: null,
 * });
 * const one = fetch("media", ["file"]);
 * const plan = { kind: "Sequence" as const, steps: [fetch("accounts", []), one] };
 * // deno-lint-ignore no-explicit-any
 * assert.equal((uploadFetchOf(plan as any, new Set(["file"])) as any).step, one);
 * const two = { kind: "Parallel" as const, steps: [one, fetch("other", ["file"])] };
 * // deno-lint-ignore no-explicit-any
 * assert.match((uploadFetchOf(two as any, new Set(["file"])) as any).error.message, /media, other/);
 * ```
 * @param step The plan's steps.
 * @param variables The top-level variables holding files.
 * @returns The fetch, or the error (code `FILE_UPLOAD_NOT_ROUTABLE`).
 */
export function uploadFetchOf(
  step: PlanStep | null,
  variables: ReadonlySet<string>,
): { readonly step: FetchStep } | { readonly error: GraphQLFormattedError } {
  const users: FetchStep[] = [];
  const walk = (node: PlanStep | null) => {
    if (node === null) return;
    if (node.kind === "Fetch") {
      if (node.variableUsages.some((name) => variables.has(name))) users.push(node);
    } else for (const child of node.steps) walk(child);
  };
  walk(step);
  const names = [...variables].map((name) => `$${name}`).join(", ");
  const refuse = (message: string) => ({
    error: { message, extensions: { code: UPLOAD_NOT_ROUTABLE } },
  });
  if (users.length === 0) {
    return refuse(
      `No subgraph fetch of the operation takes the files in ${names}: they would never be read`,
    );
  }
  if (users.length > 1) {
    const subgraphs = [...new Set(users.map((u) => u.subgraph))].join(", ");
    return refuse(
      `The files in ${names} are needed by ${users.length} subgraph fetches (${subgraphs}); a file is streamed to one subgraph fetch only`,
    );
  }
  const user = users[0]!;
  if (user.representations !== null) {
    return refuse(
      `The files in ${names} are used by an entity fetch of subgraph "${user.subgraph}"; files are streamed only to a root field's subgraph`,
    );
  }
  const missing = [...variables].filter((name) => !user.variableUsages.includes(name));
  if (missing.length > 0) {
    return refuse(
      `The files in ${
        missing.map((name) => `$${name}`).join(", ")
      } are not used by the subgraph fetch that takes the others`,
    );
  }
  return { step: user };
}
