/**
 * The entity cache's invalidation endpoint (`entity_cache.invalidation`, issue
 * 42): `POST <path>` with `Authorization: <shared_key>` (compared in constant
 * time) and Apollo Router's body, a list of
 *
 * ```
 * { "kind": "subgraph", "subgraph": "products" }
 * { "kind": "type", "subgraph": "products", "type": "Product" }
 * { "kind": "entity", "subgraph": "products", "type": "Product", "key": { "id": "1" } }
 * { "kind": "cache_tag", "subgraphs": ["products"], "cache_tag": "product-1" }
 * ```
 *
 * answered 202 `{ "count": <entries removed> }` (as Apollo Router). With Redis the entries are gone
 * for every replica (there is no copy in memory). Root-field entries belong to
 * their root type (`{ kind: "type", type: "Query" }`).
 *
 * Refusals are the router's errors (`lib/http/errors.ts`: its codes, statuses and
 * `{ errors: [{ message, extensions: { code, request_id } }] }` body): 401
 * `UNAUTHENTICATED` (missing or wrong key), 405 `METHOD_NOT_ALLOWED` (not POST),
 * 413 `PAYLOAD_TOO_LARGE` (over 64 KB), 400 `BAD_REQUEST` (a body that is not such
 * a list of at most 100, or nested deeper than
 * `security.parser_limits.approximate_depth_limit`), 503 `STORE_UNAVAILABLE`
 * (Redis could not answer: some entries may be gone, some not).
 *
 * @module
 */
import type { RouterState } from "../state/mod.ts";
import { checkJsonTextDepth, invalidationPrefix } from "../engine/mod.ts";
import { AuthError, RouterError } from "../errors.ts";
import { bodyOf, requestIdOf } from "../request/mod.ts";
import { errorResponse } from "./errors.ts";

/** Entries of one invalidation request. */
const MAX_ENTRIES = 100;
/** Bytes of one invalidation request's body. */
const MAX_BODY_BYTES = 65_536;
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** Subgraphs one `cache_tag` invalidation names. */
const MAX_SUBGRAPHS = 100;
/** Characters of a `cache_tag` (as the entity cache keeps them). */
const MAX_TAG_LENGTH = 1_024;

/** One invalidation of the request. */
export type Target =
  | {
    readonly kind: "subgraph" | "type" | "entity";
    readonly subgraph: string;
    readonly type?: string;
    readonly key?: unknown;
  }
  | { readonly kind: "cache_tag"; readonly subgraph: string; readonly tag: string };

/** Constant-time equality of two texts (their UTF-8 bytes). */
function sameKey(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i % Math.max(1, a.length)] ?? 0) ^ b[i]!;
  return diff === 0;
}

/**
 * Reads the request's list, or says what is wrong with it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { readTargets } from "./entity_cache_invalidation.ts";
 * assert.deepEqual(readTargets([{ kind: "type", subgraph: "products", type: "Product" }]), [{ kind: "type", subgraph: "products", type: "Product" }]);
 * assert.deepEqual(readTargets([{ kind: "cache_tag", subgraphs: ["a", "b"], cache_tag: "p-1" }]), [
 *   { kind: "cache_tag", subgraph: "a", tag: "p-1" },
 *   { kind: "cache_tag", subgraph: "b", tag: "p-1" },
 * ]);
 * assert.equal(typeof readTargets([{ kind: "entity", subgraph: "products", type: "Product" }]), "string");
 * ```
 * @param body The parsed body.
 * @returns The targets, or an error message.
 */
export function readTargets(body: unknown): Target[] | string {
  const list = Array.isArray(body) ? body : [body];
  if (list.length === 0 || list.length > MAX_ENTRIES) {
    return `Expected a list of 1 to ${MAX_ENTRIES} invalidations`;
  }
  const out: Target[] = [];
  for (const [i, item] of list.entries()) {
    if (item === null || typeof item !== "object") return `Invalidation ${i} is not an object`;
    const { kind, subgraph, type, key } = item as Record<string, unknown>;
    if (kind === "cache_tag") {
      const { subgraphs, cache_tag: tag } = item as Record<string, unknown>;
      if (
        !Array.isArray(subgraphs) || subgraphs.length === 0 || subgraphs.length > MAX_SUBGRAPHS ||
        !subgraphs.every((name) => typeof name === "string" && NAME.test(name))
      ) {
        return `Invalidation ${i}: expected "subgraphs", a list of 1 to ${MAX_SUBGRAPHS} subgraph names`;
      }
      if (typeof tag !== "string" || tag === "" || tag.length > MAX_TAG_LENGTH) {
        return `Invalidation ${i}: expected "cache_tag", a tag of 1 to ${MAX_TAG_LENGTH} characters`;
      }
      for (const name of new Set(subgraphs as string[])) {
        out.push({ kind: "cache_tag", subgraph: name, tag });
      }
      continue;
    }
    if (typeof subgraph !== "string" || !NAME.test(subgraph)) {
      return `Invalidation ${i}: expected "subgraph", a subgraph name`;
    }
    if (kind === "subgraph") {
      out.push({ kind, subgraph });
      continue;
    }
    if (typeof type !== "string" || !NAME.test(type)) {
      return `Invalidation ${i}: expected "type", a type name`;
    }
    if (kind === "type") out.push({ kind, subgraph, type });
    else if (kind === "entity") {
      if (key === null || typeof key !== "object" || Array.isArray(key)) {
        return `Invalidation ${i}: expected "key", the entity's key fields as an object`;
      }
      out.push({ kind, subgraph, type, key });
    } else return `Invalidation ${i}: expected "kind" subgraph, type, entity or cache_tag`;
  }
  return out;
}

/**
 * Answers an invalidation request.
 * @param request The request.
 * @param state The router state (its config and stores).
 * @returns The response.
 */
export async function handleEntityCacheInvalidation(
  request: Request,
  state: RouterState,
): Promise<Response> {
  const refusal = await refusalOf(request, state);
  if (refusal instanceof RouterError) {
    await request.body?.cancel().catch(() => {});
    return errorResponse(refusal, { requestId: requestIdOf(request) });
  }
  const store = state.stores.entityCache;
  if (store === null) return Response.json({ count: 0 }, { status: 202 });
  let count = 0;
  try {
    for (const target of refusal) {
      const removed = target.kind === "cache_tag"
        ? await store.invalidateTag(target.subgraph, target.tag)
        : await store.invalidate(invalidationPrefix(target));
      count += removed;
      const type = target.kind === "cache_tag" ? "" : target.type ?? "";
      state.telemetry?.metrics?.entityCacheInvalidated(target.subgraph, type, removed, target.kind);
    }
  } catch (error) {
    state.log.warn("Entity cache invalidation failed", { error: String(error), removed: count });
    return errorResponse(
      new RouterError(
        "STORE_UNAVAILABLE",
        "The entity cache's store could not answer: some entries may be gone, some not (send it again)",
        { details: { count } },
      ),
      { requestId: requestIdOf(request) },
    );
  }
  state.log.info("Entity cache invalidated", { count, invalidations: refusal.length });
  // 202, as Apollo Router answers.
  return Response.json({ count }, { status: 202 });
}

/** The request's invalidations, or the error refusing it. */
async function refusalOf(request: Request, state: RouterState): Promise<Target[] | RouterError> {
  const { invalidation } = state.config.entity_cache;
  if (request.method !== "POST") {
    return new RouterError("METHOD_NOT_ALLOWED", "Invalidation takes POST", {
      details: { allow: "POST" },
    });
  }
  if (!sameKey(request.headers.get("authorization") ?? "", invalidation.shared_key)) {
    return new AuthError(
      "UNAUTHENTICATED",
      "Missing or wrong Authorization for invalidation (the shared key)",
      'Bearer realm="invalidation"',
    );
  }
  let body: unknown;
  try {
    // Read by the handler already (bounded by `max_request_body_bytes`).
    const bytes = await bodyOf(request);
    if (bytes.length > MAX_BODY_BYTES) {
      return new RouterError("PAYLOAD_TOO_LARGE", `The body is over ${MAX_BODY_BYTES} bytes`);
    }
    const text = new TextDecoder().decode(bytes);
    // An entity's key is held to the depth limit of variables (a list, an item around it): its
    // canonical JSON is built by recursion.
    const tooDeep = checkJsonTextDepth(text, state.engine.limits, {
      outer: 2,
      what: "nesting depth of the invalidation's JSON",
    });
    if (tooDeep !== null) return new RouterError("BAD_REQUEST", tooDeep.message);
    body = JSON.parse(text);
  } catch {
    return new RouterError("BAD_REQUEST", "The body is not JSON");
  }
  const targets = readTargets(body);
  return typeof targets === "string" ? new RouterError("BAD_REQUEST", targets) : targets;
}
