/**
 * A real OAuth 2.1 authorization server for interop tests: npm `oidc-provider`
 * on 127.0.0.1 with one pre-registered public client (authorization code +
 * PKCE), resource indicators (RFC 8707) and RFC 9068 JWT access tokens
 * (ES256, `typ: at+jwt`, `aud` = the resource). Login and consent are
 * granted automatically; {@linkcode OidcServer.authorize} plays the browser
 * (cookies, redirects) and returns the redirect back to the client.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

/** The pre-registered client's redirect URI (never served: the browser stops there). */
export const REDIRECT_URI = "http://127.0.0.1:1/callback";
/** The pre-registered public client. */
export const CLIENT_ID = "mcp-interop-client";

/** A running authorization server. */
export interface OidcServer {
  readonly issuer: string;
  readonly jwksUri: string;
  /** Scopes granted in the access tokens it issued, in order. */
  readonly issuedScopes: string[];
  /**
   * Follows an authorization URL like a browser whose user consents to
   * everything asked: returns the redirect to {@linkcode REDIRECT_URI} (with `code`).
   */
  authorize(url: URL | string): Promise<URL>;
  close(): Promise<void>;
}

/**
 * Starts the server.
 * @param options The scopes its resource servers accept.
 * @returns The server.
 */
export async function startOidcServer(
  options: { readonly scopes: readonly string[] },
): Promise<OidcServer> {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const signing = { ...(await exportJWK(privateKey)), kid: "as-1", alg: "ES256", use: "sig" };
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const issuedScopes: string[] = [];
  const provider = new Provider(issuer, {
    clients: [{
      client_id: CLIENT_ID,
      token_endpoint_auth_method: "none",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      id_token_signed_response_alg: "ES256",
    }],
    jwks: { keys: [signing] },
    scopes: ["openid", ...options.scopes],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: options.scopes.join(" "),
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "ES256" } },
        }),
      },
    },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
    },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
  });
  provider.on("access_token.issued", (token: { scope?: string }) => {
    issuedScopes.push(token.scope ?? "");
  });
  const callback = provider.callback();
  server.on("request", async (req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.startsWith("/interaction/")) return callback(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      const accountId = "user-1";
      const prompt = details.prompt as {
        name: string;
        details: { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
      };
      if (prompt.name === "login") {
        await provider.interactionFinished(req, res, { login: { accountId } }, {
          mergeWithLastSubmission: false,
        });
        return;
      }
      const params = details.params as { client_id: string };
      const grant = details.grantId
        ? (await provider.Grant.find(details.grantId))!
        : new provider.Grant({ accountId, clientId: params.client_id });
      if (prompt.details.missingOIDCScope) {
        grant.addOIDCScope(prompt.details.missingOIDCScope.join(" "));
      }
      for (const [resource, scopes] of Object.entries(prompt.details.missingResourceScopes ?? {})) {
        grant.addResourceScope(resource, scopes.join(" "));
      }
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { consent: { grantId } }, {
        mergeWithLastSubmission: true,
      });
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  });

  async function authorize(start: URL | string): Promise<URL> {
    const cookies = new Map<string, string>();
    let url = new URL(start);
    for (let hop = 0; hop < 20; hop++) {
      if (url.href.startsWith(REDIRECT_URI)) return url;
      const response = await fetch(url, {
        redirect: "manual",
        headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(";");
        const eq = pair!.indexOf("=");
        cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
      }
      const location = response.headers.get("location");
      const text = await response.text();
      if (location === null) {
        throw new Error(`Authorization stopped at ${url.pathname}: ${response.status} ${text}`);
      }
      url = new URL(location, url);
    }
    throw new Error("Too many redirects");
  }

  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    issuedScopes,
    authorize,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
