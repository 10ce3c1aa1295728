/**
 * Representation selections (`requires` of entity fetches): merging and printing.
 *
 * @module
 */
/** One field of a representation: read `dataKey` from the merged data, send as `key`. */
export interface RepField {
  readonly key: string;
  readonly dataKey: string;
  readonly selection: RepSelection | null;
  /** A `@key` field: an object without it (null entity upstream) is not sent. */
  isKey?: boolean;
}

/** A representation selection (per concrete type for abstract positions). */
export interface RepSelection {
  readonly fields: RepField[];
  /** Type-conditioned parts (nested abstract requirements). */
  readonly byType: Map<string, RepField[]>;
}

/**
 * Merges one representation selection into another.
 * @param into Selection to extend.
 * @param from Selection to add.
 */
export function mergeRep(into: RepSelection, from: RepSelection): void {
  for (const f of from.fields) {
    const existing = into.fields.find((e) => e.key === f.key);
    if (!existing) into.fields.push(f);
    else if (existing.selection && f.selection) mergeRep(existing.selection, f.selection);
  }
  for (const [type, list] of from.byType) {
    const existing = into.byType.get(type);
    if (!existing) into.byType.set(type, list);
    else mergeRep({ fields: existing, byType: new Map() }, { fields: list, byType: new Map() });
  }
}

function printRepFields(fields: readonly RepField[]): string {
  return fields.map((f) => {
    const head = f.key === f.dataKey ? f.key : `${f.key}:${f.dataKey}`;
    return f.selection ? `${head}{${printRep(f.selection)}}` : head;
  }).join(" ");
}

function printRep(rep: RepSelection): string {
  const parts = [printRepFields(rep.fields)];
  for (const [type, list] of rep.byType) parts.push(`...on ${type}{${printRepFields(list)}}`);
  return parts.filter((p) => p !== "").join(" ");
}

/**
 * Prints the representation selections of an entity fetch (`...on Product{__typename upc}`).
 * @param reqs Selections by type.
 * @returns The printed `requires`.
 */
export function printReps(reqs: ReadonlyMap<string, RepSelection>): string {
  return [...reqs].map(([type, rep]) => `...on ${type}{${printRep(rep)}}`).join(" ");
}
