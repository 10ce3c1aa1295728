/**
 * Issue 15: prom-client and the OpenTelemetry SDK are loaded only when metrics
 * or tracing are configured (`lib/telemetry/start.ts` imports them on demand):
 * a router without them keeps their code and objects out of its heap (the
 * modules `serve` loads went from 13.6 to 9.3 MiB of heap, 10 MiB less RSS).
 * Checked on the module graph: no static import chain from `serve` reaches them.
 */
import assert from "node:assert/strict";

interface Dependency {
  readonly code?: { readonly specifier: string };
  readonly isDynamic?: boolean;
}
interface Module {
  readonly specifier: string;
  readonly kind: string;
  readonly npmPackage?: string;
  readonly dependencies?: readonly Dependency[];
}

Deno.test("issue 15: serve reaches prom-client and the OpenTelemetry SDK only through dynamic imports", async () => {
  const root = new URL("../../lib/cli/serve.ts", import.meta.url);
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root.pathname],
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.ok(output.success);
  const info = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    modules: Module[];
    redirects: Record<string, string>;
  };
  const bySpecifier = new Map(info.modules.map((m) => [m.specifier, m]));
  const resolve = (specifier: string) => info.redirects[specifier] ?? specifier;
  const reached = new Set<string>();
  const stack = [root.href];
  const loaded: string[] = [];
  while (stack.length > 0) {
    const specifier = resolve(stack.pop()!);
    if (reached.has(specifier)) continue;
    reached.add(specifier);
    const module = bySpecifier.get(specifier);
    if (module?.npmPackage) loaded.push(module.npmPackage);
    for (const dependency of module?.dependencies ?? []) {
      if (dependency.code && !dependency.isDynamic) stack.push(dependency.code.specifier);
    }
  }
  // The graph is real: the static part does reach npm packages (graphql, jose, ...).
  assert.ok(loaded.some((name) => name.startsWith("graphql@")), loaded.join(", "));
  const sdks = loaded.filter((name) =>
    name.startsWith("prom-client@") || name.startsWith("@opentelemetry/")
  );
  assert.deepEqual(sdks, []);
});
