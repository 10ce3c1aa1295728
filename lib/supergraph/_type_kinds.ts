/**
 * The kind of a named type by the AST node that defines or extends it: one
 * table for the model builder and the cost directives' reader.
 *
 * @module
 */

/** What kind of named type a definition is. */
export type NamedTypeKind = "object" | "interface" | "union" | "enum" | "input" | "scalar";

/** A type definition's or extension's AST `kind` → its named type's kind. */
export const TYPE_KIND_OF_NODE: Readonly<Record<string, NamedTypeKind>> = Object.freeze({
  ObjectTypeDefinition: "object",
  ObjectTypeExtension: "object",
  InterfaceTypeDefinition: "interface",
  InterfaceTypeExtension: "interface",
  UnionTypeDefinition: "union",
  UnionTypeExtension: "union",
  EnumTypeDefinition: "enum",
  EnumTypeExtension: "enum",
  InputObjectTypeDefinition: "input",
  InputObjectTypeExtension: "input",
  ScalarTypeDefinition: "scalar",
  ScalarTypeExtension: "scalar",
});
