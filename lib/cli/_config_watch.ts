/**
 * File watching for `startRouter` (`serve.ts`): the folders of the
 * config, supergraph and manifest files watched flat (the config folder may be
 * a whole repository), `operations_dir` deep, the certificate's folders apart;
 * folders, not files, since editors replace files by rename; events filtered
 * by path and debounced.
 *
 * @module
 */
import { dirname } from "node:path";

/** What to watch: absolute paths. */
export interface WatchTargets {
  /** The config, supergraph and manifest files (their folders are watched flat). */
  readonly files: readonly string[];
  /** `operations_dir` (watched deep, `.graphql` files only). */
  readonly operationsDir: string;
  /** The certificate's files (`tls.server`): a change re-reads the certificate only. */
  readonly tlsFiles: readonly string[];
}

/** A watch that follows its targets as the config changes. */
export interface ConfigWatch {
  /** Watches these targets (nothing changes when they are the ones watched). */
  update(targets: WatchTargets): void;
  /** Stops watching; a debounced change pending is dropped. */
  close(): void;
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Watches the router's files: `changed` after a change to the config,
 * supergraph, manifests or operations, `tlsChanged` after one to the
 * certificate's files, each `debounceMs` after the last event.
 *
 * @example Nothing is watched until targets are given
 * ```ts
 * import assert from "node:assert/strict";
 * import { watchConfigFiles } from "./_config_watch.ts";
 * let changes = 0;
 * const watch = watchConfigFiles({ debounceMs: 10, changed: () => changes++, tlsChanged: () => {} });
 * watch.update({ files: [], operationsDir: "/nonexistent", tlsFiles: [] });
 * watch.close();
 * assert.equal(changes, 0);
 * ```
 * @param hooks The debounce and what a change calls.
 * @returns The watch.
 */
export function watchConfigFiles(hooks: {
  readonly debounceMs: number;
  readonly changed: () => void;
  readonly tlsChanged: () => void;
}): ConfigWatch {
  let watchers: Deno.FsWatcher[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let tlsTimer: ReturnType<typeof setTimeout> | undefined;
  let watchedKey: string | null = null;
  const watch = (
    paths: string[],
    recursive: boolean,
    matches: (path: string) => boolean,
    tlsOnly = false,
  ): void => {
    if (paths.length === 0) return;
    const watcher = Deno.watchFs(paths, { recursive });
    watchers.push(watcher);
    (async () => {
      try {
        for await (const event of watcher) {
          if (!event.paths.some(matches)) continue;
          if (tlsOnly) {
            // A certificate's files: only the certificate is re-read (subscriptions stay).
            clearTimeout(tlsTimer);
            tlsTimer = setTimeout(() => {
              tlsTimer = undefined;
              hooks.tlsChanged();
            }, hooks.debounceMs);
            continue;
          }
          clearTimeout(timer);
          timer = setTimeout(() => {
            timer = undefined;
            hooks.changed();
          }, hooks.debounceMs);
        }
      } catch {
        // The watcher was closed.
      }
    })();
  };
  const closeWatchers = () => {
    for (const watcher of watchers) watcher.close();
    watchers = [];
  };
  return {
    update(targets) {
      const { files, tlsFiles, operationsDir } = targets;
      const fileDirs = [...new Set(files.map((file) => dirname(file)))].filter(isDirectory);
      const deep = isDirectory(operationsDir) ? [operationsDir] : [];
      const tlsDirs = [...new Set(tlsFiles.map((file) => dirname(file)))].filter(isDirectory);
      const key = JSON.stringify([fileDirs, deep, files, tlsFiles]);
      if (key === watchedKey) return;
      closeWatchers();
      watchedKey = key;
      watch(fileDirs, false, (path) => files.includes(path));
      watch(tlsDirs, false, (path) => tlsFiles.includes(path), true);
      watch(
        deep,
        true,
        (path) => path.startsWith(operationsDir + "/") && path.endsWith(".graphql"),
      );
    },
    close() {
      clearTimeout(timer);
      clearTimeout(tlsTimer);
      closeWatchers();
    },
  };
}
