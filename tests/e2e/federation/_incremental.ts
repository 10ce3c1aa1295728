/**
 * Reading incremental answers (`@defer`) as a client does: the parts of a `multipart/mixed`
 * body, and the parts merged into one result (each entry's data at its path).
 *
 * @module
 */
import { textWithin } from "../_deadline.ts";

/** Reads a `multipart/mixed` body into its JSON parts (boundary from the content type). */
export async function readParts(response: Response): Promise<Record<string, unknown>[]> {
  const type = response.headers.get("content-type") ?? "";
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
  if (boundary === undefined) throw new Error(`not multipart: ${type}`);
  const text = await textWithin(response, "the multipart answer's end");
  const out: Record<string, unknown>[] = [];
  for (const chunk of text.split(`\r\n--${boundary}`)) {
    const at = chunk.indexOf("\r\n\r\n");
    if (at < 0) continue;
    out.push(JSON.parse(chunk.slice(at + 4)));
  }
  return out;
}

/**
 * Merges incremental payloads into one result, as a client does: each entry's data at its
 * path, its errors after the others.
 * @param parts The initial payload, then the subsequent ones.
 * @returns `{data, errors?}`.
 */
export function mergeParts(parts: readonly Record<string, unknown>[]): {
  data: unknown;
  errors?: unknown[];
} {
  const first = parts[0] ?? {};
  const data = structuredClone(first.data ?? null) as Record<string, unknown> | null;
  const errors: unknown[] = [...((first.errors as unknown[] | undefined) ?? [])];
  for (const part of parts.slice(1)) {
    for (const e of (part.errors as unknown[] | undefined) ?? []) errors.push(e);
    const entries = (part.incremental ?? []) as {
      data: Record<string, unknown> | null;
      path: (string | number)[];
      errors?: unknown[];
    }[];
    for (const entry of entries) {
      errors.push(...(entry.errors ?? []));
      if (data === null || entry.data === null) continue;
      let target: unknown = data;
      for (const key of entry.path) target = (target as Record<string | number, unknown>)[key];
      merge(target as Record<string, unknown>, entry.data);
    }
  }
  return errors.length > 0 ? { data, errors } : { data };
}

function merge(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) {
    const existing = target[key];
    if (isObject(existing) && isObject(value)) merge(existing, value);
    else if (Array.isArray(existing) && Array.isArray(value)) {
      value.forEach((v, i) => {
        if (isObject(existing[i]) && isObject(v)) merge(existing[i], v);
        else existing[i] = v;
      });
    } else target[key] = value;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
