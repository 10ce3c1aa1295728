/**
 * Federation 1 subgraphs: `extend type`, `@extends`, `@external` keys,
 * `@requires` and `@provides` in v1 form, composed into one supergraph.
 *
 * @module
 */
import { type Area, registerArea } from "./_harness.ts";
import { fed1Graph } from "./_fed1_graph.ts";

/** The classic Federation 1 graph, composed by federation-composition. */
export const area: Area = { name: "fed1", title: "Federation 1 subgraphs", ...fed1Graph };

registerArea(area);
