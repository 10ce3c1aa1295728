/**
 * A `node:tls` socket seen as the part of a `Deno.Conn` the connection guard's
 * relay uses (`read`, `write`, `close`): the guard terminates TLS with
 * `node:tls` (which, unlike `Deno.listenTls`, verifies client certificates
 * and swaps certificates without a new listener) and relays the same way as
 * for plain TCP. Reads are bounded: past {@linkcode HIGH_WATER_BYTES} unread
 * the socket is paused, so a fast client cannot fill memory while the inner
 * server is slow.
 *
 * @module
 */
import type { TLSSocket } from "node:tls";
import { Buffer } from "node:buffer";

/** Unread bytes past which the socket stops reading. */
const HIGH_WATER_BYTES = 65_536;

/** What the guard's relay needs of a client connection. */
export interface RelayConn {
  /** Reads into `buffer`; null at the end. */
  read(buffer: Uint8Array): Promise<number | null>;
  /** Writes (all of) `bytes`; resolves once they are taken. */
  write(bytes: Uint8Array): Promise<number>;
  /** Ends writing (half-close). */
  closeWrite(): Promise<void>;
  /** Closes. */
  close(): void;
  /** The peer's address. */
  readonly peer: string;
}

/**
 * Wraps a TLS socket whose handshake is done.
 * @param socket The socket (`secureConnection`).
 * @returns The connection.
 */
export function nodeConn(socket: TLSSocket): RelayConn {
  const chunks: Uint8Array[] = [];
  let queued = 0;
  let ended = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  socket.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    queued += chunk.length;
    if (queued >= HIGH_WATER_BYTES) socket.pause();
    notify();
  });
  const end = () => {
    ended = true;
    notify();
  };
  socket.on("end", end);
  socket.on("close", end);
  // Resets: the relay sees the end; nothing to report per connection.
  socket.on("error", end);
  return {
    peer: socket.remoteAddress ?? "",
    async read(buffer) {
      while (chunks.length === 0) {
        if (ended) return null;
        await new Promise<void>((resolve) => wake = resolve);
      }
      let n = 0;
      while (n < buffer.length && chunks.length > 0) {
        const chunk = chunks[0]!;
        const take = Math.min(chunk.length, buffer.length - n);
        buffer.set(chunk.subarray(0, take), n);
        n += take;
        if (take === chunk.length) chunks.shift();
        else chunks[0] = chunk.subarray(take);
      }
      queued -= n;
      if (queued < HIGH_WATER_BYTES && socket.isPaused()) socket.resume();
      return n;
    },
    async write(bytes) {
      if (socket.destroyed || socket.writableEnded) throw new Deno.errors.BrokenPipe("closed");
      // Not copied: this resolves once the socket is done with the bytes (the write's
      // callback, or its close), and only then does the relay reuse its buffer.
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off("close", done);
          resolve();
        };
        socket.on("close", done);
        socket.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), done);
      });
      if (socket.destroyed) throw new Deno.errors.BrokenPipe("closed");
      return bytes.length;
    },
    closeWrite() {
      return new Promise((resolve) => socket.end(resolve));
    },
    close() {
      socket.destroy();
      end();
    },
  };
}
