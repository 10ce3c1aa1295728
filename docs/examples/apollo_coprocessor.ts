/**
 * The coprocessor of docs/extending.md, written against Apollo Router's
 * documented JSON (version 1) only: a plain Deno HTTP server that knows
 * nothing of GW (the e2e tests run it against the router). It
 *
 * - `RouterRequest`: answers `{"control": {"break": 401}, "body": {errors}}`
 *   unless the client sent `x-api-key: let-me-in`;
 * - `SupergraphRequest`: breaks with 403 for the operation `Blocked*`, and
 *   grants the `@policy` names listed in the client's `x-grant` header in
 *   `apollo::authorization::required_policies`;
 * - `SubgraphRequest`: adds `x-coprocessor: seen` to the subgraph request's
 *   headers;
 * - sleeps past the router's timeout when the client sent `x-slow: 1`.
 *
 * Every payload it receives is kept, to check the protocol. Run it alone with
 * `deno run -A docs/examples/apollo_coprocessor.ts` (it prints its URL).
 *
 * @module
 */

/** A payload as the router sent it. */
export type Payload = Record<string, unknown> & {
  readonly stage: string;
  readonly headers?: Record<string, string[]>;
  readonly context?: { entries: Record<string, unknown> };
};

/** A running coprocessor. */
export interface Coprocessor {
  readonly url: string;
  /** Payloads received, in order. */
  readonly received: Payload[];
  close(): Promise<void>;
}

const header = (payload: Payload, name: string): string | undefined => payload.headers?.[name]?.[0];

function answer(payload: Payload): Record<string, unknown> | Promise<Record<string, unknown>> {
  switch (payload.stage) {
    case "RouterRequest": {
      if (header(payload, "x-slow") === "1") {
        return new Promise((resolve) => setTimeout(() => resolve(payload), 1_000));
      }
      if (header(payload, "x-api-key") !== "let-me-in") {
        return {
          ...payload,
          control: { break: 401 },
          body: {
            errors: [{
              message: "Not authenticated: send x-api-key",
              extensions: { code: "ERR_UNAUTHENTICATED" },
            }],
          },
        };
      }
      return payload;
    }
    case "SupergraphRequest": {
      const body = payload.body as { operationName?: string | null } | undefined;
      if (body?.operationName?.startsWith("Blocked")) {
        return {
          ...payload,
          control: { break: 403 },
          body: {
            errors: [{
              message: `The coprocessor refuses ${body.operationName}`,
              extensions: { code: "ERR_BLOCKED" },
            }],
          },
        };
      }
      const entries = { ...payload.context?.entries };
      const key = "apollo::authorization::required_policies";
      const required = entries[key] as Record<string, boolean> | undefined;
      if (required !== undefined) {
        const granted = (header(payload, "x-grant") ?? "").split(",").filter(Boolean);
        entries[key] = Object.fromEntries(
          Object.keys(required).map((policy) => [policy, granted.includes(policy)]),
        );
      }
      return { ...payload, context: { entries } };
    }
    case "SubgraphRequest":
      return { ...payload, headers: { ...payload.headers, "x-coprocessor": ["seen"] } };
    default:
      return payload;
  }
}

/**
 * Starts the coprocessor on a free loopback port.
 * @returns The running coprocessor.
 */
export function startCoprocessor(): Coprocessor {
  const received: Payload[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const payload = await request.json() as Payload;
    received.push(payload);
    return Response.json(await answer(payload));
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    received,
    close: () => server.shutdown(),
  };
}

if (import.meta.main) {
  const coprocessor = startCoprocessor();
  console.log(coprocessor.url);
}
