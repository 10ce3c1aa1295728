/**
 * Supergraph SDL → plain model: API schema, subgraphs, per-type and per-field
 * ownership, keys, requires/provides, membership per subgraph, access rules.
 *
 * @module
 */
import {
  buildASTSchema,
  type DefinitionNode,
  type DirectiveNode,
  type DocumentNode,
  type FieldDefinitionNode,
  type GraphQLSchema,
  Kind,
  parse,
  print,
  type TypeNode,
  valueFromASTUntyped,
} from "graphql";
import { RouterError } from "../errors.ts";
import { type LinkTable, readLinks } from "./_links.ts";
import { type CacheTagSchema, readCacheTags } from "./cache_tags.ts";
import { buildCostSchema, type CostSchema } from "./cost_directives.ts";
import type {
  AccessRequirement,
  ContextArgument,
  FieldModel,
  KeyModel,
  ProgressiveOverride,
  SubgraphInfo,
  SupergraphCore,
  TypeModel,
} from "./types.ts";
import { TYPE_KIND_OF_NODE } from "./_type_kinds.ts";

/** The full supergraph model the planner works from. */
export interface SupergraphModel extends SupergraphCore {
  /** Every named type of the supergraph (hidden ones included), machinery excluded. */
  readonly types: ReadonlyMap<string, TypeModel>;
  /** Root type names in the supergraph. */
  readonly rootTypes: {
    readonly query: string;
    readonly mutation: string | null;
    readonly subscription: string | null;
  };
  /** 1 for join v0.1 (Federation 1) supergraphs, else 2. */
  readonly federationVersion: 1 | 2;
  /** Demand control's view: `@cost`, `@listSize`, types of fields and arguments. */
  readonly cost: CostSchema;
  /** `@cacheTag` formats of entity types and root fields (the entity cache's tags). */
  readonly cacheTags: CacheTagSchema;
}

type TypeDef = Extract<
  DefinitionNode,
  {
    kind:
      | Kind.OBJECT_TYPE_DEFINITION
      | Kind.INTERFACE_TYPE_DEFINITION
      | Kind.UNION_TYPE_DEFINITION
      | Kind.ENUM_TYPE_DEFINITION
      | Kind.INPUT_OBJECT_TYPE_DEFINITION
      | Kind.SCALAR_TYPE_DEFINITION
      | Kind.OBJECT_TYPE_EXTENSION
      | Kind.INTERFACE_TYPE_EXTENSION
      | Kind.UNION_TYPE_EXTENSION
      | Kind.ENUM_TYPE_EXTENSION
      | Kind.INPUT_OBJECT_TYPE_EXTENSION
      | Kind.SCALAR_TYPE_EXTENSION;
  }
>;

function args(directive: DirectiveNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const arg of directive.arguments ?? []) out[arg.name.value] = valueFromASTUntyped(arg.value);
  return out;
}

function directivesNamed(
  node: { readonly directives?: readonly DirectiveNode[] | undefined },
  name: string | null,
): DirectiveNode[] {
  if (name === null) return [];
  return (node.directives ?? []).filter((d) => d.name.value === name);
}

function namedTypeOf(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedTypeOf(type.type);
}

function minorVersion(version: string | undefined): number {
  const match = /^v(\d+)\.(\d+)/.exec(version ?? "");
  return match ? Number(match[1]) * 100 + Number(match[2]) : 0;
}

interface Names {
  readonly type: string | null;
  readonly field: string | null;
  readonly graph: string | null;
  readonly implements: string | null;
  readonly unionMember: string | null;
  readonly owner: string | null;
  readonly inaccessible: string | null;
  readonly requiresScopes: string | null;
  readonly authenticated: string | null;
  readonly policy: string | null;
  readonly context: string | null;
}

function namesOf(links: LinkTable): Names {
  return {
    type: links.directive("join", "type"),
    field: links.directive("join", "field"),
    graph: links.directive("join", "graph"),
    implements: links.directive("join", "implements"),
    unionMember: links.directive("join", "unionMember"),
    owner: links.directive("join", "owner"),
    inaccessible: links.directive("inaccessible", "inaccessible"),
    requiresScopes: links.directive("requiresScopes", "requiresScopes"),
    authenticated: links.directive("authenticated", "authenticated"),
    policy: links.directive("policy", "policy"),
    context: links.directive("context", "context"),
  };
}

/**
 * Builds the model of a supergraph SDL (join v0.1–v0.5, Federation 1 and 2).
 *
 * @example Subgraphs and the API schema
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSupergraph } from "./mod.ts";
 * const sdl = `
 * schema @link(url: "https://specs.apollo.dev/link/v1.0")
 *   @link(url: "https://specs.apollo.dev/join/v0.3", for: EXECUTION) { query: Query }
 * directive @join__graph(name: String!, url: String!) on ENUM_VALUE
 * directive @join__type(graph: join__Graph!, key: join__FieldSet, extension: Boolean! = false, resolvable: Boolean! = true, isInterfaceObject: Boolean! = false) repeatable on OBJECT | INTERFACE | UNION | ENUM | INPUT_OBJECT | SCALAR
 * directive @link(url: String, as: String, for: link__Purpose, import: [link__Import]) repeatable on SCHEMA
 * scalar join__FieldSet
 * scalar link__Import
 * enum link__Purpose { SECURITY EXECUTION }
 * enum join__Graph { A @join__graph(name: "a", url: "http://a/graphql") }
 * type Query @join__type(graph: A) { hello: String }
 * `;
 * const model = buildSupergraph(sdl);
 * assert.equal(model.subgraphs.get("a")?.url, "http://a/graphql");
 * assert.equal(model.apiSchema.getType("join__Graph"), undefined);
 * assert.ok(model.apiSchema.getQueryType()?.getFields().hello);
 * ```
 * @param sdl The supergraph SDL.
 * @returns The model.
 * @throws {RouterError} `SUPERGRAPH_INVALID` when the SDL does not parse or has no join spec.
 */
export function buildSupergraph(sdl: string): SupergraphModel {
  let document: DocumentNode;
  try {
    document = parse(sdl, { noLocation: true });
  } catch (error) {
    throw new RouterError("SUPERGRAPH_INVALID", `Cannot parse the supergraph: ${String(error)}`, {
      cause: error,
    });
  }
  const links = readLinks(document);
  const names = namesOf(links);
  const joinVersion = minorVersion(links.features.get("join")?.version);
  const federationVersion: 1 | 2 = joinVersion > 0 && joinVersion < 2 ? 1 : 2;

  // Subgraphs from the join__Graph enum.
  const graphByEnum = new Map<string, string>();
  const subgraphs = new Map<string, SubgraphInfo>();
  const graphEnumName = links.features.has("join")
    ? `${links.features.get("join")?.prefix}__Graph`
    : "join__Graph";
  const defs = new Map<string, TypeDef[]>();
  let rootTypes = {
    query: "Query",
    mutation: null as string | null,
    subscription: null as string | null,
  };
  let sawSchema = false;
  for (const def of document.definitions) {
    if (def.kind === Kind.SCHEMA_DEFINITION) {
      sawSchema = true;
      for (const op of def.operationTypes) {
        if (op.operation === "query") rootTypes = { ...rootTypes, query: op.type.name.value };
        if (op.operation === "mutation") rootTypes = { ...rootTypes, mutation: op.type.name.value };
        if (op.operation === "subscription") {
          rootTypes = { ...rootTypes, subscription: op.type.name.value };
        }
      }
      continue;
    }
    if (!(def.kind in TYPE_KIND_OF_NODE)) continue;
    const typeDef = def as TypeDef;
    const name = typeDef.name.value;
    if (name === graphEnumName && typeDef.kind === Kind.ENUM_TYPE_DEFINITION) {
      for (const value of typeDef.values ?? []) {
        const graph = directivesNamed(value, names.graph)[0];
        if (!graph) continue;
        const a = args(graph);
        const info: SubgraphInfo = {
          name: String(a.name),
          url: String(a.url ?? ""),
          enumValue: value.name.value,
        };
        graphByEnum.set(info.enumValue, info.name);
        subgraphs.set(info.name, info);
      }
    }
    const list = defs.get(name);
    if (list) list.push(typeDef);
    else defs.set(name, [typeDef]);
  }
  if (!links.features.has("join") && subgraphs.size === 0) {
    throw new RouterError("SUPERGRAPH_INVALID", "The supergraph links no join spec");
  }
  if (!sawSchema) {
    rootTypes = {
      query: "Query",
      mutation: defs.has("Mutation") ? "Mutation" : null,
      subscription: defs.has("Subscription") ? "Subscription" : null,
    };
  }
  const allGraphs = [...subgraphs.keys()];
  const graphOf = (value: unknown): string | null =>
    typeof value === "string" ? graphByEnum.get(value) ?? null : null;

  const types = new Map<string, TypeModel>();
  for (const [name, list] of defs) {
    if (links.isMachinery(name)) continue;
    const first = list[0];
    if (!first) continue;
    const kind = TYPE_KIND_OF_NODE[first.kind] ?? "scalar";
    const graphs = new Set<string>();
    const keys: KeyModel[] = [];
    const interfaceObjectIn = new Set<string>();
    const implementsIn = new Map<string, string[]>();
    const membersIn = new Map<string, string[]>();
    let owner: string | null = null;
    const interfaces: string[] = [];
    const members: string[] = [];
    const enumValues: string[] = [];
    const fieldNodes: FieldDefinitionNode[] = [];
    for (const def of list) {
      for (const d of directivesNamed(def, names.type)) {
        const a = args(d);
        const graph = graphOf(a.graph);
        if (!graph) continue;
        graphs.add(graph);
        if (typeof a.key === "string") {
          keys.push({ graph, fields: a.key, resolvable: a.resolvable !== false });
        }
        if (a.isInterfaceObject === true) interfaceObjectIn.add(graph);
      }
      for (const d of directivesNamed(def, names.owner)) {
        owner = graphOf(args(d).graph);
        if (owner) graphs.add(owner);
      }
      for (const d of directivesNamed(def, names.implements)) {
        const a = args(d);
        const graph = graphOf(a.graph);
        if (!graph || typeof a.interface !== "string") continue;
        const l = implementsIn.get(graph) ?? [];
        l.push(a.interface);
        implementsIn.set(graph, l);
      }
      for (const d of directivesNamed(def, names.unionMember)) {
        const a = args(d);
        const graph = graphOf(a.graph);
        if (!graph || typeof a.member !== "string") continue;
        const l = membersIn.get(graph) ?? [];
        l.push(a.member);
        membersIn.set(graph, l);
      }
      if ("interfaces" in def) {
        for (const i of def.interfaces ?? []) interfaces.push(i.name.value);
      }
      if (def.kind === Kind.UNION_TYPE_DEFINITION || def.kind === Kind.UNION_TYPE_EXTENSION) {
        for (const m of def.types ?? []) members.push(m.name.value);
      }
      if (def.kind === Kind.ENUM_TYPE_DEFINITION || def.kind === Kind.ENUM_TYPE_EXTENSION) {
        for (const v of def.values ?? []) enumValues.push(v.name.value);
      }
      if (
        def.kind === Kind.OBJECT_TYPE_DEFINITION || def.kind === Kind.OBJECT_TYPE_EXTENSION ||
        def.kind === Kind.INTERFACE_TYPE_DEFINITION || def.kind === Kind.INTERFACE_TYPE_EXTENSION
      ) fieldNodes.push(...(def.fields ?? []));
    }
    const typeGraphs = graphs.size > 0 ? [...graphs] : allGraphs;
    // Membership without join__implements / join__unionMember (older join specs): everywhere.
    if (joinVersion < 2 && interfaces.length > 0) {
      for (const g of typeGraphs) implementsIn.set(g, [...interfaces]);
    }
    if (joinVersion < 3 && members.length > 0) {
      for (const g of allGraphs) membersIn.set(g, [...members]);
    }
    const fields = new Map<string, FieldModel>();
    for (const node of fieldNodes) {
      const resolvableIn: string[] = [];
      const externalIn: string[] = [];
      const requires = new Map<string, string>();
      const provides = new Map<string, string>();
      const typeIn = new Map<string, string>();
      let progressive: ProgressiveOverride | null = null;
      const contextArguments: ContextArgument[] = [];
      const joinFields = directivesNamed(node, names.field);
      let sawGraph = false;
      for (const d of joinFields) {
        const a = args(d);
        const graph = graphOf(a.graph);
        if (!graph) continue;
        sawGraph = true;
        if (a.external === true || a.usedOverridden === true) externalIn.push(graph);
        else if (!resolvableIn.includes(graph)) resolvableIn.push(graph);
        if (typeof a.requires === "string") requires.set(graph, a.requires);
        if (typeof a.provides === "string") provides.set(graph, a.provides);
        if (typeof a.type === "string") typeIn.set(graph, a.type);
        if (Array.isArray(a.contextArguments)) {
          for (const c of a.contextArguments) {
            const { context, name, type, selection } = (c ?? {}) as Record<string, unknown>;
            if (
              typeof context === "string" && typeof name === "string" &&
              typeof type === "string" && typeof selection === "string"
            ) {
              contextArguments.push({ context, name, type, selection });
            }
          }
        }
        if (typeof a.override === "string" && typeof a.overrideLabel === "string") {
          progressive = { label: a.overrideLabel, from: a.override, to: graph };
        }
      }
      if (!sawGraph && joinFields.length === 0) {
        if (federationVersion === 1 && owner) resolvableIn.push(owner);
        else resolvableIn.push(...typeGraphs);
      }
      fields.set(node.name.value, {
        name: node.name.value,
        resolvableIn,
        externalIn,
        requires,
        provides,
        typeIn,
        ...(progressive ? { progressiveOverride: progressive } : {}),
        ...(contextArguments.length > 0 ? { contextArguments } : {}),
        type: print(node.type),
        namedType: namedTypeOf(node.type),
      });
    }
    const contexts: string[] = [];
    for (const node of list) {
      for (const d of directivesNamed(node, names.context)) {
        const contextName = args(d).name;
        if (typeof contextName === "string") contexts.push(contextName);
      }
    }
    types.set(name, {
      name,
      kind,
      ...(contexts.length > 0 ? { contexts } : {}),
      graphs: typeGraphs,
      keys,
      interfaceObjectIn: [...interfaceObjectIn],
      fields,
      implementsIn,
      membersIn,
      interfaces,
      members,
      enumValues,
    });
  }

  const apiSchema = buildApiSchema(document, links, names);
  const access = buildAccess(document, links, names, apiSchema);
  const cost = buildCostSchema(document);
  const cacheTags = readCacheTags(document, rootTypes.query);
  return { apiSchema, subgraphs, access, types, rootTypes, federationVersion, cost, cacheTags };
}

/** `@defer` as the incremental delivery RFC (and Apollo Router's API schema) defines it. */
const DEFER_DIRECTIVE: DefinitionNode = parse(
  "directive @defer(label: String, if: Boolean! = true) on FRAGMENT_SPREAD | INLINE_FRAGMENT",
).definitions[0]!;

function buildApiSchema(document: DocumentNode, links: LinkTable, names: Names): GraphQLSchema {
  const hidden = (node: { readonly directives?: readonly DirectiveNode[] | undefined }) =>
    directivesNamed(node, names.inaccessible).length > 0;
  const keep = (d: DirectiveNode) => !links.isMachinery(d.name.value);
  const hiddenTypes = new Set<string>();
  for (const def of document.definitions) {
    if ("name" in def && def.name && (links.isMachinery(def.name.value) || hidden(def))) {
      hiddenTypes.add(def.name.value);
    }
  }
  const visibleType = (type: TypeNode) => !hiddenTypes.has(namedTypeOf(type));
  const definitions: DefinitionNode[] = [];
  for (const def of document.definitions) {
    switch (def.kind) {
      case Kind.SCHEMA_DEFINITION:
      case Kind.SCHEMA_EXTENSION:
        definitions.push({
          ...def,
          directives: (def.directives ?? []).filter(keep),
          operationTypes: (def.operationTypes ?? []).filter((o) =>
            !hiddenTypes.has(o.type.name.value)
          ),
        } as DefinitionNode);
        continue;
      case Kind.DIRECTIVE_DEFINITION:
        if (!links.isMachinery(def.name.value)) definitions.push(def);
        continue;
      default:
        break;
    }
    if (!("name" in def) || !def.name || hiddenTypes.has(def.name.value)) continue;
    const copy: Record<string, unknown> = { ...def };
    if ("directives" in def) copy.directives = (def.directives ?? []).filter(keep);
    if ("fields" in def && def.fields) {
      copy.fields = (def.fields as readonly FieldDefinitionNode[])
        .filter((f) => !hidden(f) && visibleType(f.type))
        .map((f) => ({
          ...f,
          directives: (f.directives ?? []).filter(keep),
          arguments: (f.arguments ?? []).filter((a) => !hidden(a) && visibleType(a.type)).map((
            a,
          ) => ({ ...a, directives: (a.directives ?? []).filter(keep) })),
        }));
    }
    if ("values" in def && def.values) {
      copy.values = def.values.filter((v) => !hidden(v)).map((v) => ({
        ...v,
        directives: (v.directives ?? []).filter(keep),
      }));
    }
    if ("interfaces" in def && def.interfaces) {
      copy.interfaces = def.interfaces.filter((i) => !hiddenTypes.has(i.name.value));
    }
    if (def.kind === Kind.UNION_TYPE_DEFINITION || def.kind === Kind.UNION_TYPE_EXTENSION) {
      copy.types = (def.types ?? []).filter((t) => !hiddenTypes.has(t.name.value));
    }
    definitions.push(copy as unknown as DefinitionNode);
  }
  if (!definitions.some((d) => d.kind === Kind.DIRECTIVE_DEFINITION && d.name.value === "defer")) {
    // Incremental delivery (`docs/defer.md`): clients may send `@defer`, as to Apollo Router.
    definitions.push(DEFER_DIRECTIVE);
  }
  try {
    return buildASTSchema({ kind: Kind.DOCUMENT, definitions }, { assumeValidSDL: true });
  } catch (error) {
    throw new RouterError("SUPERGRAPH_INVALID", `Cannot build the API schema: ${String(error)}`, {
      cause: error,
    });
  }
}

function requirementOf(
  node: { readonly directives?: readonly DirectiveNode[] | undefined },
  names: Names,
): AccessRequirement | null {
  const authenticated = directivesNamed(node, names.authenticated).length > 0;
  let requiresScopes: string[][] | null = null;
  for (const d of directivesNamed(node, names.requiresScopes)) {
    const scopes = args(d).scopes;
    if (!Array.isArray(scopes)) continue;
    requiresScopes ??= [];
    for (const group of scopes) {
      if (Array.isArray(group)) requiresScopes.push(group.map(String));
    }
  }
  let policies: string[][] | null = null;
  for (const d of directivesNamed(node, names.policy)) {
    const groups = args(d).policies;
    if (!Array.isArray(groups)) continue;
    policies ??= [];
    for (const group of groups) {
      if (Array.isArray(group)) policies.push(group.map(String));
    }
  }
  if (!authenticated && requiresScopes === null && policies === null) return null;
  return policies === null ? { authenticated, requiresScopes } : {
    authenticated,
    requiresScopes,
    policies,
  };
}

function buildAccess(
  document: DocumentNode,
  links: LinkTable,
  names: Names,
  apiSchema: GraphQLSchema,
): Map<string, AccessRequirement> {
  const access = new Map<string, AccessRequirement>();
  for (const def of document.definitions) {
    if (!("name" in def) || !def.name || links.isMachinery(def.name.value)) continue;
    const typeName = def.name.value;
    if (!apiSchema.getType(typeName)) continue;
    if ("directives" in def && def.directives) {
      const own = requirementOf(def, names);
      if (own) access.set(typeName, mergeRequirement(access.get(typeName), own));
    }
    if ("fields" in def && def.fields) {
      for (const field of def.fields as readonly FieldDefinitionNode[]) {
        const own = requirementOf(field, names);
        if (!own) continue;
        const key = `${typeName}.${field.name.value}`;
        access.set(key, mergeRequirement(access.get(key), own));
      }
    }
  }
  return access;
}

function mergeRequirement(
  a: AccessRequirement | undefined,
  b: AccessRequirement,
): AccessRequirement {
  if (!a) return b;
  return {
    authenticated: a.authenticated || b.authenticated,
    requiresScopes: a.requiresScopes === null
      ? b.requiresScopes
      : b.requiresScopes === null
      ? a.requiresScopes
      : [...a.requiresScopes, ...b.requiresScopes],
    ...(a.policies || b.policies ? { policies: [...a.policies ?? [], ...b.policies ?? []] } : {}),
  };
}
