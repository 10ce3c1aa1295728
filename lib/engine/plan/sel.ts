/**
 * The selection set of one subgraph operation while it is being planned, and its printer.
 *
 * @module
 */

/**
 * The response keys a subgraph answer may have, at every level: a key with a
 * sub-selection maps to the keys below it, a leaf to null.
 */
export type KeyTree = ReadonlyMap<string, KeyTree | null>;

/** The keys of two trees (the sub-selections one field has under two type conditions). */
function union(a: KeyTree, b: KeyTree): KeyTree {
  const out = new Map(a);
  for (const [key, child] of b) {
    const known = out.get(key);
    out.set(key, known && child ? union(known, child) : known ?? child);
  }
  return out;
}

/** One field of a {@linkcode Sel}. */
export interface SelField {
  readonly key: string;
  readonly name: string;
  readonly args: string;
  /** The field's type in the subgraph (`String!`), when known. */
  readonly type: string;
  child: Sel | null;
}

/** A subgraph selection set under construction (fields by response key, type conditions). */
export class Sel {
  readonly fields = new Map<string, SelField>();
  readonly fragments = new Map<string, Sel>();
  readonly parent: Sel | null;

  constructor(parent: Sel | null = null) {
    this.parent = parent;
  }

  field(key: string, name: string, args: string, type = ""): SelField | null {
    const existing = this.fields.get(key);
    if (existing) return existing.name === name && existing.args === args ? existing : null;
    const created: SelField = { key, name, args, type, child: null };
    this.fields.set(key, created);
    return created;
  }

  /** True when a sibling type condition selects `key` as another field or type. */
  conflicts(key: string, name: string, args: string, type: string): boolean {
    const parent = this.parent;
    if (!parent) return false;
    const clash = (f: SelField | undefined) =>
      f !== undefined &&
      (f.name !== name || f.args !== args || (f.type !== "" && type !== "" && f.type !== type));
    if (clash(parent.fields.get(key))) return true;
    for (const sibling of parent.fragments.values()) {
      if (sibling !== this && clash(sibling.fields.get(key))) return true;
    }
    return false;
  }

  fragment(type: string): Sel {
    let sel = this.fragments.get(type);
    if (!sel) {
      sel = new Sel(this);
      this.fragments.set(type, sel);
    }
    return sel;
  }

  typename(): void {
    this.field("__typename", "__typename", "");
  }

  print(): string {
    const parts: string[] = [];
    for (const f of this.fields.values()) {
      let text = f.key === f.name ? f.name : `${f.key}:${f.name}`;
      text += f.args;
      if (f.child) text += `{${f.child.printOrTypename()}}`;
      parts.push(text);
    }
    for (const [type, sel] of this.fragments) parts.push(`...on ${type}{${sel.printOrTypename()}}`);
    return parts.join(" ");
  }

  /**
   * The response keys an answer to this selection may have, at every level:
   * its fields' and its type conditions' (which add no level), and
   * `__typename`; a field with a sub-selection maps to its keys, a leaf to null.
   */
  keyTree(): KeyTree {
    const keys = new Map<string, KeyTree | null>([["__typename", null]]);
    const stack: Sel[] = [this];
    while (stack.length > 0) {
      const sel = stack.pop()!;
      for (const [key, field] of sel.fields) {
        const child = field.child?.keyTree() ?? null;
        const known = keys.get(key);
        // One key under two type conditions: the same field (else the planner aliases it).
        keys.set(key, known && child ? union(known, child) : known ?? child);
      }
      for (const fragment of sel.fragments.values()) stack.push(fragment);
    }
    return keys;
  }

  printOrTypename(): string {
    const text = this.print();
    return text === "" ? "__typename" : text;
  }
}
