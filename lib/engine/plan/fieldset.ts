/**
 * Federation field sets (`@key`, `@requires`, `@provides` values) parsed once.
 *
 * @module
 */
import { Kind, parse, print, type SelectionSetNode } from "graphql";

/** One selection of a field set. */
export interface FieldSetItem {
  /** Field name, or null for an inline fragment. */
  readonly name: string | null;
  /** Printed arguments, `(currency:USD)`, or `""`. */
  readonly args: string;
  /** Type condition of an inline fragment. */
  readonly typeCondition: string | null;
  readonly selection: readonly FieldSetItem[];
}

function convert(set: SelectionSetNode | undefined): FieldSetItem[] {
  const items: FieldSetItem[] = [];
  for (const s of set?.selections ?? []) {
    if (s.kind === Kind.FIELD) {
      const args = s.arguments && s.arguments.length > 0
        ? `(${s.arguments.map((a) => `${a.name.value}:${print(a.value)}`).join(",")})`
        : "";
      items.push({
        name: s.name.value,
        args,
        typeCondition: null,
        selection: convert(s.selectionSet),
      });
    } else if (s.kind === Kind.INLINE_FRAGMENT) {
      items.push({
        name: null,
        args: "",
        typeCondition: s.typeCondition?.name.value ?? null,
        selection: convert(s.selectionSet),
      });
    }
  }
  return items;
}

/**
 * Parses a field set (`id organization { id }`).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseFieldSet } from "./fieldset.ts";
 * assert.equal(parseFieldSet("id org { id }")[1]?.name, "org");
 * ```
 * @param fields The field set text.
 * @returns The items.
 */
export function parseFieldSet(fields: string): FieldSetItem[] {
  const document = parse(`{${fields}}`, { noLocation: true });
  const op = document.definitions[0];
  return op && op.kind === Kind.OPERATION_DEFINITION ? convert(op.selectionSet) : [];
}
