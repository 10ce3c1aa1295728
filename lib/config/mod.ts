/**
 * Configuration: YAML + environment → validated, typed, immutable
 * {@linkcode Config}. {@linkcode parseConfig} is pure; {@linkcode loadConfig}
 * is the I/O edge.
 *
 * @module
 */
export type * from "./types.ts";
export {
  type ConfigEnvKey,
  configEnvKeys,
  parseConfig,
  type ParseConfigOptions,
  withBoundPort,
} from "./parse.ts";
export {
  checkFiles,
  DEFAULT_CONFIG_PATH,
  loadConfig,
  type LoadConfigOptions,
  parseConfigYaml,
  resolveConfigPath,
} from "./load.ts";
export { type ListenAddress, listenUrl, parseListenAddr } from "./_values.ts";
export {
  ASYMMETRIC_ALGORITHMS,
  DEFAULT_UNMASKED_TRACE_HEADERS,
  SYMMETRIC_ALGORITHMS,
} from "./_schema.ts";
