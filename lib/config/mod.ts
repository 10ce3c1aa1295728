/**
 * Configuration: YAML + environment → validated, typed, immutable
 * {@linkcode Config}. {@linkcode parseConfig} is pure; {@linkcode loadConfig}
 * is the I/O edge.
 *
 * @module
 */
export type * from "./types.ts";
export {
  checkConfig,
  type ConfigCheck,
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
  machineName,
  parseConfigYaml,
  resolveConfigPath,
  validateConfigFile,
} from "./load.ts";
export {
  isWildcardHost,
  type ListenAddress,
  listenUrl,
  parseListenAddr,
  withScheme,
} from "./_values.ts";
export {
  ASYMMETRIC_ALGORITHMS,
  DEFAULT_UNMASKED_TRACE_HEADERS,
  SYMMETRIC_ALGORITHMS,
} from "./_schema.ts";
export { type ConfigWarning, type StartupWarningOptions, startupWarnings } from "./warnings.ts";
export { configJsonSchema } from "./reference.ts";
export { readKeyFile } from "./read_key_file.ts";
