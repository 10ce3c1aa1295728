/**
 * Proto names from GraphQL names, as protoc computes them: snake_case field
 * names, their lowerCamelCase JSON names, PascalCase messages and
 * UPPER_SNAKE_CASE enum values. Pure.
 *
 * @module
 */
/**
 * lower_snake_case of a GraphQL name (`maxPrice` → `max_price`, `URLPath` →
 * `url_path`, `__typename` → `typename`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { snakeCase } from "./naming.ts";
 * assert.equal(snakeCase("maxPrice"), "max_price");
 * assert.equal(snakeCase("URLPath"), "url_path");
 * assert.equal(snakeCase("__typename"), "typename");
 * ```
 * @param name A GraphQL name.
 * @returns The snake_case name.
 */
export function snakeCase(name: string): string {
  return name
    .replace(/^_+/, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/_+/g, "_")
    .toLowerCase();
}

/**
 * The proto3 JSON name of a field, computed as protoc does (drop `_`,
 * upper-case the next letter).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { jsonName } from "./naming.ts";
 * assert.equal(jsonName("max_price"), "maxPrice");
 * ```
 * @param protoName A snake_case field name.
 * @returns The lowerCamelCase JSON name.
 */
export function jsonName(protoName: string): string {
  let out = "";
  let upper = false;
  for (const char of protoName) {
    if (char === "_") {
      upper = true;
    } else {
      out += upper ? char.toUpperCase() : char;
      upper = false;
    }
  }
  return out;
}

/**
 * PascalCase of a name (`topProducts` → `TopProducts`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pascalCase } from "./naming.ts";
 * assert.equal(pascalCase("top_products"), "TopProducts");
 * assert.equal(pascalCase("getUser"), "GetUser");
 * ```
 * @param name A name.
 * @returns The PascalCase name.
 */
export function pascalCase(name: string): string {
  return snakeCase(name)
    .split("_")
    .filter((part) => part.length > 0)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join("");
}

/**
 * UPPER_SNAKE_CASE of a name (`MembershipTier` → `MEMBERSHIP_TIER`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { upperSnakeCase } from "./naming.ts";
 * assert.equal(upperSnakeCase("MembershipTier"), "MEMBERSHIP_TIER");
 * ```
 * @param name A name.
 * @returns The UPPER_SNAKE_CASE name.
 */
export function upperSnakeCase(name: string): string {
  return snakeCase(name).toUpperCase();
}
