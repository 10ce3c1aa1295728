/**
 * Incremental delivery (`@defer`): after the primary part, each deferred branch of the plan
 * runs once the delivery it depends on is in, and yields its part as soon as it completes:
 * one entry per object at the fragment's path (Apollo's `deferSpec=20220824` shape,
 * `{incremental: [{data, path, label?, errors?}], hasNext}`). A fragment without fetches of its
 * own comes with the delivery it depends on (the primary part's data, or that branch's entries).
 *
 * What each part holds is the client's normalized selection filtered by delivery
 * ({@linkcode deliverySelection}); its objects are found in what the client has been sent so
 * far, so an object nulled in the primary part gets no entry.
 *
 * @module
 */
import type { GraphQLFormattedError } from "graphql";
import type { DeferredStep, DeferStep } from "../plan/mod.ts";
import type { NField, NSelection } from "../prepare/mod.ts";
import type { IncrementalEntry, PartInfo, SubsequentResult } from "../types.ts";
import type { PlanRun } from "./execute_types.ts";

type Json = Record<string, unknown>;

/**
 * The selection a delivery sends: fields whose delivery is in `deliveries`, and the composite
 * fields above them (with only what is theirs below).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse } from "graphql";
 * import { normalizeOperation } from "../prepare/normalize.ts";
 * import { deliverySelection } from "./incremental.ts";
 * const schema = buildSchema("type Query { a: Int b: Int }");
 * const op = normalizeOperation(schema, parse("{ a ... @defer { b } }"), { incremental: true });
 * assert.deepEqual(deliverySelection(op.selection, new Set([0])).fields.map((f) => f.key), ["a"]);
 * assert.deepEqual(deliverySelection(op.selection, new Set([1])).fields.map((f) => f.key), ["b"]);
 * ```
 * @param selection A normalized selection (of an incremental operation).
 * @param deliveries The deliveries sent together.
 * @param denied Fields removed by field access (`from`), and where their copies go (`to`).
 * @returns The filtered selection.
 */
export function deliverySelection(
  selection: NSelection,
  deliveries: ReadonlySet<number>,
  denied?: { readonly from: ReadonlySet<NField>; readonly to: Set<NField> },
): NSelection {
  const fields = (list: readonly NField[]): NField[] => {
    const out: NField[] = [];
    for (const f of list) {
      const mine = f.defer === undefined || deliveries.has(f.defer);
      if (f.selection === null) {
        if (mine) out.push(f);
        continue;
      }
      const inner = deliverySelection(f.selection, deliveries, denied);
      if (!mine && isEmpty(inner)) continue;
      const copy = { ...f, selection: inner };
      // The shaper knows removed fields by identity: the copy stands for its original.
      if (denied?.from.has(f)) denied.to.add(copy);
      out.push(copy);
    }
    return out;
  };
  const byType = new Map<string, readonly NField[]>();
  for (const [type, list] of selection.byType) byType.set(type, fields(list));
  return {
    typeName: selection.typeName,
    abstract: selection.abstract,
    fields: fields(selection.fields),
    byType,
    interfaceFields: fields(selection.interfaceFields),
  };
}

function isEmpty(selection: NSelection): boolean {
  if (selection.fields.length > 0 || selection.interfaceFields.length > 0) return false;
  for (const list of selection.byType.values()) if (list.length > 0) return false;
  return true;
}

/** The selection of the objects at a response path (keys), or null. */
export function selectionAt(selection: NSelection, path: readonly string[]): NSelection | null {
  let at: NSelection | null = selection;
  for (const key of path) {
    if (at === null) return null;
    const lists: (readonly NField[])[] = [at.fields, at.interfaceFields, ...at.byType.values()];
    let next: NSelection | null = null;
    for (const list of lists) {
      const f = list.find((x) => x.key === key && x.selection !== null);
      if (f) {
        next = f.selection;
        break;
      }
    }
    at = next;
  }
  return at;
}

/** The concrete paths (list indexes included) of the objects at `path` in sent data. */
export function objectPaths(sent: unknown, path: readonly string[]): (string | number)[][] {
  const out: (string | number)[][] = [];
  const walk = (value: unknown, i: number, at: (string | number)[]): void => {
    if (Array.isArray(value)) {
      value.forEach((v, index) => walk(v, i, [...at, index]));
      return;
    }
    if (value === null || typeof value !== "object") return;
    if (i === path.length) {
      out.push(at);
      return;
    }
    const key = path[i]!;
    walk((value as Json)[key], i + 1, [...at, key]);
  };
  walk(sent, 0, []);
  return out;
}

/** Writes a part's data into what was sent (a deep merge at its path). */
function mergeSent(sent: Json, path: readonly (string | number)[], data: Json): void {
  let target: unknown = sent;
  for (const key of path) target = (target as Record<string | number, unknown>)[key];
  deepMerge(target as Json, data);
}

function deepMerge(target: Json, source: Json): void {
  for (const [key, value] of Object.entries(source)) {
    const existing = target[key];
    if (isJsonObject(existing) && isJsonObject(value)) deepMerge(existing, value);
    else if (Array.isArray(existing) && Array.isArray(value)) mergeLists(existing, value);
    else target[key] = value;
  }
}

function mergeLists(target: unknown[], source: unknown[]): void {
  source.forEach((value, i) => {
    const existing = target[i];
    if (isJsonObject(existing) && isJsonObject(value)) deepMerge(existing, value);
    else if (Array.isArray(existing) && Array.isArray(value)) mergeLists(existing, value);
    else target[i] = value;
  });
}

function isJsonObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The merged (raw) object at a concrete path, or undefined. */
function rawAt(run: PlanRun, path: readonly (string | number)[]): Json | undefined {
  let value: unknown = run.data;
  for (const key of path) {
    if (typeof key === "number") value = Array.isArray(value) ? value[key] : undefined;
    else value = isJsonObject(value) ? run.layers.get(value, key) : undefined;
  }
  return isJsonObject(value) ? value : undefined;
}

/** Shapes one object of a part (the engine's shaper, with its limits and denied fields). */
export type ShapePart = (
  raw: Json,
  selection: NSelection,
  options: { readonly errors: GraphQLFormattedError[]; readonly at: readonly (string | number)[] },
) => Json | null;

/** Inputs of {@linkcode deliverIncrementally}. */
export interface DeliverOptions {
  readonly run: PlanRun;
  readonly defer: DeferStep;
  /** The client's whole normalized selection. */
  readonly selection: NSelection;
  /** The primary part's data as sent (parts merge into it to find their objects). */
  readonly sent: Json;
  readonly shape: ShapePart;
  /** {@linkcode deliverySelection} with the request's removed fields. */
  readonly select: (selection: NSelection, deliveries: ReadonlySet<number>) => NSelection;
  /** A part is about to be yielded (ART, metrics): its index (1, 2, …) and labels. */
  readonly onPart?: (info: PartInfo) => void;
}

/**
 * The deliveries sent together: `id` and the fragments without fetches that depend on it.
 * @param defer The plan's split.
 * @param id `0` (primary) or a branch's id.
 * @returns Their ids.
 */
export function deliveriesOf(defer: DeferStep, id: number): Set<number> {
  const out = new Set([id]);
  for (const d of defer.deferred) if (d.step === null && d.depends === id) out.add(d.id);
  return out;
}

/**
 * Runs the deferred branches (the primary part already ran) and yields each part as it
 * completes; the last one says `hasNext: false`.
 * @param options The run, its split plan, the selection, the sent data and the shaper.
 * @returns The subsequent payloads.
 */
export async function* deliverIncrementally(
  options: DeliverOptions,
): AsyncGenerator<SubsequentResult> {
  const { run, defer } = options;
  const branches = defer.deferred.filter((d) => d.step !== null);
  if (branches.length === 0) {
    yield { hasNext: false };
    return;
  }
  const done = new Map<number, Promise<void>>([[0, Promise.resolve()]]);
  const finished: DeferredStep[] = [];
  let wake: (() => void) | null = null;
  const failures: unknown[] = [];
  for (const d of branches) {
    const after = done.get(d.depends) ?? Promise.resolve();
    const p = after.then(() => run.run(d.step)).then(
      () => finished.push(d),
      (error) => failures.push(error),
    ).finally(() => wake?.());
    done.set(d.id, p.then(() => {}));
  }
  let left = branches.length;
  let index = 0;
  while (left > 0) {
    if (finished.length === 0 && failures.length === 0) {
      await new Promise<void>((resolve) => wake = resolve);
      wake = null;
      continue;
    }
    if (failures.length > 0) throw failures[0];
    const d = finished.shift()!;
    left--;
    const incremental = entriesOf(options, d);
    const payload: SubsequentResult = incremental.length > 0
      ? { incremental, hasNext: left > 0 }
      : { hasNext: left > 0 };
    if (incremental.length === 0 && left > 0) continue;
    options.onPart?.({
      index: ++index,
      labels: d.label === undefined ? [] : [d.label],
      hasNext: payload.hasNext,
    });
    yield payload;
  }
}

/** The entries of a completed branch: one per object at its path, shaped, with its errors. */
function entriesOf(options: DeliverOptions, d: DeferredStep): IncrementalEntry[] {
  const { run, defer, sent } = options;
  const selection = selectionAt(options.selection, d.path);
  const errors = run.takeErrors((i) => d.fetches.has(i));
  if (selection === null) return [];
  const part = options.select(selection, deliveriesOf(defer, d.id));
  const entries: IncrementalEntry[] = [];
  for (const at of objectPaths(sent, d.path)) {
    const raw = rawAt(run, at);
    if (raw === undefined) continue;
    const own = errors.filter((e) => startsWith(e.path, at));
    const shaperErrors: GraphQLFormattedError[] = [...own];
    const data = options.shape(raw, part, { errors: shaperErrors, at });
    if (data !== null && Object.keys(data).length === 0 && shaperErrors.length === 0) continue;
    if (data !== null) mergeSent(sent, at, data);
    entries.push({
      data,
      path: at,
      ...(d.label === undefined ? {} : { label: d.label }),
      ...(shaperErrors.length > 0 ? { errors: shaperErrors } : {}),
    });
  }
  // Errors placed on no object of the part (no path, or another): with its first entry.
  const placed = new Set(entries.flatMap((e) => e.errors ?? []));
  const rest = errors.filter((e) => !placed.has(e));
  if (rest.length > 0 && entries.length > 0) {
    const first = entries[0]!;
    entries[0] = { ...first, errors: [...(first.errors ?? []), ...rest] };
  }
  return entries;
}

function startsWith(
  path: readonly (string | number)[] | undefined,
  prefix: readonly (string | number)[],
): boolean {
  if (path === undefined || path.length < prefix.length) return false;
  return prefix.every((k, i) => path[i] === k);
}
