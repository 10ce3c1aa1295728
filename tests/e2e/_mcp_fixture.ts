/**
 * Shared set-up of the MCP e2e tests: a real subgraph whose fields carry
 * `@requiresScopes`, composed into a supergraph, the real router on port 0,
 * an ES256 key pair whose JWKS is served from a loopback server, and a token
 * minter.
 *
 * @module
 */
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { type JwksChaos, type JwksStub, startJwksStub } from "./_jwks_stub.ts";
import { composeSupergraph } from "../../lib/compose/mod.ts";
import { parseConfig } from "../../lib/config/mod.ts";
import { withProfile } from "./_production_profile.ts";
import { TEST_DEADLINE_MS, within } from "./_deadline.ts";
import type { Logger } from "../../lib/log/mod.ts";
import { type RunningRouter, startRouter } from "../../lib/cli/serve.ts";
import { type RunningSubgraph, serveSubgraph } from "../../demo/subgraph.ts";

export const ISSUER = "https://idp.test";

const TYPE_DEFS = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@requiresScopes"])

type Query {
  "A public greeting"
  hello: String
  "The spec §7.2 example: (A AND B AND C) OR (D)"
  secret: String @requiresScopes(scopes: [["A", "B", "C"], ["D"]])
  "Three alternative groups"
  three: String @requiresScopes(scopes: [["x:read"], ["y:read", "z:read"], ["admin"]])
  profile(id: ID!): Profile
  "Always fails"
  flaky: String
}

type Profile @key(fields: "id") {
  id: ID!
  name: String
  email: String @requiresScopes(scopes: [["read:email"]])
}

type Mutation {
  "Renames a profile"
  rename(id: ID!, name: String!): Profile @requiresScopes(scopes: [["write:profile"]])
}
`;

const OPERATIONS: Record<string, string> = {
  "GetHello.graphql": "# Says hello to the caller\nquery GetHello { hello }\n",
  "GetSecret.graphql": "query GetSecret { secret }\n",
  "GetThree.graphql": "query GetThree { three }\n",
  "GetFlaky.graphql": "query GetFlaky { hello flaky }\n",
  "GetProfile.graphql":
    "query GetProfile($id: ID!) {\n  profile(id: $id) { ...P }\n}\nfragment P on Profile { id name email }\n",
  "Rename.graphql":
    "mutation Rename($id: ID!, $name: String!) { rename(id: $id, name: $name) { id name } }\n",
};

/** Scopes configured by default (spec §2.1). */
export const DEFAULT_SCOPES = {
  initialize: ["mcp:connect"],
  tools_list: ["mcp:list"],
  tools_call: ["mcp:call"],
  execute_graphql: ["mcp:exec"],
  get_operation_info: ["mcp:info"],
  get_schema: ["mcp:schema"],
};

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A running fixture. */
export interface McpFixture {
  readonly router: RunningRouter;
  readonly mcpUrl: string;
  readonly metadataUrl: string;
  /** Queries the subgraph received (to prove a denied call never reached it). */
  readonly subgraphQueries: string[];
  /** Headers of each subgraph request, in order. */
  readonly subgraphHeaders: Headers[];
  /** The JWKS stub (chaos modes, fetch counts). */
  readonly jwks: JwksStub;
  /** The operations folder (tests add files and reload). */
  readonly operationsDir: string;
  /** Mints a token with `scope` = the scopes joined by spaces (or a raw claim). */
  token(
    scope: string | unknown,
    options?: {
      sub?: string;
      expired?: boolean;
      /** `aud`; default: the MCP resource URL (null: no `aud`). */
      audience?: string | null;
      /** Extra header parameters (`typ`). */
      header?: Record<string, unknown>;
      /** Extra claims (`iat`, `nbf`, `exp`, `iss`). */
      claims?: Record<string, unknown>;
    },
  ): Promise<string>;
  close(): Promise<void>;
}

/** Options for {@linkcode startMcpFixture}. */
export interface FixtureOptions {
  readonly scopes?: Partial<typeof DEFAULT_SCOPES>;
  readonly includeTokenScopes?: boolean;
  /** `mcp.oauth.scope_challenge_all_levels`. */
  readonly challengeAllLevels?: boolean;
  readonly maxScopeCombinations?: number;
  /** `headers` config (propagation rules to subgraphs). */
  readonly headers?: unknown;
  /** Also verify tokens on GraphQL/Connect requests (`authentication.jwt.jwks` = the fixture's JWKS). */
  readonly authentication?: boolean;
  /** `authorization` config. */
  readonly authorization?: unknown;
  /** Extra keys of the JWKS URL source (`issuer`, `required_typ`, `refresh_unknown_kid`). */
  readonly source?: Record<string, unknown>;
  /** Extra keys of `authentication.jwt` (`clock_skew`). */
  readonly jwt?: Record<string, unknown>;
  /** `engine` config. */
  readonly engine?: Record<string, unknown>;
  /** `telemetry` config (metrics). */
  readonly telemetry?: Record<string, unknown>;
  /** Do not wait for `/health/ready` after the start (the JWKS may be down). */
  readonly skipReady?: boolean;
  /** The JWKS stub's mode from the start. */
  readonly jwksChaos?: JwksChaos;
  /** A real authorization server for MCP (its issuer and jwks_uri) instead of the stub. */
  readonly authorizationServer?: { readonly issuer: string; readonly jwksUri: string };
  /** Extra `mcp` keys (`exclude_mutations`). */
  readonly mcp?: Record<string, unknown>;
  /** `csrf_prevention` config. */
  readonly csrfPrevention?: Record<string, unknown>;
}

/**
 * Runs `body` against a fresh fixture and closes it afterwards, also on failure.
 * @param options Scope and auth config overrides.
 * @param body The test body.
 */
export async function withMcpFixture(
  options: FixtureOptions,
  body: (fixture: McpFixture) => Promise<void>,
): Promise<void> {
  const fixture = await startMcpFixture(options);
  try {
    // A wait the test did not bound fails it (then the router closes), never hangs the suite.
    await within(body(fixture), "the test to finish", TEST_DEADLINE_MS);
  } finally {
    await fixture.close();
  }
}

/**
 * Starts the subgraph, the JWKS server and the router.
 * @param options Scope config overrides.
 * @returns The fixture.
 */
export async function startMcpFixture(options: FixtureOptions = {}): Promise<McpFixture> {
  const subgraphQueries: string[] = [];
  const subgraphHeaders: Headers[] = [];
  const profiles = new Map([["1", { id: "1", name: "Ada", email: "ada@example.com" }]]);
  const subgraph: RunningSubgraph = serveSubgraph("shop", {
    typeDefs: TYPE_DEFS,
    resolvers: {
      Query: {
        hello: () => "Hello!",
        secret: () => "s3cret",
        three: () => "three",
        flaky: () => {
          throw new Error("Flaky failed");
        },
        profile: (_: unknown, { id }: { id: string }) => profiles.get(id) ?? null,
      },
      Mutation: {
        rename: (_: unknown, { id, name }: { id: string; name: string }) => {
          const p = profiles.get(id);
          if (!p) return null;
          p.name = name;
          return p;
        },
      },
      Profile: { __resolveReference: (ref: { id: string }) => profiles.get(ref.id) ?? null },
    },
  }, {
    onRequest: (body, headers) => {
      subgraphQueries.push(body.query);
      subgraphHeaders.push(headers);
    },
  });
  const outcome = composeSupergraph([{ name: "shop", url: subgraph.url, sdl: subgraph.sdl }]);
  if (!outcome.ok) {
    await subgraph.close();
    throw new Error("Fixture does not compose");
  }
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  const jwks = startJwksStub([jwk]);
  if (options.jwksChaos !== undefined) jwks.mode(options.jwksChaos);
  const operationsDir = await Deno.makeTempDir({ prefix: "gw_mcp_ops_" });
  for (const [name, text] of Object.entries(OPERATIONS)) {
    await Deno.writeTextFile(`${operationsDir}/${name}`, text);
  }
  // The production profile (issue 39): access logs, metrics and tracing on.
  const config = parseConfig(withProfile({
    listen_addr: "127.0.0.1:0",
    supergraph_path: "unused.graphql",
    operations_dir: operationsDir,
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.authentication
      ? {
        authentication: {
          jwt: {
            jwks: [{ url: jwks.url, algorithms: ["ES256"], ...options.source }],
            ...options.jwt,
          },
        },
      }
      : {}),
    ...(options.authorization === undefined ? {} : { authorization: options.authorization }),
    ...(options.engine === undefined ? {} : { engine: options.engine }),
    ...(options.csrfPrevention === undefined ? {} : { csrf_prevention: options.csrfPrevention }),
    ...(options.telemetry === undefined ? {} : { telemetry: options.telemetry }),
    mcp: {
      enabled: true,
      graph_name: "fixture",
      session_secret: "fixture-session-secret-0123456789abcdef",
      enable_arbitrary_operations: true,
      expose_schema: true,
      ...options.mcp,
      oauth: {
        enabled: true,
        authorization_server_urls: [options.authorizationServer?.issuer ?? ISSUER],
        jwks: [{
          url: options.authorizationServer?.jwksUri ?? jwks.url,
          algorithms: ["ES256"],
          ...options.source,
        }],
        scopes: { ...DEFAULT_SCOPES, ...options.scopes },
        scope_challenge_include_token_scopes: options.includeTokenScopes ?? false,
        ...(options.challengeAllLevels === undefined
          ? {}
          : { scope_challenge_all_levels: options.challengeAllLevels }),
        ...(options.maxScopeCombinations === undefined
          ? {}
          : { max_scope_combinations: options.maxScopeCombinations }),
      },
    },
  }));
  let router: RunningRouter;
  try {
    router = await startRouter({ config, supergraphSdl: outcome.supergraphSdl, log: silent });
    // Keys load in the background: tokens before that get 503, so wait for readiness.
    if (!options.skipReady) await waitReady(router.url);
  } catch (error) {
    await Promise.all([subgraph.close(), jwks.close()]);
    throw error;
  }
  const base = router.state().config.mcp.server.base_url;
  return {
    router,
    mcpUrl: `${router.url}/mcp`,
    metadataUrl: `${base}/.well-known/oauth-protected-resource/mcp`,
    subgraphQueries,
    subgraphHeaders,
    jwks,
    operationsDir,
    async token(scope, opts = {}) {
      const claims = typeof scope === "string" || scope === undefined ? { scope } : { scope };
      const jwt = new SignJWT(claims as Record<string, unknown>)
        .setProtectedHeader({ alg: "ES256", kid: "k1", ...opts.header })
        .setIssuer(ISSUER)
        .setSubject(opts.sub ?? "user-1")
        .setIssuedAt();
      // Expired beyond the router's default 60 s clock skew.
      jwt.setExpirationTime(opts.expired ? Math.floor(Date.now() / 1000) - 120 : "5m");
      const audience = opts.audience === undefined ? `${base}/mcp` : opts.audience;
      if (audience !== null) jwt.setAudience(audience);
      if (opts.claims) {
        const { iat, nbf, exp, iss } = opts.claims;
        if (typeof iat === "number") jwt.setIssuedAt(iat);
        if (typeof nbf === "number") jwt.setNotBefore(nbf);
        if (typeof exp === "number") jwt.setExpirationTime(exp);
        if (typeof iss === "string") jwt.setIssuer(iss);
      }
      return await jwt.sign(privateKey);
    },
    async close() {
      await router.shutdown();
      await Promise.all([subgraph.close(), jwks.close()]);
      await Deno.remove(operationsDir, { recursive: true });
    },
  };
}

/**
 * Polls `/health/ready` until it answers 200 (JWKS URLs loaded), at most ~5 s.
 * @param url The router's base URL.
 */
export async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const response = await fetch(`${url}/health/ready`);
    await response.body?.cancel();
    if (response.ok) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("The router did not become ready");
}

/** Sends one JSON-RPC request to the MCP endpoint. */
export async function rpc(
  fixture: McpFixture,
  body: unknown,
  options: { token?: string | null; session?: string | null; headers?: Record<string, string> } =
    {},
): Promise<{ status: number; challenge: string | null; session: string | null; json: unknown }> {
  const headers = new Headers({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...options.headers,
  });
  if (options.token) headers.set("authorization", `Bearer ${options.token}`);
  if (options.session) headers.set("mcp-session-id", options.session);
  const response = await fetch(fixture.mcpUrl, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    challenge: response.headers.get("www-authenticate"),
    session: response.headers.get("mcp-session-id"),
    json: text === "" ? null : JSON.parse(text),
  };
}

/** Initializes a 2025-11-25 session and returns its id. */
export async function initialize(fixture: McpFixture, token: string): Promise<string> {
  const result = await rpc(fixture, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  }, { token });
  if (result.status !== 200 || !result.session) {
    throw new Error(`initialize failed: ${result.status} ${JSON.stringify(result.json)}`);
  }
  return result.session;
}

/**
 * Opens a session's GET event stream with a token (the answer as it comes: 200 with
 * the stream, or a refusal).
 */
export function openGetStream(
  fixture: McpFixture,
  token: string,
  session: string,
): Promise<Response> {
  return fetch(fixture.mcpUrl, {
    headers: {
      accept: "text/event-stream",
      authorization: `Bearer ${token}`,
      "mcp-session-id": session,
    },
  });
}
