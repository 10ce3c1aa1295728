/**
 * `operations/` folder → registry of named operations: the contract for MCP
 * tools and Connect methods. The registry is built by a pure function from
 * file texts; reading the folder is the caller's I/O.
 *
 * @module
 */
import type { DocumentNode, GraphQLSchema, OperationDefinitionNode } from "graphql";
import type { OperationKind } from "../engine/types.ts";

/** One operation file as read from disk. */
export interface OperationFile {
  /** Path relative to `operations_dir`, e.g. `GetUser.graphql`. */
  readonly path: string;
  readonly text: string;
}

/** One registered operation. */
export interface RegisteredOperation {
  /** The GraphQL operation name (`GetUser`). */
  readonly name: string;
  readonly kind: OperationKind;
  /** The file it came from. */
  readonly path: string;
  /** The whole file text (operation plus its fragments), as sent to the engine. */
  readonly text: string;
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode;
  /** The operation's description (leading comment / description), or null. */
  readonly description: string | null;
}

/** The registry, in file-name order. */
export interface OperationRegistry {
  readonly operations: readonly RegisteredOperation[];
  readonly byName: ReadonlyMap<string, RegisteredOperation>;
  /** Files skipped, with why (logged at start-up). */
  readonly skipped: readonly { readonly path: string; readonly reason: string }[];
}

/**
 * Builds the registry. STUB: the MCP owner implements it.
 * @param _files Operation files, any order (sorted by path here).
 * @param _schema The API schema the operations are validated against.
 * @returns The registry.
 */
export function buildOperationRegistry(
  _files: readonly OperationFile[],
  _schema: GraphQLSchema,
): OperationRegistry {
  return { operations: [], byName: new Map(), skipped: [] };
}
