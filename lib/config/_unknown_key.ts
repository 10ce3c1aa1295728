/**
 * The reason an unknown config key is refused, with the known key it most
 * likely meant (`listen_address` → "did you mean "listen_addr"?"), or the
 * known keys when none is near. Pure.
 *
 * @module
 */

/**
 * Why a key is unknown, naming the nearest known key.
 * @param key The key as written.
 * @param known The keys known at that place.
 * @returns The reason, for the error message.
 */
export function unknownKeyReason(key: string, known: readonly string[]): string {
  // Up to 2 edits, or a quarter of the key (listen_address → listen_addr), or a prefix.
  const near = (candidate: string) =>
    editDistance(candidate, key) <= Math.max(2, Math.floor(key.length / 4)) ||
    (Math.min(candidate.length, key.length) >= 4 &&
      (candidate.startsWith(key) || key.startsWith(candidate)));
  const close = known.filter(near)
    .sort((a, b) => editDistance(a, key) - editDistance(b, key));
  const hint = close.length > 0
    ? `did you mean "${close[0]}"?`
    : `known keys: ${[...known].sort().join(", ")}`;
  return `unknown key "${key}" (${hint})`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
