/**
 * The entity cache's invalidation endpoint (`entity_cache.invalidation`, issue
 * 42): `POST <path>` with `Authorization: <shared_key>` (compared in constant
 * time) and Apollo Router's body, a list of
 *
 * ```
 * { "kind": "subgraph", "subgraph": "products" }
 * { "kind": "type", "subgraph": "products", "type": "Product" }
 * { "kind": "entity", "subgraph": "products", "type": "Product", "key": { "id": "1" } }
 * ```
 *
 * answered 202 `{ "count": <entries removed> }` (as Apollo Router). With Redis the entries are gone
 * for every replica (there is no copy in memory). Root-field entries belong to
 * their root type (`{ kind: "type", type: "Query" }`).
 *
 * Answers: 401 `UNAUTHORIZED` (missing or wrong key), 405 (not POST), 400
 * `BAD_REQUEST` (a body that is not such a list; at most 100 entries, 64 KB, nested within
 * `security.parser_limits.approximate_depth_limit`),
 * 503 `SERVICE_UNAVAILABLE` (Redis could not answer: nothing is sure to be gone).
 *
 * @module
 */
import type { RouterState } from "../state/mod.ts";
import { checkJsonTextDepth, invalidationPrefix } from "../engine/mod.ts";
import { bodyOf } from "../request/context.ts";

/** Entries of one invalidation request. */
const MAX_ENTRIES = 100;
/** Bytes of one invalidation request's body. */
const MAX_BODY_BYTES = 65_536;
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** One invalidation of the request. */
interface Target {
  readonly subgraph: string;
  readonly type?: string;
  readonly key?: unknown;
}

function refuse(status: number, code: string, message: string): Response {
  return Response.json({ errors: [{ message, extensions: { code } }] }, {
    status,
    headers: status === 401 ? { "www-authenticate": "Bearer" } : {},
  });
}

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
 * assert.deepEqual(readTargets([{ kind: "type", subgraph: "products", type: "Product" }]), [{ subgraph: "products", type: "Product" }]);
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
    if (typeof subgraph !== "string" || !NAME.test(subgraph)) {
      return `Invalidation ${i}: expected "subgraph", a subgraph name`;
    }
    if (kind === "subgraph") {
      out.push({ subgraph });
      continue;
    }
    if (typeof type !== "string" || !NAME.test(type)) {
      return `Invalidation ${i}: expected "type", a type name`;
    }
    if (kind === "type") out.push({ subgraph, type });
    else if (kind === "entity") {
      if (key === null || typeof key !== "object" || Array.isArray(key)) {
        return `Invalidation ${i}: expected "key", the entity's key fields as an object`;
      }
      out.push({ subgraph, type, key });
    } else return `Invalidation ${i}: expected "kind" subgraph, type or entity`;
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
  const { invalidation } = state.config.entity_cache;
  const store = state.stores.entityCache;
  if (request.method !== "POST") {
    await request.body?.cancel().catch(() => {});
    return new Response(null, { status: 405, headers: { allow: "POST" } });
  }
  if (!sameKey(request.headers.get("authorization") ?? "", invalidation.shared_key)) {
    await request.body?.cancel().catch(() => {});
    return refuse(401, "UNAUTHORIZED", "Missing or wrong Authorization for invalidation");
  }
  let body: unknown;
  try {
    // Read by the handler already (bounded by `max_request_body_bytes`).
    const bytes = await bodyOf(request);
    if (bytes.length > MAX_BODY_BYTES) {
      return refuse(400, "BAD_REQUEST", `The body is over ${MAX_BODY_BYTES} bytes`);
    }
    const text = new TextDecoder().decode(bytes);
    // An entity's key is held to the depth limit of variables (a list, an item around it): its
    // canonical JSON is built by recursion.
    const tooDeep = checkJsonTextDepth(text, state.engine.limits, {
      outer: 2,
      what: "nesting depth of the invalidation's JSON",
    });
    if (tooDeep !== null) return refuse(400, "BAD_REQUEST", tooDeep.message);
    body = JSON.parse(text);
  } catch {
    return refuse(400, "BAD_REQUEST", "The body is not JSON");
  }
  const targets = readTargets(body);
  if (typeof targets === "string") return refuse(400, "BAD_REQUEST", targets);
  if (store === null) return Response.json({ count: 0 }, { status: 202 });
  let count = 0;
  try {
    for (const target of targets) {
      const removed = await store.invalidate(invalidationPrefix(target));
      count += removed;
      state.telemetry?.metrics?.entityCacheInvalidated(target.subgraph, target.type ?? "", removed);
    }
  } catch (error) {
    state.log.warn("Entity cache invalidation failed", { error: String(error), removed: count });
    return refuse(503, "SERVICE_UNAVAILABLE", "The entity cache's store could not answer");
  }
  state.log.info("Entity cache invalidated", { count, invalidations: targets.length });
  // 202, as Apollo Router answers.
  return Response.json({ count }, { status: 202 });
}
