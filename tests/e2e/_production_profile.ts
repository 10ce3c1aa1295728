/**
 * The production profile of the e2e suites (issue 39): the settings of
 * `config.production.yaml` that change how a request is observed and answered
 * (dev mode off, `log_level: info` so access logs are written, Prometheus
 * metrics, and OTLP tracing on), so the suites run the router the way
 * operators run it, not only as a quiet dev config. What the file points at
 * outside this machine (its listen address, JWKS and authorization server
 * URLs, the MCP section, the supergraph path) and the shutdown waits are left
 * to each fixture.
 *
 * `GW_TEST_PROFILE=dev` runs the same suites with the previous quiet settings
 * (`log_level: error`: no access log, no metrics, no tracing).
 *
 * @module
 */
import { parse, stringify } from "yaml";

/** The profile the suites run with: `production` unless `GW_TEST_PROFILE=dev`. */
export const TEST_PROFILE: "production" | "dev" = Deno.env.get("GW_TEST_PROFILE") === "dev"
  ? "dev"
  : "production";

type Settings = Record<string, unknown>;

const FILE = new URL("../../config.production.yaml", import.meta.url);

/** The keys of `config.production.yaml` taken as they are. */
const TAKEN = ["dev_mode", "log_level", "playground", "introspection", "engine", "telemetry"];

/**
 * The settings of the production profile, as a config object (parseConfig's
 * input). Metrics listen on a free loopback port; spans are exported to a
 * loopback port nobody listens on (the export fails fast and is logged, as a
 * collector outage is).
 * @returns The settings (a new object on every call).
 */
export function productionSettings(): Settings {
  const file = parse(Deno.readTextFileSync(FILE)) as Settings;
  const settings: Settings = {};
  for (const key of TAKEN) if (key in file) settings[key] = structuredClone(file[key]);
  const telemetry = (settings.telemetry ?? {}) as Settings;
  const metrics = (telemetry.metrics ?? {}) as Settings;
  const prometheus = (metrics.prometheus ?? {}) as Settings;
  settings.telemetry = {
    ...telemetry,
    metrics: { ...metrics, prometheus: { ...prometheus, listen_addr: "127.0.0.1:0" } },
    tracing: {
      enabled: true,
      exporters: [{
        endpoint: `http://127.0.0.1:${closedPort()}/v1/traces`,
        export_timeout_ms: "1s",
      }],
    },
  };
  return settings;
}

/** A loopback port nobody listens on (connections to it are refused at once). */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

/** The quiet settings the suites used before the production profile. */
const DEV_SETTINGS: Settings = { log_level: "error" };

/**
 * The profile's settings merged under a fixture's own (the fixture's win, key
 * by key, objects merged deeply).
 * @param own The fixture's settings.
 * @returns The merged config object.
 */
export function withProfile(own: Settings): Settings {
  const base = TEST_PROFILE === "dev" ? structuredClone(DEV_SETTINGS) : productionSettings();
  if (own.dev_mode === true) {
    // A test of dev mode: what dev mode turns on stays on (ART, introspection,
    // the playground); access logs, metrics and tracing still observe it.
    for (const key of ["dev_mode", "engine", "playground", "introspection"]) delete base[key];
  }
  return merge(base, own);
}

/**
 * The same, for a fixture that writes YAML: the profile's settings merged
 * under the YAML text's.
 * @param yaml The fixture's config text.
 * @returns The merged config text.
 */
export function withProfileYaml(yaml: string): string {
  return stringify(withProfile((parse(yaml) ?? {}) as Settings));
}

function merge(base: Settings, own: Settings): Settings {
  const out: Settings = { ...base };
  for (const [key, value] of Object.entries(own)) {
    const under = out[key];
    out[key] = isObject(under) && isObject(value) ? merge(under, value) : value;
  }
  return out;
}

function isObject(value: unknown): value is Settings {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
