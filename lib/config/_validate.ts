/**
 * Cross-key validation of a read configuration (the rules one leaf's schema
 * cannot express), and the error helpers `parse.ts` shares with it.
 *
 * @module
 */
import { RouterError } from "../errors.ts";
import { ASYMMETRIC_ALGORITHMS, SYMMETRIC_ALGORITHMS } from "./_schema.ts";
import { parseListenAddr } from "./_values.ts";
import { parseCidr } from "../request/mod.ts";

type Raw = Record<string, unknown>;

/** Throws the config error naming the key path (and its env variable). */
export function fail(path: string, reason: string, envName?: string): never {
  const where = envName === undefined ? `"${path}"` : `"${path}" (env ${envName})`;
  throw new RouterError("CONFIG_INVALID", `Cannot read ${where}: ${reason}`, {
    details: envName === undefined ? { path } : { path, env: envName },
  });
}

/** True for a YAML mapping (a plain object). */
export function isMapping(value: unknown): value is Raw {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The nested mapping at `keys` (already read, so it exists). */
export function section(out: Raw, ...keys: string[]): Raw {
  let current = out;
  for (const key of keys) current = current[key] as Raw;
  return current;
}

/** Throws the error of an unreadable `listen_addr`. */
export function failListenAddr(value: string): never {
  fail("listen_addr", `expected "host:port" with a port from 0 to 65535, got "${value}"`);
}

/** Every `jwks` list of the configuration, with its key path. */
export function jwksLists(out: Raw): [string, Raw[]][] {
  return [
    ["authentication.jwt.jwks", section(out, "authentication", "jwt").jwks as Raw[]],
    ["mcp.oauth.jwks", section(out, "mcp", "oauth").jwks as Raw[]],
  ];
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/** The largest `security.parser_limits.approximate_depth_limit` (1 000 levels recurse safely). */
const MAX_APPROXIMATE_DEPTH_LIMIT = 1000;

/**
 * Cross-key rules the schema cannot say (impossible combinations, URL and
 * name formats); each failure names the key path. Throws the first.
 */
export function validate(out: Raw): void {
  for (const rule of validationRules(out)) rule();
}

/**
 * The cross-key rules of {@linkcode validate}, each on its own (so that
 * `checkConfig` can report every broken one).
 */
export function validationRules(out: Raw): (() => void)[] {
  const mcp = () => section(out, "mcp");
  const oauth = () => section(out, "mcp", "oauth");
  const sharedSources = () => (section(out, "authentication", "jwt").jwks as Raw[]).length;
  return [
    () => validateServerTls(section(out, "tls", "server")),
    () => {
      const source = section(out, "supergraph_source");
      if (source.kind === "url" && !isHttpUrl(String(source.url))) {
        fail(
          "supergraph_source.url",
          `expected an http(s) URL with kind "url", got "${source.url}"`,
        );
      }
      if (source.kind === "hive_cdn") {
        if (!isHttpUrl(String(source.endpoint))) {
          fail(
            "supergraph_source.endpoint",
            `expected the Hive CDN's http(s) endpoint with kind "hive_cdn", got "${source.endpoint}"`,
          );
        }
        if (String(source.key) === "") {
          fail("supergraph_source.key", 'required with kind "hive_cdn" (the CDN access key)');
        }
      }
      (source.endpoints as string[]).forEach((url, i) => {
        if (!isHttpUrl(url)) {
          fail(`supergraph_source.endpoints[${i}]`, `expected an http(s) URL, got "${url}"`);
        }
      });
    },
    () => {
      for (
        const [name, tls] of Object.entries(section(out, "tls").subgraphs as Record<string, Raw>)
      ) {
        if ((String(tls.cert_file) === "") !== (String(tls.key_file) === "")) {
          const [missing, given] = String(tls.cert_file) === ""
            ? ["cert_file", "key_file"]
            : ["key_file", "cert_file"];
          fail(
            `tls.subgraphs.${name}.${missing}`,
            `required with "tls.subgraphs.${name}.${given}"`,
          );
        }
      }
    },
    () => {
      if (parseListenAddr(String(out.listen_addr)) === undefined) {
        failListenAddr(String(out.listen_addr));
      }
    },
    () => {
      const graphqlPath = String(out.graphql_path);
      const mcpPath = String(mcp().path);
      for (const [path, value] of [["graphql_path", graphqlPath], ["mcp.path", mcpPath]]) {
        if (!/^\/[A-Za-z0-9._~\/-]*$/.test(value ?? "")) {
          fail(path ?? "", `expected a URL path starting with "/", got "${value}"`);
        }
      }
      if (mcp().enabled === true && mcpPath === graphqlPath) {
        fail("mcp.path", `must differ from "graphql_path" (both are "${graphqlPath}")`);
      }
    },
    () => {
      const server = section(out, "mcp", "server");
      // Underived only when listen_addr is unreadable (reported on its own).
      if (server.base_url === undefined) return;
      const baseUrl = String(server.base_url);
      if (!isHttpUrl(baseUrl)) {
        fail("mcp.server.base_url", `expected an http(s) URL, got "${baseUrl}"`);
      }
      server.base_url = baseUrl.replace(/\/+$/, "");
    },
    () =>
      (oauth().authorization_server_urls as string[]).forEach((url, i) => {
        if (!isHttpUrl(url)) {
          fail(
            `mcp.oauth.authorization_server_urls[${i}]`,
            `expected an http(s) URL, got "${url}"`,
          );
        }
      }),
    ...jwksLists(out).flatMap(([sourcesPath, sources]) =>
      sources.map((source, i) => () => validateJwks(source, `${sourcesPath}[${i}]`))
    ),
    () => {
      const ownSources = (oauth().jwks as Raw[]).length;
      if (
        mcp().enabled === true && oauth().enabled === true && ownSources + sharedSources() === 0
      ) {
        fail(
          "mcp.oauth.enabled",
          'OAuth needs at least one key source in "mcp.oauth.jwks" or "authentication.jwt.jwks"',
        );
      }
    },
    () => {
      if (section(out, "authorization").require_authentication === true && sharedSources() === 0) {
        fail(
          "authorization.require_authentication",
          'authentication needs at least one key source in "authentication.jwt.jwks"',
        );
      }
    },
    () => validateConnect(section(out, "connect_rpc")),
    () => {
      const cors = section(out, "cors");
      if (
        cors.enabled === true && cors.allow_credentials === true &&
        (cors.allow_origins as string[]).includes("*")
      ) {
        fail(
          "cors.allow_credentials",
          'credentials cannot be allowed with the origin "*"; list the allowed origins in "cors.allow_origins"',
        );
      }
    },
    () => {
      const headers = section(out, "headers");
      validateRules(section(headers, "all").request as Raw[], "headers.all.request");
      validateResponseRules(section(headers, "all").response as Raw[], "headers.all.response");
      for (const [name, rules] of Object.entries(headers.subgraphs as Record<string, Raw>)) {
        validateRules(rules.request as Raw[], `headers.subgraphs.${name}.request`);
        validateResponseRules(rules.response as Raw[], `headers.subgraphs.${name}.response`);
      }
    },
    () => {
      // Issue 14: the depth limit also bounds every recursive walk over a client document.
      const depthLimit = Number(section(out, "security", "parser_limits").approximate_depth_limit);
      if (depthLimit > MAX_APPROXIMATE_DEPTH_LIMIT) {
        fail(
          "security.parser_limits.approximate_depth_limit",
          `expected at most ${MAX_APPROXIMATE_DEPTH_LIMIT} (it bounds the router's recursive walks), got ${depthLimit}`,
        );
      }
    },
    () => validateSharedState(out),
    () => {
      const names = new Set<string>();
      (out.subgraphs as Raw[]).forEach((subgraph, i) => {
        const name = String(subgraph.name);
        if (names.has(name)) fail(`subgraphs[${i}].name`, `duplicate subgraph name "${name}"`);
        names.add(name);
        if (!isHttpUrl(String(subgraph.routing_url))) {
          fail(
            `subgraphs[${i}].routing_url`,
            `expected an http(s) URL, got "${subgraph.routing_url}"`,
          );
        }
      });
    },
  ];
}

function validateConnect(connect: Raw): void {
  if (connect.enabled !== true) return;
  const service = String(connect.service);
  if (!/^[A-Z][A-Za-z0-9]*Service$/.test(service)) {
    fail(
      "connect_rpc.service",
      `expected a PascalCase name ending in "Service" (buf lint SERVICE_SUFFIX), got "${service}"`,
    );
  }
  const pkg = String(connect.package);
  if (!/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\.v\d+((alpha|beta|test)\d*)?$/.test(pkg)) {
    fail(
      "connect_rpc.package",
      `expected a lower-case dotted package ending in a version like "v1" (buf lint PACKAGE_VERSION_SUFFIX), got "${pkg}"`,
    );
  }
}

function validateJwks(source: Raw, path: string): void {
  const kinds = (["url", "file", "secret"] as const).filter((key) => source[key] !== undefined);
  if (kinds.length !== 1) {
    fail(
      path,
      kinds.length === 0
        ? 'a key source needs one of "url", "file" or "secret"'
        : `a key source takes exactly one of "url", "file" or "secret", got ${
          kinds.map((k) => `"${k}"`).join(" and ")
        }`,
    );
  }
  const algorithms = source.algorithms as string[];
  const known = [...ASYMMETRIC_ALGORITHMS, ...SYMMETRIC_ALGORITHMS];
  algorithms.forEach((algorithm, i) => {
    if (!known.includes(algorithm)) {
      fail(
        `${path}.algorithms[${i}]`,
        `unsupported algorithm "${algorithm}" (known: ${known.join(", ")})`,
      );
    }
  });
  if (source.secret !== undefined) {
    if (source.symmetric_algorithm === undefined) {
      fail(
        `${path}.symmetric_algorithm`,
        `a "secret" key source needs "symmetric_algorithm" (one of ${
          SYMMETRIC_ALGORITHMS.join(", ")
        })`,
      );
    }
    const asymmetric = algorithms.find((a) => !SYMMETRIC_ALGORITHMS.includes(a));
    if (asymmetric !== undefined) {
      fail(`${path}.algorithms`, `"${asymmetric}" cannot verify with a shared "secret"`);
    }
    if (source.secret === "") fail(`${path}.secret`, "expected a non-empty secret");
  } else {
    if (source.symmetric_algorithm !== undefined) {
      fail(`${path}.symmetric_algorithm`, 'only a "secret" key source takes "symmetric_algorithm"');
    }
    const symmetric = algorithms.find((a) => SYMMETRIC_ALGORITHMS.includes(a));
    if (symmetric !== undefined) {
      fail(
        `${path}.algorithms`,
        `"${symmetric}" is a shared-secret algorithm and cannot be used with a "${
          kinds[0]
        }" key source`,
      );
    }
    if (source.url !== undefined && !isHttpUrl(String(source.url))) {
      fail(`${path}.url`, `expected an http(s) URL, got "${source.url}"`);
    }
  }
}

function validateRules(rules: Raw[], path: string): void {
  rules.forEach((rule, i) => {
    const at = `${path}[${i}]`;
    const present = (key: string) => rule[key] !== undefined;
    const only = (allowed: string[]) => {
      for (const key of ["named", "matching", "rename", "default", "name", "value"]) {
        if (present(key) && !allowed.includes(key)) {
          fail(`${at}.${key}`, `not allowed in a "${rule.op}" rule`);
        }
      }
    };
    if (rule.op === undefined) fail(`${at}.op`, 'required, expected one of "propagate", "set"');
    if (rule.op === "set") {
      if (!present("name")) fail(`${at}.name`, 'a "set" rule needs "name"');
      if (!present("value")) fail(`${at}.value`, 'a "set" rule needs "value"');
      only(["name", "value"]);
      return;
    }
    if (present("named") === present("matching")) {
      fail(at, 'a "propagate" rule takes exactly one of "named" or "matching"');
    }
    if (present("matching")) {
      only(["matching"]);
      try {
        new RegExp(String(rule.matching), "i");
      } catch (error) {
        fail(`${at}.matching`, `invalid regular expression: ${(error as Error).message}`);
      }
    } else {
      only(["named", "rename", "default"]);
    }
  });
}

/**
 * Headers of the router's own responses, which a response rule cannot take
 * from a subgraph (as `lib/engine/fetch/response_headers.ts` enforces).
 */
const ROUTER_RESPONSE_HEADER =
  /^(connection|keep-alive|proxy-authenticate|proxy-connection|te|trailer|transfer-encoding|upgrade|content-length|content-type|content-encoding|date|server|x-request-id|access-control-.*|ratelimit-.*)$/i;

/** Response rules: the request rules' shape, and never a header the router answers itself. */
function validateResponseRules(rules: Raw[] | undefined, path: string): void {
  if (rules === undefined) return;
  validateRules(rules, path);
  rules.forEach((rule, i) => {
    for (const key of ["named", "rename", "name"]) {
      const value = rule[key];
      if (typeof value === "string" && ROUTER_RESPONSE_HEADER.test(value)) {
        fail(
          `${path}[${i}].${key}`,
          `"${value}" is a header the router sets on its own responses; a response rule cannot take it from a subgraph`,
        );
      }
    }
  });
}

/** `rate_limit.key`: `client_ip`, `token_subject` or `header:<Name>`. */
const RATE_LIMIT_KEY = /^(client_ip|token_subject|header:[!#$%&'*+.^_`|~0-9A-Za-z-]+)$/;

function validateSharedState(out: Raw): void {
  const ids = new Set<string>();
  (section(out, "storage_providers").redis as Raw[]).forEach((provider, i) => {
    const id = String(provider.id);
    if (id === "") fail(`storage_providers.redis[${i}].id`, "expected a non-empty id");
    if (ids.has(id)) fail(`storage_providers.redis[${i}].id`, `duplicate provider id "${id}"`);
    ids.add(id);
    const urls = provider.urls as string[];
    if (urls.length === 0) fail(`storage_providers.redis[${i}].urls`, "expected at least one URL");
    for (const url of urls) {
      if (!/^rediss?:\/\/[^\s]+$/.test(url)) {
        fail(
          `storage_providers.redis[${i}].urls`,
          `expected redis:// or rediss:// URLs, got "${url}"`,
        );
      }
    }
  });
  for (const feature of ["automatic_persisted_queries", "rate_limit", "entity_cache"]) {
    const id = String(section(out, feature, "storage").provider_id);
    if (id !== "" && !ids.has(id)) {
      fail(`${feature}.storage.provider_id`, `no storage_providers.redis entry has id "${id}"`);
    }
  }
  const rateLimit = section(out, "rate_limit");
  if (!RATE_LIMIT_KEY.test(String(rateLimit.key))) {
    fail(
      "rate_limit.key",
      `expected client_ip, token_subject or header:<Name>, got "${rateLimit.key}"`,
    );
  }
  const entityCache = section(out, "entity_cache");
  const privateId = String(entityCache.private_id);
  if (privateId !== "" && (privateId === "client_ip" || !RATE_LIMIT_KEY.test(privateId))) {
    fail(
      "entity_cache.private_id",
      `expected token_subject or header:<Name> (or empty), got "${privateId}"`,
    );
  }
  const invalidation = section(out, "entity_cache", "invalidation");
  if (invalidation.enabled === true) {
    if (String(invalidation.shared_key).length < 16) {
      fail(
        "entity_cache.invalidation.shared_key",
        "expected at least 16 characters when the endpoint is enabled",
      );
    }
    if (!String(invalidation.path).startsWith("/")) {
      fail("entity_cache.invalidation.path", `expected a path starting with "/"`);
    }
    const taken = [
      String(out.graphql_path),
      String(section(out, "mcp").path),
      "/health/live",
      "/health/ready",
    ];
    if (taken.includes(String(invalidation.path))) {
      fail(
        "entity_cache.invalidation.path",
        `"${invalidation.path}" is already the path of another endpoint`,
      );
    }
  }
  for (const cidr of rateLimit.trusted_proxies as string[]) {
    if (parseCidr(cidr) === null) {
      fail("rate_limit.trusted_proxies", `expected IP addresses or CIDR blocks, got "${cidr}"`);
    }
  }
}

/** `tls.server`: a certificate comes with its key; client certificates need their authorities. */
function validateServerTls(server: Raw): void {
  const cert = String(server.cert_file);
  const key = String(server.key_file);
  if ((cert === "") !== (key === "")) {
    const [missing, given] = cert === "" ? ["cert_file", "key_file"] : ["key_file", "cert_file"];
    fail(`tls.server.${missing}`, `required with "tls.server.${given}"`);
  }
  const ca = String(server.client_ca_file);
  if (ca !== "" && cert === "") {
    fail("tls.server.client_ca_file", 'needs "tls.server.cert_file" and "tls.server.key_file"');
  }
  const required = server.require_client_cert === true;
  if (required && ca === "") {
    fail("tls.server.require_client_cert", 'needs "tls.server.client_ca_file" (the authorities)');
  }
  if (ca !== "" && !required) {
    fail(
      "tls.server.client_ca_file",
      'set "tls.server.require_client_cert: true" with it: the router passes no client certificate on, so one asked for but not required would check nothing',
    );
  }
}
