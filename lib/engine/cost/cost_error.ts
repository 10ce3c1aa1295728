/**
 * The error of an operation the cost rules cannot score.
 *
 * @module
 */

/** An operation the cost rules cannot score (`COST_QUERY_PARSE_FAILURE`, Apollo's code). */
export class CostError extends Error {
  /** Stable code. */
  readonly code = "COST_QUERY_PARSE_FAILURE";
  /**
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { CostError } from "./cost_error.ts";
   * assert.equal(new CostError("fragment Rows is spread but not defined in the document").code, "COST_QUERY_PARSE_FAILURE");
   * ```
   * @param message Sentence-case message.
   */
  constructor(message: string) {
    super(message);
    this.name = "CostError";
  }
}
