/**
 * The entity cache's keys and entries (issue 42, `entity_cache`, docs/caching.md):
 * each entity of an `_entities` fetch is one entry, a root-field fetch's whole
 * answer is one entry. The executor asks {@linkcode lookupEntities} /
 * {@linkcode lookupRoot} before it sends, sends only what was missing, and
 * stores what came back with {@linkcode storeEntities} / {@linkcode storeRoot}.
 *
 * Keys (after the store's `key_prefix`), so that invalidation is a key prefix:
 *
 * ```
 * <subgraph>:<type>:<key JSON>:<fetch hash>[:<requires>][:p:<private id hash>]   an entity
 * <subgraph>:<root type>:root:<fetch hash>[:p:<private id hash>]                      a root-field fetch
 * ```
 *
 * The key JSON is the entity's key fields as canonical JSON (sorted keys, so an
 * invalidation naming `{ "id": "1" }` finds it; self-delimiting, so one
 * entity's prefix is no other's); the fetch hash (SHA-256, once per fetch)
 * covers the subgraph operation (its selection) and the variables it uses;
 * then the representation's other fields (`@requires` values: their canonical
 * JSON, or its SHA-256 past 128 characters).
 * No hash is computed per entity otherwise: that was most of a warm request's
 * CPU. Entries carry their expiry and visibility: `<expires ms>:<0|1>:<JSON>`.
 * Entries are stored with their `@cacheTag` tags (an entity's from its key
 * fields, a root-field fetch's from its fields' arguments) for invalidation by tag.
 *
 * The engine names no store: {@linkcode EntityCacheBackend} is what it needs
 * (lib/store's `EntityCacheStore` is one).
 *
 * Over 600 lines (610): keys, entries, lookups, stores and tags of one cache
 * read together, since a key's every part is decided here; each function is
 * small and pure but for the backend it is given.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { Kind, parse, type SelectionSetNode, valueFromASTUntyped, type ValueNode } from "graphql";
import type { CacheTagFormat, CacheTagSchema } from "../../supergraph/mod.ts";
import { renderCacheTag } from "../../supergraph/mod.ts";
import type { FetchStep } from "../plan/mod.ts";
import { type CacheDirectives, type CachePolicy, parseCacheControl } from "./cache_control.ts";
import { parseJsonExact } from "../prepare/mod.ts";

/**
 * What became of a write: stored (its UTF-8 bytes), or not and why: over
 * `max_entry_bytes` (or a tag too long), a tag index full, the store unavailable.
 */
export type EntityCacheWrite =
  | { readonly stored: true; readonly bytes: number }
  | { readonly stored: false; readonly reason: "too_large" | "tag_index_full" | "unavailable" };

/** Where entries live (memory or Redis); reads and writes never throw (a miss instead). */
export interface EntityCacheBackend {
  /** Each key's entry, or null. */
  getMany(keys: readonly string[]): Promise<(string | null)[]>;
  /** Stores an entry for `ttlMs`, indexed under its `@cacheTag` tags (of its subgraph). */
  set(
    key: string,
    value: string,
    ttlMs: number,
    tagged?: { readonly subgraph: string; readonly tags: readonly string[] },
  ): Promise<EntityCacheWrite>;
}

/** What the entity cache reports (metrics). */
export interface EntityCacheEvents {
  /** A fetch's lookup: `hit` (all entries found), `partial` or `miss`. */
  lookup(subgraph: string, type: string, outcome: "hit" | "partial" | "miss"): void;
  /** An entry stored, and its bytes (UTF-8). */
  stored(subgraph: string, type: string, bytes: number): void;
  /** An entry not stored, and why (absent: not reported). */
  skipped?(subgraph: string, type: string, reason: string): void;
}

/** The engine's entity cache: its backend and per-subgraph settings. */
export interface EntityCacheSettings {
  readonly backend: EntityCacheBackend;
  /** A subgraph's TTL when its answer says nothing, ms; null: the subgraph is not cached. */
  ttlOf(subgraph: string): number | null;
  /** The top-level key field names of a type in a subgraph (its `@key`s). */
  keyFields(subgraph: string, type: string): ReadonlySet<string>;
  /** The clock, ms. */
  readonly now: () => number;
  readonly events?: EntityCacheEvents;
  /** `@cacheTag` formats of entity types and root fields; absent: entries get no tags. */
  readonly cacheTags?: CacheTagSchema;
}

/** One request's use of the cache. */
export interface EntityCacheRun {
  readonly settings: EntityCacheSettings;
  /** Who asks (`entity_cache.private_id`), or null: private answers are not cached. */
  readonly privateId: string | null;
  /** The client answer's `Cache-Control`, filled as fetches settle. */
  readonly policy: CachePolicy;
  /**
   * The request reads subgraph data through layers and never writes to it
   * (`sharedResponses`): cached entries may be parsed once for many requests.
   */
  readonly shared?: boolean;
  /** Told each lookup's outcome (the request's access log). */
  readonly onLookup?: (outcome: "hit" | "partial" | "miss") => void;
}

type Json = Record<string, unknown>;

/**
 * SHA-256 of a text, lower-case hex. `node:crypto`'s hash: ~5 µs a key where
 * WebCrypto's `digest` took ~21 µs (its promise and buffer copies), and a
 * miss hashes every entity it stores.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sha256Hex } from "./entity_cache.ts";
 * assert.equal(await sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
 * ```
 * @param text The text.
 * @returns The digest.
 */
export function sha256Hex(text: string): Promise<string> {
  return Promise.resolve(createHash("sha256").update(text).digest("hex"));
}

/**
 * JSON with object keys sorted at every level (one text for one key, whatever
 * order the planner or an invalidation request wrote it in).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalJson } from "./entity_cache.ts";
 * assert.equal(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: null } }), '{"a":{"c":null,"d":[1,{"e":3,"f":2}]},"b":1}');
 * ```
 * @param value A JSON value.
 * @returns Its canonical JSON.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object" && !("rawJSON" in value)) {
    const object = value as Json;
    return `{${
      Object.keys(object).sort().filter((k) => object[k] !== undefined).map((k) =>
        `${JSON.stringify(k)}:${canonicalJson(object[k])}`
      ).join(",")
    }}`;
  }
  return JSON.stringify(value);
}

/**
 * The top-level field names of a `@key` field set (`id organization { id }` → id, organization).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { topLevelFields } from "./entity_cache.ts";
 * assert.deepEqual(topLevelFields("id organization { id name }  sku"), ["id", "organization", "sku"]);
 * ```
 * @param fieldSet The field set.
 * @returns Its top-level names.
 */
export function topLevelFields(fieldSet: string): string[] {
  const names: string[] = [];
  let depth = 0;
  for (const token of fieldSet.match(/[_A-Za-z][_0-9A-Za-z]*|[{}]/g) ?? []) {
    if (token === "{") depth++;
    else if (token === "}") depth--;
    else if (depth === 0) names.push(token);
  }
  return names;
}

/**
 * The key prefix invalidating entries: of a subgraph, of a type in it, or of one entity.
 * @param target What to invalidate.
 * @returns The prefix (before the store's `key_prefix`).
 */
export function invalidationPrefix(
  target: { readonly subgraph: string; readonly type?: string; readonly key?: unknown },
): string {
  if (target.type === undefined) return `${target.subgraph}:`;
  if (target.key === undefined) return `${target.subgraph}:${target.type}:`;
  return `${target.subgraph}:${target.type}:${canonicalJson(target.key)}:`;
}

/** The longest `@requires` values' JSON put in a key as it is (longer: its SHA-256). */
const MAX_INLINE_REQUIRES = 128;

/** Fetch hashes of fetches without variables, per plan step (plans are cached). */
const STEP_HASHES = new WeakMap<FetchStep, Promise<string>>();

/**
 * A fetch's operation without its name (`query Op__reviews__1(…` → `query(…`):
 * the name comes from the client's operation, and clients naming the same
 * selection differently share its entries.
 */
function unnamed(queryJson: string): string {
  return queryJson.replace(/^"(query|mutation|subscription) [_A-Za-z][_0-9A-Za-z]*/, '"$1');
}

/** The SHA-256 of a fetch's operation (unnamed) and the variables it sends. */
function fetchHashOf(step: FetchStep, variablesJson: string): Promise<string> {
  if (variablesJson !== "{}") return sha256Hex(`${unnamed(step.queryJson)}\n${variablesJson}`);
  let hash = STEP_HASHES.get(step);
  if (hash === undefined) STEP_HASHES.set(step, hash = sha256Hex(`${unnamed(step.queryJson)}\n{}`));
  return hash;
}

/** `:p:<SHA-256 of the private id>`, once per request. */
const PRIVATE_SUFFIXES = new WeakMap<EntityCacheRun, Promise<string | null>>();

function privateSuffixOf(run: EntityCacheRun): Promise<string | null> {
  const id = run.privateId;
  if (id === null) return Promise.resolve(null);
  let suffix = PRIVATE_SUFFIXES.get(run);
  if (suffix === undefined) {
    PRIVATE_SUFFIXES.set(run, suffix = sha256Hex(id).then((hash) => `:p:${hash}`));
  }
  return suffix;
}

/**
 * Entries parsed, by their text, for requests whose data is read through
 * layers (`sharedResponses`: parsed answers are never written to, so one
 * parse serves them all, as a single-flight answer does). Bounded in text.
 */
const PARSED = new Map<string, unknown>();
let parsedChars = 0;
const MAX_PARSED_CHARS = 4_000_000;

/** An entry's value: parsed once for shared runs, else a copy of its own. */
function parseEntry(text: string, shared: boolean): unknown {
  if (!shared) return parseJsonExact(text);
  const known = PARSED.get(text);
  if (known !== undefined) return known;
  const value = parseJsonExact(text);
  if (text.length <= MAX_PARSED_CHARS / 64) {
    if (parsedChars + text.length > MAX_PARSED_CHARS) {
      PARSED.clear();
      parsedChars = 0;
    }
    PARSED.set(text, value);
    parsedChars += text.length;
  }
  return value;
}

/**
 * Parse holders of answers served whole from the cache, by the text of their
 * entries (shared runs only). Bounded in text like {@linkcode PARSED}.
 */
const HOLDERS = new Map<string, { value?: unknown }>();
let holderChars = 0;

function holderOf(text: string): { value?: unknown } {
  let holder = HOLDERS.get(text);
  if (holder !== undefined) return holder;
  holder = {};
  if (text.length <= MAX_PARSED_CHARS / 64) {
    if (holderChars + text.length > MAX_PARSED_CHARS) {
      HOLDERS.clear();
      holderChars = 0;
    }
    HOLDERS.set(text, holder);
    holderChars += text.length;
  }
  return holder;
}

/** An entry read back: its value, and what its part adds to the client answer's policy. */
function readEntry(
  entry: string | null,
  at: { readonly now: number; readonly shared: boolean; readonly text?: boolean },
): { readonly value: unknown; readonly ttlMs: number; readonly private: boolean } | null {
  if (entry === null) return null;
  const first = entry.indexOf(":");
  const second = entry.indexOf(":", first + 1);
  if (first < 0 || second < 0) return null;
  const expires = Number(entry.slice(0, first));
  if (!(expires > at.now)) return null;
  try {
    return {
      value: at.text ? entry.slice(second + 1) : parseEntry(entry.slice(second + 1), at.shared),
      ttlMs: expires - at.now,
      private: entry.slice(first + 1, second) === "1",
    };
  } catch {
    return null;
  }
}

/** The policy of a fetched answer: its directives, the subgraph's TTL when it says none. */
function directivesOf(
  headers: Headers,
  run: EntityCacheRun,
  subgraph: string,
): CacheDirectives & { readonly store: boolean; readonly ttl: number } {
  const directives = parseCacheControl(headers.get("cache-control"));
  const ttl = directives.ttlMs ?? run.settings.ttlOf(subgraph) ?? 0;
  // A private answer is kept only under the identity that asked.
  const store = directives.cacheable && ttl > 0 && (!directives.private || run.privateId !== null);
  return { ...directives, ttlMs: ttl, ttl, store };
}

/** Whether a fetch goes through the cache: a query's, to a cached subgraph. */
export function cachedFetch(run: EntityCacheRun | undefined, step: FetchStep): boolean {
  return run !== undefined && step.node.operationKind === "query" &&
    run.settings.ttlOf(step.subgraph) !== null;
}

/** What {@linkcode lookupEntities} found. */
export interface EntityLookup {
  /** Per representation: its entry's key (public; the private one is `key + privateSuffix`). */
  readonly keys: readonly string[];
  /** Per representation: the cached entity, or undefined when missing. */
  readonly hits: readonly unknown[];
  /** The representations' types. */
  readonly types: readonly string[];
  /** The representations' key fields (what `{$key.…}` of a `@cacheTag` reads). */
  readonly keyValues: readonly Json[];
  /** Indexes of the representations missing. */
  readonly missing: readonly number[];
  /** `:p:<hash>` of the private id, or null. */
  readonly privateSuffix: string | null;
  /**
   * All found, for a request reading through layers: the parse holder shared
   * by every request served these same entries (as single-flight callers share
   * one answer), so identical requests share one rendered result too.
   */
  readonly holder: { value?: unknown } | null;
}

/**
 * Looks up each representation's entity (the caller's private entry first).
 * @param run The request's cache.
 * @param fetch The fetch, its representations' JSON and the variables it sends.
 * @returns What was found.
 */
export async function lookupEntities(
  run: EntityCacheRun,
  fetch: {
    readonly step: FetchStep;
    readonly representations: readonly string[];
    readonly variablesJson: string;
  },
): Promise<EntityLookup> {
  const { step, representations } = fetch;
  const settings = run.settings;
  const fetchHash = await fetchHashOf(step, fetch.variablesJson);
  const privateSuffix = await privateSuffixOf(run);
  const types: string[] = [];
  const keyValues: Json[] = [];
  /** Keys waiting for the hash of long `@requires` values. */
  const hashed: Promise<void>[] = [];
  const keys = representations.map((json, i) => {
    const rep = JSON.parse(json) as Json;
    const type = String(rep.__typename);
    types.push(type);
    const fields = settings.keyFields(step.subgraph, type);
    const key: Json = {};
    const rest: Json = {};
    for (const name of Object.keys(rep)) {
      if (name === "__typename") continue;
      if (fields.size === 0 || fields.has(name)) key[name] = rep[name];
      else rest[name] = rep[name];
    }
    keyValues.push(key);
    const restJson = canonicalJson(rest);
    const head = `${step.subgraph}:${type}:${canonicalJson(key)}:${fetchHash}`;
    if (restJson === "{}") return head;
    // Short `@requires` values go in as they are; long ones by their hash.
    if (restJson.length <= MAX_INLINE_REQUIRES) return `${head}:${restJson}`;
    hashed.push(sha256Hex(restJson).then((hash) => void (keys[i] = `${head}:${hash}`)));
    return head;
  });
  await Promise.all(hashed);
  const asked = privateSuffix === null ? keys : [...keys.map((k) => k + privateSuffix), ...keys];
  const entries = await settings.backend.getMany(asked);
  const at = { now: settings.now(), shared: run.shared === true };
  const hits: unknown[] = [];
  const missing: number[] = [];
  for (let i = 0; i < keys.length; i++) {
    const found = readEntry(entries[i] ?? null, at) ??
      (privateSuffix === null ? null : readEntry(entries[keys.length + i] ?? null, at));
    hits.push(found?.value);
    if (found === null) missing.push(i);
    else run.policy.add({ cacheable: true, ttlMs: found.ttlMs, private: found.private });
  }
  const outcome = missing.length === 0
    ? "hit"
    : missing.length === keys.length
    ? "miss"
    : "partial";
  settings.events?.lookup(step.subgraph, types[0] ?? "", outcome);
  run.onLookup?.(outcome);
  const holder = outcome === "hit" && at.shared ? holderOf(entries.join("\n")) : null;
  return { keys, hits, types, keyValues, missing, privateSuffix, holder };
}

/**
 * Stores the entities fetched for the missing representations, as the answer's
 * `Cache-Control` allows; adds the answer to the client answer's policy. An
 * answer with errors, a status other than 2xx or a null entity is not stored.
 * @param run The request's cache.
 * @param lookup The lookup the fetch followed.
 * @param answer The subgraph answer: its headers, status, entities and whether it had errors.
 */
export function storeEntities(
  run: EntityCacheRun,
  lookup: EntityLookup,
  answer: {
    readonly subgraph: string;
    readonly headers: Headers;
    readonly ok: boolean;
    readonly entities: readonly unknown[] | null;
  },
): void {
  const directives = directivesOf(answer.headers, run, answer.subgraph);
  const entities = answer.entities;
  if (!answer.ok || entities === null || entities.length !== lookup.missing.length) {
    run.policy.uncacheable();
    return;
  }
  run.policy.add(directives);
  if (!directives.store) return;
  const expires = run.settings.now() + directives.ttl;
  const suffix = directives.private ? lookup.privateSuffix! : "";
  const head = `${expires}:${directives.private ? 1 : 0}:`;
  const formats = run.settings.cacheTags?.types;
  lookup.missing.forEach((at, i) => {
    const entity = entities[i];
    if (entity === null || typeof entity !== "object") return;
    const type = lookup.types[at]!;
    const tags = renderTags(formats?.get(type), { key: lookup.keyValues[at] });
    write(run, { subgraph: answer.subgraph, type, tags }, {
      key: lookup.keys[at]! + suffix,
      value: head + JSON.stringify(entity),
      ttlMs: directives.ttl,
    });
  });
}

/** The tags of an entry from its formats (those whose values are missing are left out). */
function renderTags(
  formats: readonly CacheTagFormat[] | undefined,
  values: { readonly key?: unknown; readonly args?: unknown },
): string[] {
  const tags: string[] = [];
  for (const format of formats ?? []) {
    const tag = renderCacheTag(format, values);
    if (tag !== null && !tags.includes(tag)) tags.push(tag);
  }
  return tags;
}

/** Writes an entry and reports what became of it. */
function write(
  run: EntityCacheRun,
  what: { readonly subgraph: string; readonly type: string; readonly tags: readonly string[] },
  entry: { readonly key: string; readonly value: string; readonly ttlMs: number },
): void {
  const { events, backend } = run.settings;
  const tagged = what.tags.length > 0 ? { subgraph: what.subgraph, tags: what.tags } : undefined;
  void backend.set(entry.key, entry.value, entry.ttlMs, tagged).then((written) => {
    if (written.stored) events?.stored(what.subgraph, what.type, written.bytes);
    else events?.skipped?.(what.subgraph, what.type, written.reason);
  });
}

/** Root fields and their argument nodes, per plan step (plans are cached). */
const ROOT_FIELDS = new WeakMap<FetchStep, readonly RootField[]>();

interface RootField {
  readonly name: string;
  readonly args: readonly { readonly name: string; readonly value: ValueNode }[];
}

function rootFieldsOf(step: FetchStep): readonly RootField[] {
  let fields = ROOT_FIELDS.get(step);
  if (fields !== undefined) return fields;
  const out: RootField[] = [];
  const walk = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        out.push({
          name: selection.name.value,
          args: (selection.arguments ?? []).map((a) => ({ name: a.name.value, value: a.value })),
        });
      } else if (selection.kind === Kind.INLINE_FRAGMENT) walk(selection.selectionSet);
    }
  };
  try {
    const document = parse(step.node.operation, { noLocation: true });
    for (const def of document.definitions) {
      if (def.kind === Kind.OPERATION_DEFINITION) walk(def.selectionSet);
    }
  } catch {
    // The planner printed it: it parses.
  }
  ROOT_FIELDS.set(step, fields = out);
  return fields;
}

/**
 * The `@cacheTag` tags of a root-field fetch: each root field's formats with
 * its arguments (variables resolved).
 */
function rootTagsOf(run: EntityCacheRun, step: FetchStep, variablesJson: string): string[] {
  const formats = run.settings.cacheTags?.rootFields;
  if (formats === undefined || formats.size === 0) return [];
  const tags: string[] = [];
  let variables: Record<string, unknown> | null = null;
  for (const field of rootFieldsOf(step)) {
    const own = formats.get(field.name);
    if (own === undefined) continue;
    variables ??= JSON.parse(variablesJson) as Record<string, unknown>;
    const args: Json = {};
    for (const arg of field.args) args[arg.name] = valueFromASTUntyped(arg.value, variables);
    for (const tag of renderTags(own, { args })) if (!tags.includes(tag)) tags.push(tag);
  }
  return tags;
}

/**
 * Looks up a root-field fetch's whole answer.
 * @param run The request's cache.
 * @param fetch The fetch and the variables it sends.
 * @returns The entry's key and the cached answer's body (null: missing).
 */
export async function lookupRoot(
  run: EntityCacheRun,
  fetch: { readonly step: FetchStep; readonly variablesJson: string; readonly rootType: string },
): Promise<
  {
    readonly key: string;
    readonly privateSuffix: string | null;
    /** The entry's `@cacheTag` tags. */
    readonly tags: readonly string[];
    readonly body: string | null;
    /** For a request reading through layers: the parse holder every such hit shares. */
    readonly holder: { value?: unknown } | null;
  }
> {
  const { step } = fetch;
  const hash = await fetchHashOf(step, fetch.variablesJson);
  const key = `${step.subgraph}:${fetch.rootType}:root:${hash}`;
  const privateSuffix = await privateSuffixOf(run);
  const entries = await run.settings.backend.getMany(
    privateSuffix === null ? [key] : [key + privateSuffix, key],
  );
  // The answer's text as stored: the executor parses it as any answer (once).
  const at = { now: run.settings.now(), shared: false, text: true };
  let found = null;
  for (const entry of entries) if ((found = readEntry(entry, at)) !== null) break;
  const outcome = found === null ? "miss" : "hit";
  run.settings.events?.lookup(step.subgraph, fetch.rootType, outcome);
  run.onLookup?.(outcome);
  if (found === null) {
    const tags = rootTagsOf(run, step, fetch.variablesJson);
    return { key, privateSuffix, tags, body: null, holder: null };
  }
  run.policy.add({ cacheable: true, ttlMs: found.ttlMs, private: found.private });
  const body = found.value as string;
  return {
    key,
    privateSuffix,
    tags: [],
    body,
    holder: run.shared === true ? holderOf(body) : null,
  };
}

/**
 * Stores a root-field fetch's answer as its `Cache-Control` allows (not with
 * errors, not with a status other than 2xx); adds it to the client answer's policy.
 * @param run The request's cache.
 * @param lookup The lookup the fetch followed.
 * @param answer The subgraph answer.
 */
export function storeRoot(
  run: EntityCacheRun,
  lookup: {
    readonly key: string;
    readonly privateSuffix: string | null;
    readonly type: string;
    readonly tags?: readonly string[];
  },
  answer: {
    readonly subgraph: string;
    readonly headers: Headers;
    readonly ok: boolean;
    readonly payload: unknown;
  },
): void {
  if (!answer.ok) {
    run.policy.uncacheable();
    return;
  }
  const directives = directivesOf(answer.headers, run, answer.subgraph);
  run.policy.add(directives);
  if (!directives.store) return;
  const expires = run.settings.now() + directives.ttl;
  const value = `${expires}:${directives.private ? 1 : 0}:${JSON.stringify(answer.payload)}`;
  const key = directives.private ? lookup.key + lookup.privateSuffix! : lookup.key;
  write(run, { subgraph: answer.subgraph, type: lookup.type, tags: lookup.tags ?? [] }, {
    key,
    value,
    ttlMs: directives.ttl,
  });
}
