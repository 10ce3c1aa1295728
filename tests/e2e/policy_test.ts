/**
 * Issue 40: `@policy` on a running router (production profile). The users
 * subgraph's `User.note` carries `@policy(policies: [["staff"], ["auditor",
 * "internal"]])`; a plugin (`_policy_plugin.ts`) or the coprocessor
 * (`_coprocessor.ts`, Apollo's `SupergraphRequest` stage with `context`)
 * grants the policies named in the client's `x-grant` header. Denied, the
 * field is null with `UNAUTHORIZED_FIELD_OR_TYPE` and never asked of the
 * subgraph — on GraphQL over HTTP, Connect, MCP and a subscription; without
 * any decider it is always denied (fail closed).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startCoprocessor } from "../../docs/examples/apollo_coprocessor.ts";
import { readUntil, review, type SubscriptionFixture, until } from "./_subscription_fixture.ts";
import {
  connectCall,
  graphqlCall,
  mcpCall,
  sseCall,
  withOperationsRouter,
} from "./_facet_calls.ts";

const PLUGIN = fileURLToPath(new URL("./_policy_plugin.ts", import.meta.url));
const OPERATIONS = {
  "UserNote.graphql": `query UserNote { user(id: "u1") { name note } }`,
  "NotesFeed.graphql": `subscription NotesFeed { reviewAdded { id author { name note } } }`,
};
const DENIED = {
  message: "Unauthorized field or type",
  path: ["user", "note"],
  extensions: { code: "UNAUTHORIZED_FIELD_OR_TYPE" },
};

function withPolicyRouter(
  config: Record<string, unknown>,
  run: (fixture: SubscriptionFixture) => Promise<void>,
) {
  return withOperationsRouter(
    { operations: OPERATIONS, config, prefix: "gw_policy_ops_" },
    run,
  );
}

/** Checks every facet with these headers: `note` served (granted) or null + error (denied). */
async function checkFacets(
  fixture: SubscriptionFixture,
  headers: Record<string, string>,
  granted: boolean,
): Promise<void> {
  const from = fixture.entityQueries.length;
  const graphql = await (await graphqlCall(fixture, OPERATIONS["UserNote.graphql"], headers))
    .json();
  if (granted) {
    assert.deepEqual(graphql, { data: { user: { name: "Ada", note: "Likes tea" } } });
  } else {
    assert.deepEqual(graphql.data, { user: { name: "Ada", note: null } });
    const { request_id: _, ...extensions } = graphql.errors[0].extensions;
    assert.deepEqual([{ ...graphql.errors[0], extensions }], [DENIED]);
    assert.ok(
      fixture.entityQueries.slice(from).every((query) => !query.includes("note")),
      "a denied field is never asked of the subgraph",
    );
  }

  const connect = await connectCall(fixture, "UserNote", headers);
  const connectBody = await connect.json();
  if (granted) assert.deepEqual(connectBody, { user: { name: "Ada", note: "Likes tea" } });
  else {
    assert.equal(connectBody.code, "permission_denied", JSON.stringify(connectBody));
    assert.equal(connectBody.message, "Unauthorized field or type");
  }

  const mcp = await (await mcpCall(fixture, "execute_operation_user_note", headers)).json();
  assert.equal(mcp.result?.isError, !granted, JSON.stringify(mcp));
  assert.match(mcp.result.content[0].text, granted ? /Likes tea/ : /Unauthorized field or type/);

  const stream = await sseCall(fixture, OPERATIONS["NotesFeed.graphql"], headers);
  await until(() => fixture.feed.open === 1, "the upstream subscription");
  fixture.feed.publish(review("r1"));
  const events = await readUntil(stream, /event: next/);
  if (granted) assert.match(events, /"note":"Likes tea"/);
  else {
    assert.match(events, /"note":null/);
    assert.match(events, /UNAUTHORIZED_FIELD_OR_TYPE/);
  }
  await until(() => fixture.feed.open === 0, "the subscription's end");
}

Deno.test("issue 40: @policy decided by a plugin, on GraphQL, Connect, MCP and a subscription", async () => {
  await withPolicyRouter({ plugins: [{ path: PLUGIN }] }, async (fixture) => {
    await checkFacets(fixture, {}, false);
    await checkFacets(fixture, { "x-grant": "auditor" }, false);
    await checkFacets(fixture, { "x-grant": "staff" }, true);
    await checkFacets(fixture, { "x-grant": "auditor,internal" }, true);
  });
});

Deno.test("issue 40: @policy decided by the coprocessor (SupergraphRequest with context), on every facet", async () => {
  const coprocessor = startCoprocessor();
  try {
    await withPolicyRouter({
      coprocessor: {
        url: coprocessor.url,
        supergraph: { request: { headers: true, context: true } },
      },
    }, async (fixture) => {
      await checkFacets(fixture, {}, false);
      await checkFacets(fixture, { "x-grant": "staff" }, true);
      const asked = coprocessor.received.find((p) => p.stage === "SupergraphRequest");
      assert.deepEqual(asked?.context?.entries, {
        "apollo::authorization::required_policies": {
          auditor: false,
          internal: false,
          staff: false,
        },
      });
    });
  } finally {
    await coprocessor.close();
  }
});

Deno.test("issue 40: without a plugin or coprocessor to decide, a @policy field is always denied", async () => {
  await withPolicyRouter({}, async (fixture) => {
    await checkFacets(fixture, { "x-grant": "staff" }, false);
  });
});
