/**
 * The many-plans shape (issue 33's "87 small fetches over 7 overlapping
 * subgraphs"), after the scenario of the Grafbase federation benchmark: seven
 * small subgraphs `p0` … `p6` share one entity `Plan @key(fields: "id")`, and
 * each resolves four of the seven hops `n<k>: Plan` and fields `f<k>` (subgraph
 * `i` has `k` in `{i, i+1, i+3, i+5} mod 7`), so every field can come from
 * four subgraphs and a planner has many plans to choose from. The query is
 * a full tree: `plan` and four levels of four hops each (256 leaves), each leaf
 * selecting four fields; which hops and fields, a seeded generator picks.
 * Answers are deterministic: the root's id is `"0"`, a hop `n<k>` appends
 * `k` to the id, and `f<k>` is `"f<k>-<id>"`, so the expected `data` is
 * computed, not recorded.
 *
 * @module
 */

/** The seven overlapping subgraphs. */
export const PLAN_NAMES: readonly string[] = ["p0", "p1", "p2", "p3", "p4", "p5", "p6"];

/** The hops and fields subgraph `p<i>` resolves. */
export function planKinds(name: string): number[] {
  const i = Number(name.slice(1));
  return [0, 1, 3, 5].map((d) => (i + d) % 7).sort((a, b) => a - b);
}

/** Subgraph SDL of `p<i>` (federation v2; every field shareable). */
export function planSdl(name: string): string {
  const fields = planKinds(name).map((k) => `n${k}: Plan f${k}: String`).join(" ");
  return `type Query { plan: Plan @shareable }\n` +
    `type Plan @key(fields: "id") @shareable { id: ID! ${fields} }`;
}

/** mulberry32: a small seeded generator, so the query is the same in every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Four distinct kinds of seven, in order. */
function pickFour(random: () => number): number[] {
  const kinds = [0, 1, 2, 3, 4, 5, 6];
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
  }
  return kinds.slice(0, 4).sort((a, b) => a - b);
}

interface Tree {
  readonly hops?: ReadonlyMap<number, Tree>;
  readonly fields?: readonly number[];
}

function tree(depth: number, random: () => number): Tree {
  if (depth === 0) return { fields: pickFour(random) };
  return { hops: new Map(pickFour(random).map((k) => [k, tree(depth - 1, random)])) };
}

const PLAN_TREE = tree(4, seeded(33));

function selection(node: Tree): string {
  if (node.fields) return node.fields.map((k) => `f${k}`).join(" ");
  return [...node.hops!].map(([k, child]) => `n${k} { ${selection(child)} }`).join(" ");
}

function answer(node: Tree, id: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (node.fields) { for (const k of node.fields) out[`f${k}`] = `f${k}-${id}`; }
  else for (const [k, child] of node.hops!) out[`n${k}`] = answer(child, `${id}${k}`);
  return out;
}

/** The many-plans query. */
export const plansQuery: string = `query ManyPlans { plan { ${selection(PLAN_TREE)} } }`;

/** The `data` a correct gateway answers to {@linkcode plansQuery}. */
export const plansExpected: Record<string, unknown> = { plan: answer(PLAN_TREE, "0") };

/** graphql-js resolvers of subgraph `p<i>` (for `@apollo/subgraph`). */
export function planResolvers(name: string): Record<string, Record<string, unknown>> {
  const plan: Record<string, unknown> = {
    __resolveReference: (ref: { id: string }) => ({ id: ref.id }),
  };
  for (const k of planKinds(name)) {
    plan[`n${k}`] = (node: { id: string }) => ({ id: `${node.id}${k}` });
    plan[`f${k}`] = (node: { id: string }) => `f${k}-${node.id}`;
  }
  return { Query: { plan: () => ({ id: "0" }) }, Plan: plan };
}
