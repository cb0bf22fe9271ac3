/**
 * Our one reach past Node's HTTP server to the TCP server under it (checked on Node 20.19, 22 and
 * 24; docs/architecture.md#one-seam-per-library). The drain (lifecycle.ts) must stop accepting
 * connections and keep the open ones, each closing after its next answer or once idle for a grace
 * period. `http.Server`'s own `close()` does more: it also closes every idle kept-alive connection
 * at once, which cuts a request a client is sending on one at that moment, and it stops checking
 * the request timeouts of the connections left. Node has no public call for the rest of it, so the
 * drain calls `net.Server.prototype.close` on the HTTP server: stop listening, nothing else.
 *
 * test/unit/node-server-internals.test.ts checks on the installed Node that this stops new
 * connections, keeps an idle kept-alive one serving, still times out a slow request, and calls
 * back only once the last connection is gone; an upgrade that changes any of it fails there.
 */
import type { Server as HttpServer } from 'node:http';
import { Server as NetServer } from 'node:net';

/**
 * Stops `server` listening and keeps its open connections; resolves once the last of them has
 * closed (at once when none is open, or when it was not listening).
 */
export function stopListening(server: HttpServer): Promise<void> {
  return new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
}
