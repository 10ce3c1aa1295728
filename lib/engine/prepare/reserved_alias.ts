/**
 * Validation rule: the response key `__typename` holds an object's type name.
 * The router reads each object's type there (entity representations, abstract
 * types, the shaper), so a client alias may put only `__typename` under it.
 *
 * @module
 */
import { type ASTVisitor, GraphQLError, type ValidationContext } from "graphql";
import { clipForMessage } from "../../errors.ts";

/** The response key the router reads an object's type from. */
const TYPENAME = "__typename";

/**
 * Refuses a field other than `__typename` aliased `__typename`: its value
 * would be taken for the object's type, and sent as the `__typename` of an
 * entity representation (another entity type than the one the client asked
 * for), or skip the fetches of the real type. graphql-js accepts such an
 * alias (aliases are no type-system names); the router does not.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildSchema, parse, validate } from "graphql";
 * import { ReservedTypenameAliasRule } from "./reserved_alias.ts";
 * const schema = buildSchema("type Query { name: String }");
 * const refused = validate(schema, parse("{ __typename: name }"), [ReservedTypenameAliasRule]);
 * assert.equal(refused.length, 1);
 * assert.equal(validate(schema, parse("{ __typename: __typename t: __typename }"), [ReservedTypenameAliasRule]).length, 0);
 * ```
 * @param context The validation context.
 * @returns The visitor.
 */
export function ReservedTypenameAliasRule(context: ValidationContext): ASTVisitor {
  return {
    Field(node) {
      if (node.alias?.value !== TYPENAME || node.name.value === TYPENAME) return;
      context.reportError(
        new GraphQLError(
          `The alias "${TYPENAME}" is reserved for the ${TYPENAME} field; "${
            clipForMessage(node.name.value)
          }" cannot use it.`,
          { nodes: node },
        ),
      );
    },
  };
}
