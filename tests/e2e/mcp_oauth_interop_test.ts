/**
 * Issue 18: interop with a real authorization server (npm `oidc-provider`:
 * authorization code + PKCE, resource indicators, RFC 9068 JWT access
 * tokens) and the official MCP SDK clients' OAuth providers, v1
 * (`@modelcontextprotocol/sdk`) and v2 (`@modelcontextprotocol/client`):
 * 401 → metadata → token → initialize → tools/list → 403 step-up → new token
 * on the same session → tool call, at the default
 * `scope_challenge_include_token_scopes: false`.
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError as UnauthorizedV1 } from "@modelcontextprotocol/sdk/client/auth.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedV2,
} from "@modelcontextprotocol/client";
import { withMcpFixture } from "./_mcp_fixture.ts";
import { CLIENT_ID, type OidcServer, REDIRECT_URI, startOidcServer } from "./_oidc_server.ts";

const SCOPES = { initialize: ["mcp:connect"], tools_list: [], tools_call: ["mcp:call"] };

/** The client side of OAuth, as an MCP host implements it (both SDKs take this shape). */
class HostOAuthProvider {
  #tokens: { access_token: string; token_type: string; scope?: string } | undefined;
  #verifier = "";
  /** The redirect back from the authorization server, waiting for `finishAuth`. */
  pending: URL | null = null;
  authorizations = 0;
  readonly #server: OidcServer;
  constructor(server: OidcServer) {
    this.#server = server;
  }
  get redirectUrl(): string {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: "interop",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return { client_id: CLIENT_ID };
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: { access_token: string; token_type: string; scope?: string }) {
    this.#tokens = tokens;
  }
  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizations++;
    this.pending = await this.#server.authorize(url); // the user consents
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
}

interface Outcome {
  readonly completed: boolean;
  readonly authorizations: number;
  readonly sessions: readonly string[];
  readonly issuedScopes: readonly string[];
  readonly error?: string;
}

/** Runs `op`; on UnauthorizedError finishes the pending authorization and retries, at most `rounds` times. */
async function withReauth<T>(
  op: () => Promise<T>,
  options: {
    provider: HostOAuthProvider;
    finish: (redirect: URL) => Promise<void>;
    isUnauthorized: (error: unknown) => boolean;
    rounds: number;
  },
): Promise<T> {
  for (let round = 0;; round++) {
    try {
      return await op();
    } catch (error) {
      const redirect = options.provider.pending;
      if (!options.isUnauthorized(error) || redirect === null || round >= options.rounds) {
        throw error;
      }
      options.provider.pending = null;
      await options.finish(redirect);
    }
  }
}

function recordingFetch(sessions: string[]): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const session = new Headers(init?.headers).get("mcp-session-id");
    if (session !== null && sessions.at(-1) !== session) sessions.push(session);
    return await fetch(input, init);
  }) as typeof fetch;
}

/** What both SDK versions' clients offer the interop run. */
interface ToolClient {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(request: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Lists the tools and calls get_hello (re-authorizing as the client asks),
 * then closes the client: the run's outcome.
 */
async function listAndCall(
  client: ToolClient,
  run: {
    provider: HostOAuthProvider;
    server: OidcServer;
    sessions: string[];
    finish: (redirect: URL) => Promise<void>;
    isUnauthorized: (error: unknown) => boolean;
  },
): Promise<Outcome> {
  const { provider, server, sessions } = run;
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t: { name: string }) => t.name === "execute_operation_get_hello"));
    const result = await withReauth(
      () => client.callTool({ name: "execute_operation_get_hello", arguments: {} }),
      { provider, finish: run.finish, isUnauthorized: run.isUnauthorized, rounds: 4 },
    );
    assert.match(JSON.stringify((result as { content: unknown }).content), /Hello!/);
    return {
      completed: true,
      authorizations: provider.authorizations,
      sessions,
      issuedScopes: [...server.issuedScopes],
    };
  } catch (error) {
    return {
      completed: false,
      authorizations: provider.authorizations,
      sessions,
      issuedScopes: [...server.issuedScopes],
      error: String(error),
    };
  } finally {
    await client.close();
  }
}

async function runV1(server: OidcServer, mcpUrl: string): Promise<Outcome> {
  const provider = new HostOAuthProvider(server);
  const sessions: string[] = [];
  const make = () =>
    new TransportV1(
      new URL(mcpUrl),
      {
        authProvider: provider,
        fetch: recordingFetch(sessions),
      } as ConstructorParameters<typeof TransportV1>[1],
    );
  // The first connect meets the 401, authorizes, and the host reconnects (SDK v1's pattern).
  let transport = make();
  let client = new ClientV1({ name: "interop-v1", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    assert.ok(error instanceof UnauthorizedV1, String(error));
    await transport.finishAuth(provider.pending!.searchParams.get("code")!);
    provider.pending = null;
    transport = make();
    client = new ClientV1({ name: "interop-v1", version: "1.0.0" });
    await client.connect(transport);
  }
  return await listAndCall(client, {
    provider,
    server,
    sessions,
    finish: (redirect) => transport.finishAuth(redirect.searchParams.get("code")!),
    isUnauthorized: (e) => e instanceof UnauthorizedV1,
  });
}

async function runV2(server: OidcServer, mcpUrl: string): Promise<Outcome> {
  const provider = new HostOAuthProvider(server);
  const sessions: string[] = [];
  const make = () =>
    new TransportV2(
      new URL(mcpUrl),
      {
        authProvider: provider,
        fetch: recordingFetch(sessions),
      } as unknown as ConstructorParameters<typeof TransportV2>[1],
    );
  const options = { versionNegotiation: { mode: "legacy" as const } };
  let transport = make();
  let client = new ClientV2({ name: "interop-v2", version: "2.0.0" }, options);
  try {
    await client.connect(transport);
  } catch (error) {
    assert.ok(error instanceof UnauthorizedV2, String(error));
    await transport.finishAuth(provider.pending!.searchParams);
    provider.pending = null;
    transport = make();
    client = new ClientV2({ name: "interop-v2", version: "2.0.0" }, options);
    await client.connect(transport);
  }
  return await listAndCall(client, {
    provider,
    server,
    sessions,
    finish: (redirect) => transport.finishAuth(redirect.searchParams),
    isUnauthorized: (e) => e instanceof UnauthorizedV2,
  });
}

async function withInterop(
  run: (server: OidcServer, mcpUrl: string) => Promise<void>,
  options: { readonly includeTokenScopes?: boolean } = {},
) {
  const server = await startOidcServer({ scopes: ["mcp:connect", "mcp:list", "mcp:call"] });
  try {
    await withMcpFixture({
      scopes: SCOPES,
      ...(options.includeTokenScopes ? { includeTokenScopes: true } : {}),
      authorizationServer: { issuer: server.issuer, jwksUri: server.jwksUri },
      source: { required_typ: "at+jwt", issuer: server.issuer },
    }, (f) => run(server, f.mcpUrl));
  } finally {
    await server.close();
  }
}

Deno.test("issue 18 interop: SDK v2 + oidc-provider: 401 → metadata → PKCE token → initialize → tools/list → 403 step-up → new token on the same session → call succeeds", async () => {
  await withInterop(async (server, mcpUrl) => {
    const outcome = await runV2(server, mcpUrl);
    console.log("SDK v2 (@modelcontextprotocol/client 2.4.0):", JSON.stringify(outcome));
    assert.ok(outcome.completed, outcome.error);
    assert.equal(outcome.authorizations, 2, "one authorization, one step-up");
    assert.equal(new Set(outcome.sessions).size, 1, "the step-up kept the session");
    assert.deepEqual(outcome.issuedScopes, ["mcp:connect", "mcp:connect mcp:call"]);
  });
});

Deno.test("issue 18 interop: SDK v1 + oidc-provider at the default strict challenge: the step-up does not complete (v1 does not accumulate scopes)", async () => {
  await withInterop(async (server, mcpUrl) => {
    const outcome = await runV1(server, mcpUrl);
    console.log("SDK v1 (@modelcontextprotocol/sdk 1.32.2):", JSON.stringify(outcome));
    assert.equal(outcome.completed, false, "v1 asks only for the challenged scope and loops");
    assert.ok(outcome.issuedScopes.includes("mcp:call"), "it got a token with the new scope only");
  });
});

Deno.test("issue 18 interop: SDK v1 completes the step-up on the same session with scope_challenge_include_token_scopes: true (the documented workaround)", async () => {
  await withInterop(async (server, mcpUrl) => {
    const outcome = await runV1(server, mcpUrl);
    console.log("SDK v1, include_token_scopes:", JSON.stringify(outcome));
    assert.ok(outcome.completed, outcome.error);
    assert.equal(new Set(outcome.sessions).size, 1, "the step-up kept the session");
    assert.deepEqual(outcome.issuedScopes, ["mcp:connect", "mcp:connect mcp:call"]);
  }, { includeTokenScopes: true });
});
