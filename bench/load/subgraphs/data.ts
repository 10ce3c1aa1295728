// Deterministic in-memory data shared by the four subgraphs and by the
// non-federated reference executor (reference.ts). Nothing here is random:
// every run, every process sees exactly the same values.

export interface UserRow {
  id: string;
  name: string;
  username: string;
  birthday: number;
}

export interface ProductRow {
  upc: string;
  name: string;
  price: number;
  weight: number;
}

export interface ReviewRow {
  id: string;
  body: string;
  authorId: string;
  productUpc: string;
}

export const USERS: UserRow[] = [
  { id: "1", name: "Ada Park", username: "adapark", birthday: 19901114 },
  { id: "2", name: "Bruno Ilves", username: "bilves", birthday: 19870302 },
  { id: "3", name: "Chen Mori", username: "cmori", birthday: 19950721 },
  { id: "4", name: "Dina Okafor", username: "dokafor", birthday: 19821209 },
  { id: "5", name: "Emil Varga", username: "evarga", birthday: 19990430 },
  { id: "6", name: "Farah Lind", username: "flind", birthday: 19930118 },
];

export const PRODUCTS: ProductRow[] = [
  { upc: "1", name: "Standing Desk", price: 899, weight: 100 },
  { upc: "2", name: "Bookshelf", price: 1299, weight: 1000 },
  { upc: "3", name: "Kettle", price: 15, weight: 20 },
  { upc: "4", name: "Reading Lamp", price: 499, weight: 100 },
  { upc: "5", name: "Monitor", price: 1299, weight: 1000 },
  { upc: "6", name: "Keyboard", price: 6999, weight: 300 },
  { upc: "7", name: "Backpack", price: 3999, weight: 2000 },
  { upc: "8", name: "Bicycle", price: 100000, weight: 6000 },
  { upc: "9", name: "Armchair", price: 9999, weight: 800 },
];

// Inventory-owned fields.
export const IN_STOCK: Record<string, boolean> = {
  "1": true,
  "2": false,
  "3": false,
  "4": false,
  "5": true,
  "6": true,
  "7": true,
  "8": false,
  "9": true,
};

// shippingEstimate @requires(fields: "price weight"): computed only from the
// values the gateway passes in the entity representation.
export function shippingEstimate(
  price: number | null | undefined,
  weight: number | null | undefined,
): number | null {
  if (typeof price !== "number") return null;
  if (price > 1000) return 0; // free shipping for expensive items
  if (typeof weight !== "number") return null;
  return Math.floor(weight / 2);
}

// Review bodies: deterministic text of varying length (roughly 90..800 chars)
// so responses have a realistic, non-trivial payload size.
const WORDS = (
  "solid build quality arrived quickly works as described would buy again " +
  "the finish is nicer than the photos suggest assembly took under an hour " +
  "instructions were clear enough packaging was excessive but protective " +
  "price felt fair for what you get support answered within a day " +
  "after three months of daily use it still looks and feels new"
).split(" ");

function body(seed: number, words: number): string {
  const out: string[] = [];
  let x = seed * 7919 + 13;
  for (let i = 0; i < words; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(WORDS[x % WORDS.length]!);
  }
  const s = out.join(" ");
  return s.charAt(0).toUpperCase() + s.slice(1) + ".";
}

const REVIEW_SPEC: Array<[string, string, number]> = [
  // [productUpc, authorId, words]
  ["1", "1", 70],
  ["1", "2", 45],
  ["1", "3", 40],
  ["2", "4", 24],
  ["2", "5", 70],
  ["2", "6", 45],
  ["3", "1", 24],
  ["3", "2", 24],
  ["4", "3", 120],
  ["4", "4", 24],
  ["5", "5", 60],
  ["7", "6", 30],
];

export const REVIEWS: ReviewRow[] = REVIEW_SPEC.map(([upc, author, words], i) => ({
  id: String(i + 1),
  body: body(i + 1, words),
  authorId: author,
  productUpc: upc,
}));

export const USER_BY_ID = new Map(USERS.map((u) => [u.id, u]));
export const PRODUCT_BY_UPC = new Map(PRODUCTS.map((p) => [p.upc, p]));
export const REVIEW_BY_ID = new Map(REVIEWS.map((r) => [r.id, r]));

export function reviewsByAuthor(id: string): ReviewRow[] {
  return REVIEWS.filter((r) => r.authorId === id);
}

export function reviewsByProduct(upc: string): ReviewRow[] {
  return REVIEWS.filter((r) => r.productUpc === upc);
}
