/**
 * `@link` / `@core` feature resolution: which directive and type names of a
 * supergraph belong to which spec (join, link, inaccessible, requiresScopes, …),
 * including renames by `as:` and `import:`.
 *
 * @module
 */
import type { ConstDirectiveNode, DocumentNode, ValueNode } from "graphql";

/** One linked feature. */
export interface LinkedFeature {
  /** Spec name, e.g. `join`, `inaccessible`, `requiresScopes`. */
  readonly name: string;
  /** Version as written, e.g. `v0.3`. */
  readonly version: string;
  /** Prefix of the feature's non-imported elements (`join` → `join__type`). */
  readonly prefix: string;
  /** Imported element names: original (`@requiresScopes`) → local (`@scopes`). */
  readonly imports: ReadonlyMap<string, string>;
}

/** The features of a supergraph by spec name. */
export interface LinkTable {
  readonly features: ReadonlyMap<string, LinkedFeature>;
  /** Local directive name of a feature directive (`requiresScopes`, `join__type`). */
  directive(feature: string, name: string): string | null;
  /** True when a directive or type name belongs to a linked spec. */
  isMachinery(localName: string): boolean;
}

function stringArg(directive: ConstDirectiveNode, name: string): string | null {
  const arg = directive.arguments?.find((a) => a.name.value === name);
  return arg && arg.value.kind === "StringValue" ? arg.value.value : null;
}

function importsOf(value: ValueNode | undefined): Map<string, string> {
  const imports = new Map<string, string>();
  if (!value || value.kind !== "ListValue") return imports;
  for (const item of value.values) {
    if (item.kind === "StringValue") imports.set(item.value, item.value);
    else if (item.kind === "ObjectValue") {
      const name = item.fields.find((f) => f.name.value === "name")?.value;
      const as = item.fields.find((f) => f.name.value === "as")?.value;
      if (name?.kind === "StringValue") {
        imports.set(name.value, as?.kind === "StringValue" ? as.value : name.value);
      }
    }
  }
  return imports;
}

/**
 * Reads the `@link`/`@core` directives of the schema definition.
 * @param document The parsed supergraph.
 * @returns The feature table.
 */
export function readLinks(document: DocumentNode): LinkTable {
  const features = new Map<string, LinkedFeature>();
  for (const def of document.definitions) {
    if (def.kind !== "SchemaDefinition" && def.kind !== "SchemaExtension") continue;
    for (const directive of def.directives ?? []) {
      const isLink = directive.name.value === "link" || directive.name.value === "core";
      if (!isLink) continue;
      const url = stringArg(directive, "url") ?? stringArg(directive, "feature");
      if (!url) continue;
      const parts = url.replace(/\/+$/, "").split("/");
      const version = parts.pop() ?? "";
      const name = parts.pop() ?? "";
      const as = stringArg(directive, "as");
      const imports = importsOf(directive.arguments?.find((a) => a.name.value === "import")?.value);
      features.set(name, { name, version, prefix: as ?? name, imports });
    }
  }
  if (!features.has("link") && !features.has("core")) {
    features.set("link", { name: "link", version: "v1.0", prefix: "link", imports: new Map() });
  }
  const machinery = new Set<string>();
  const prefixes: string[] = [];
  for (const feature of features.values()) {
    machinery.add(feature.prefix);
    prefixes.push(`${feature.prefix}__`);
    for (const local of feature.imports.values()) machinery.add(local.replace(/^@/, ""));
  }
  return {
    features,
    directive(feature, name) {
      const f = features.get(feature);
      if (!f) return null;
      const imported = f.imports.get(`@${name}`);
      if (imported) return imported.replace(/^@/, "");
      return name === f.name ? f.prefix : `${f.prefix}__${name}`;
    },
    isMachinery(localName) {
      return machinery.has(localName) || prefixes.some((p) => localName.startsWith(p));
    },
  };
}
