/**
 * A coprocessor that answers every stage `continue` with what it was sent
 * (Apollo's protocol), run as its own process so the router's CPU is measured
 * alone. Prints its URL on stdout.
 *
 * @module
 */
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
  return new Response(await request.text(), { headers: { "content-type": "application/json" } });
});
console.log(`http://127.0.0.1:${server.addr.port}/`);
