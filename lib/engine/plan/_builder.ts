/**
 * The fetch graph builder's state for one operation (shared by the builder's modules).
 *
 * @module
 */
import type { NField, NormalizedOperation } from "../prepare/mod.ts";
import type { RepSelection } from "./rep.ts";
import type { FieldSetItem } from "./fieldset.ts";
import type { QueryGraph } from "./graph.ts";
import type { Group, Pos } from "./_groups.ts";
import type { SearchState } from "./best.ts";

/** The builder's state for one operation. */
export interface Builder {
  readonly graph: QueryGraph;
  readonly op: NormalizedOperation;
  readonly search: SearchState;
  readonly groups: Group[];
  readonly recorders: Set<Group>[];
  /** `type@subgraph` moves whose keys are being planned. */
  readonly entering: string[];
  entries: number;
  /** Context variables declared so far (`@fromContext` arguments). */
  contextVariables: number;
}

/** The builder's recursive steps, passed to modules it calls (no import cycle). */
export interface Walk {
  planFields(b: Builder, at: { readonly pos: Pos; readonly fields: readonly NField[] }): void;
  enter(b: Builder, pos: Pos, options: { target: string; requires: string | undefined }): Pos;
  addLocal(b: Builder, at: { readonly pos: Pos; readonly field: NField }): void;
  planRequirements(
    b: Builder,
    at: { readonly pos: Pos; readonly items: readonly FieldSetItem[] },
  ): RepSelection;
}
