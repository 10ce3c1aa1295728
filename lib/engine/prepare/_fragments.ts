/**
 * Fragment summaries computed once each, in dependency order: the walks that
 * look through fragment spreads (operation limits, the `ofType` chain) read a
 * spread's summary instead of walking the fragment again, so their cost is
 * linear in the document's text however often fragments are spread.
 *
 * @module
 */
import { type FragmentDefinitionNode, Kind, type SelectionSetNode } from "graphql";

/** Summarizes one selection set, given the summaries of the fragments it spreads. */
export type SummarizeSet<T> = (set: SelectionSetNode, fragments: ReadonlyMap<string, T>) => T;

/**
 * Summaries of every fragment, each computed once after the fragments it
 * spreads (an explicit-stack depth-first walk; a spread that closes a cycle,
 * or names an unknown fragment, is missing from the map its summarizer gets:
 * validation reports it).
 *
 * @example Each fragment once, spreads first
 * ```ts
 * import assert from "node:assert/strict";
 * import { Kind, parse, type FragmentDefinitionNode } from "graphql";
 * import { summarizeFragments } from "./_fragments.ts";
 * const document = parse("fragment A on Q { ...B ...B } fragment B on Q { x }");
 * const definitions = new Map<string, FragmentDefinitionNode>();
 * for (const d of document.definitions) {
 *   if (d.kind === Kind.FRAGMENT_DEFINITION) definitions.set(d.name.value, d);
 * }
 * const fields = summarizeFragments<number>(definitions, (set, done) =>
 *   set.selections.reduce((n, s) =>
 *     n + (s.kind === Kind.FRAGMENT_SPREAD ? done.get(s.name.value) ?? 0 : 1), 0));
 * assert.deepEqual([...fields], [["B", 1], ["A", 2]]);
 * ```
 * @param definitions The document's fragments by name.
 * @param summarize Summarizes one fragment's selection set.
 * @returns The summaries by fragment name.
 */
export function summarizeFragments<T>(
  definitions: ReadonlyMap<string, FragmentDefinitionNode>,
  summarize: SummarizeSet<T>,
): Map<string, T> {
  const done = new Map<string, T>();
  const open = new Set<string>();
  for (const start of definitions.keys()) {
    if (done.has(start)) continue;
    const stack: { name: string; deps: string[] | null }[] = [{ name: start, deps: null }];
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      const definition = definitions.get(frame.name)!;
      if (frame.deps === null) {
        open.add(frame.name);
        frame.deps = directSpreads(definition.selectionSet);
      }
      const next = frame.deps.pop();
      if (next !== undefined) {
        if (definitions.has(next) && !done.has(next) && !open.has(next)) {
          stack.push({ name: next, deps: null });
        }
        continue;
      }
      stack.pop();
      open.delete(frame.name);
      done.set(frame.name, summarize(definition.selectionSet, done));
    }
  }
  return done;
}

/** Spreads named directly in a selection set (not through other fragments). */
function directSpreads(set: SelectionSetNode): string[] {
  const names: string[] = [];
  const stack: SelectionSetNode[] = [set];
  while (stack.length > 0) {
    const current = stack.pop()!;
    for (const s of current.selections) {
      if (s.kind === Kind.FRAGMENT_SPREAD) names.push(s.name.value);
      else if (s.selectionSet) stack.push(s.selectionSet);
    }
  }
  return names;
}
