/**
 * Deterministic in-memory data of the demo shop, shared by the four demo
 * subgraphs. Everything here is frozen; the reviews subgraph copies
 * {@linkcode REVIEWS} into its own store so that `addReview` never leaks
 * between servers (each test gets fresh data).
 *
 * @module
 */

/** A user (accounts). */
export interface UserRecord {
  readonly id: string;
  readonly name: string;
  readonly username: string;
  readonly email: string;
  readonly tier: "STANDARD" | "GOLD" | "PLATINUM";
}

/** An order (accounts). */
export interface OrderRecord {
  readonly id: string;
  readonly userId: string;
  readonly itemUpcs: readonly string[];
  readonly paymentMethod: string;
}

/** A brand (products). */
export interface BrandRecord {
  readonly id: string;
  readonly name: string;
  readonly country: string;
}

/** A product (products). */
export interface ProductRecord {
  readonly upc: string;
  readonly sku: string;
  readonly name: string;
  readonly description: string;
  readonly category: "FURNITURE" | "KITCHEN" | "OUTDOOR" | "BOOKS";
  readonly price: number;
  readonly weight: number;
  readonly brandId: string;
}

/** A review (reviews). */
export interface ReviewRecord {
  readonly id: string;
  readonly productUpc: string;
  readonly authorId: string;
  readonly body: string;
  readonly rating: number;
}

/** A stock line (inventory). */
export interface StockRecord {
  readonly upc: string;
  readonly quantity: number;
  readonly warehouseId: string;
}

/** A warehouse (inventory). */
export interface WarehouseRecord {
  readonly id: string;
  readonly name: string;
  readonly city: string;
}

function freeze<T>(items: T[]): readonly Readonly<T>[] {
  return Object.freeze(items.map((item) => Object.freeze(item)));
}

/** Users, in id order. */
export const USERS: readonly UserRecord[] = freeze<UserRecord>([
  { id: "1", name: "Ada Lovelace", username: "ada", email: "ada@example.com", tier: "PLATINUM" },
  { id: "2", name: "Alan Turing", username: "alan", email: "alan@example.com", tier: "GOLD" },
  {
    id: "3",
    name: "Grace Hopper",
    username: "grace",
    email: "grace@example.com",
    tier: "STANDARD",
  },
  {
    id: "4",
    name: "Edsger Dijkstra",
    username: "edsger",
    email: "edsger@example.com",
    tier: "STANDARD",
  },
]);

/** Orders, newest first per user. */
export const ORDERS: readonly OrderRecord[] = freeze<OrderRecord>([
  { id: "o2", userId: "1", itemUpcs: ["6"], paymentMethod: "VISA ****4242" },
  { id: "o1", userId: "1", itemUpcs: ["1", "3"], paymentMethod: "VISA ****4242" },
  { id: "o3", userId: "2", itemUpcs: ["5", "4"], paymentMethod: "AMEX ****1005" },
]);

/** Brands. */
export const BRANDS: readonly BrandRecord[] = freeze<BrandRecord>([
  { id: "b1", name: "Nordwood", country: "Sweden" },
  { id: "b2", name: "Ironclad", country: "USA" },
  { id: "b3", name: "Trailhead", country: "Canada" },
  { id: "b4", name: "Addison Press", country: "USA" },
]);

/** Products, in UPC order. */
export const PRODUCTS: readonly ProductRecord[] = freeze<ProductRecord>([
  {
    upc: "1",
    sku: "FURN-OAK-TABLE",
    name: "Oak Dining Table",
    description: "Solid oak table that seats six.",
    category: "FURNITURE",
    price: 899,
    weight: 42.5,
    brandId: "b1",
  },
  {
    upc: "2",
    sku: "FURN-WALNUT-SHELF",
    name: "Walnut Bookshelf",
    description: "Five-shelf bookcase in oiled walnut.",
    category: "FURNITURE",
    price: 349,
    weight: 18,
    brandId: "b1",
  },
  {
    upc: "3",
    sku: "KIT-IRON-SKILLET",
    name: "Cast Iron Skillet",
    description: "Pre-seasoned 12-inch skillet.",
    category: "KITCHEN",
    price: 45,
    weight: 2.7,
    brandId: "b2",
  },
  {
    upc: "4",
    sku: "KIT-CHEF-KNIFE",
    name: "Chef's Knife",
    description: "Eight-inch forged steel knife.",
    category: "KITCHEN",
    price: 89.5,
    weight: 0.3,
    brandId: "b2",
  },
  {
    upc: "5",
    sku: "OUT-TENT-2P",
    name: "Camping Tent",
    description: "Two-person three-season tent.",
    category: "OUTDOOR",
    price: 229,
    weight: 4.2,
    brandId: "b3",
  },
  {
    upc: "6",
    sku: "BOOK-TAOCP-1",
    name: "The Art of Computer Programming",
    description: "Volume 1, fundamental algorithms.",
    category: "BOOKS",
    price: 199.99,
    weight: 1.5,
    brandId: "b4",
  },
]);

/** Best sellers, best first (UPCs). */
export const TOP_PRODUCT_UPCS: readonly string[] = Object.freeze(["1", "3", "5", "6", "2", "4"]);

/** Reviews, oldest first. */
export const REVIEWS: readonly ReviewRecord[] = freeze<ReviewRecord>([
  { id: "r1", productUpc: "1", authorId: "1", body: "Sturdy and beautiful.", rating: 5 },
  { id: "r2", productUpc: "1", authorId: "2", body: "Heavy, but worth it.", rating: 4 },
  { id: "r3", productUpc: "3", authorId: "3", body: "Sears a steak perfectly.", rating: 5 },
  { id: "r4", productUpc: "5", authorId: "1", body: "Leaked in a storm.", rating: 2 },
  { id: "r5", productUpc: "6", authorId: "4", body: "A classic; read it twice.", rating: 5 },
  { id: "r6", productUpc: "4", authorId: "2", body: "Holds an edge well.", rating: 4 },
  { id: "r7", productUpc: "3", authorId: "4", body: "Takes time to season.", rating: 3 },
]);

/** Stock lines, in UPC order. */
export const STOCK: readonly StockRecord[] = freeze<StockRecord>([
  { upc: "1", quantity: 3, warehouseId: "w1" },
  { upc: "2", quantity: 12, warehouseId: "w1" },
  { upc: "3", quantity: 40, warehouseId: "w2" },
  { upc: "4", quantity: 0, warehouseId: "w2" },
  { upc: "5", quantity: 7, warehouseId: "w2" },
  { upc: "6", quantity: 1, warehouseId: "w1" },
]);

/** Warehouses. */
export const WAREHOUSES: readonly WarehouseRecord[] = freeze<WarehouseRecord>([
  { id: "w1", name: "North Hub", city: "Stockholm" },
  { id: "w2", name: "East Hub", city: "Boston" },
]);
