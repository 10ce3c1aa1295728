/**
 * Runs a module's code in a worker and returns the first message it posts,
 * or fails after `ms`: a test of a bound on synchronous work (an exponential
 * walk, a backtracking match) fails there if the bound is gone, instead of
 * holding the test process for hours.
 *
 * @module
 */

/**
 * Runs `code` (JavaScript; it may import modules by URL) in a worker.
 * @param code The module's source; it posts one message with the outcome.
 * @param ms How long to wait for it.
 * @returns The posted message's data.
 */
export async function inWorker(code: string, ms: number): Promise<unknown> {
  const url = URL.createObjectURL(new Blob([code], { type: "application/javascript" }));
  const worker = new Worker(url, { type: "module" });
  try {
    return await new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      worker.onmessage = (event) => {
        clearTimeout(timer);
        resolve(event.data);
      };
      worker.onerror = (event) => {
        clearTimeout(timer);
        reject(new Error(event.message));
      };
    });
  } finally {
    worker.terminate();
    URL.revokeObjectURL(url);
  }
}
