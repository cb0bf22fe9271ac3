/**
 * The service's life and its graceful end (docs/api.md#health-and-readiness and #graceful-stop, issue 21 item 5):
 *
 *   starting -> serving -> draining -> closing -> closed
 *
 * - starting: the process may not listen yet, or its bootstrap is not done: readiness answers 503.
 * - serving: readiness answers 200 while the database does.
 * - draining (SIGTERM): readiness and health answer 503 at once, so a load balancer that polls
 *   readiness stops sending; for the shutdown delay requests are still served as before.
 * - closing (the drain): no connection is accepted any more; a request on a connection already
 *   open is still served, and its answer says `Connection: close` (as does every answer still to
 *   come of requests in flight), so each connection ends after one more answer; then the database
 *   closes. A proxy that does not poll readiness (nginx OSS: docs/operations.md) learns of the drain
 *   here: a new connection is refused, which it may retry on another instance whatever the method
 *   (nothing was sent), while a request it already sent on a kept-alive connection is answered,
 *   not refused: it could not retry a refused POST. Connections still waiting in the kernel's
 *   accept queue when the listener closes are reset: the delay before, readiness answering 503,
 *   is what keeps new ones from arriving then from a balancer that polls readiness (nginx OSS
 *   connects until it is refused). (Answers during the delay do not say `Connection: close`:
 *   clients made to reconnect then are the ones such a reset hits.)
 * - closed (`app.close()`, after the drain or without one in tests): the database is about to
 *   close, so a request still arriving is refused: 503 with `Connection: close`.
 *
 * Closing idle kept-alive connections at once (what `server.close()` does) races with a request the
 * client is sending on one at that moment: it is cut with no answer. So a connection is closed only
 * once it has stayed idle for a grace period; a request arriving before then is served and its
 * answer closes the connection. A client that keeps connections idle for less than the grace
 * (nginx's upstream `keepalive_timeout` in deploy/nginx.conf) closes them itself first, and never
 * meets the race.
 */
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { stopListening } from './node-server-internals.ts';

export type Phase = 'starting' | 'serving' | 'draining' | 'closing' | 'closed';

/** A kept-alive connection idle this long during the drain is closed: its client sent nothing more. */
export const DRAIN_IDLE_GRACE_MS = 1000;

interface Connection {
  /** Requests received and not yet answered (more than one when the client pipelines). */
  answering: Set<ServerResponse>;
  /** When it last turned idle (performance.now()). */
  idleSince: number;
  closeTimer: NodeJS.Timeout | undefined;
}

export interface DrainOptions {
  /** Requests in flight get this long to finish; connections still open then are cut. */
  timeoutMs: number;
  /** Default DRAIN_IDLE_GRACE_MS. */
  idleGraceMs?: number;
}

export class Lifecycle {
  #phase: Phase = 'starting';
  /** The connections HTTP runs on (with TLS, the TLS sockets), by socket. */
  readonly #connections = new Map<Socket, Connection>();
  /** Every TCP connection, TLS handshakes in progress included, for the drain's deadline. */
  readonly #sockets = new Set<Socket>();
  #idleGraceMs = DRAIN_IDLE_GRACE_MS;
  readonly #server: HttpServer;
  /** Told when the drain begins: answers that never end on their own (live streams) end then. */
  readonly #onClosing: (() => void)[] = [];

  constructor(server: HttpServer, secure: boolean) {
    this.#server = server;
    server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    server.on(secure ? 'secureConnection' : 'connection', (socket: Socket) => {
      const connection: Connection = { answering: new Set(), idleSince: performance.now(), closeTimer: undefined };
      this.#connections.set(socket, connection);
      socket.once('close', () => {
        clearTimeout(connection.closeTimer);
        this.#connections.delete(socket);
      });
      // A TLS handshake the drain did not stop: the connection gets the grace to send its request.
      if (this.#phase === 'closing') this.#closeWhenIdle(socket, connection);
    });
    // Before the app's own listener, so that nothing can have answered yet.
    server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
      if (this.#phase === 'closing') response.setHeader('connection', 'close');
      const connection = this.#connections.get(request.socket);
      if (!connection) return;
      connection.answering.add(response);
      clearTimeout(connection.closeTimer);
      response.once('close', () => {
        connection.answering.delete(response);
        if (connection.answering.size > 0) return;
        connection.idleSince = performance.now();
        if (this.#phase === 'closing') this.#closeWhenIdle(request.socket, connection);
      });
    });
  }

  get phase(): Phase {
    return this.#phase;
  }

  /** Listening, and the bootstrap done: readiness may answer 200. */
  serving(): void {
    if (this.#phase === 'starting') this.#phase = 'serving';
  }

  /** Readiness and health answer 503 from now on; requests are still served. */
  startDraining(): void {
    if (this.#phase === 'starting' || this.#phase === 'serving') this.#phase = 'draining';
  }

  /** Requests are refused from now on (503): `app.close()` is under way. */
  refuse(): void {
    this.#phase = 'closed';
  }

  /** `end` is called when the drain begins: it ends the answers that would never end on their own. */
  whenClosing(end: () => void): void {
    this.#onClosing.push(end);
  }

  /**
   * Stops accepting connections and waits until every open one is gone: each closes after its
   * next answer (which says `Connection: close`) or once idle for the grace period; at `timeoutMs`
   * the rest are cut. Resolves with the number of connections cut with a request in flight.
   */
  async drain(options: DrainOptions): Promise<number> {
    if (this.#phase !== 'closed') this.#phase = 'closing';
    // Answers still to come of requests in flight close their connections too.
    for (const connection of this.#connections.values()) {
      for (const response of connection.answering) if (!response.headersSent) response.setHeader('connection', 'close');
    }
    this.#idleGraceMs = options.idleGraceMs ?? DRAIN_IDLE_GRACE_MS;
    // Live streams end now (their clients reconnect to another instance), so their connections
    // turn idle and close instead of holding the drain until its deadline.
    for (const end of this.#onClosing) end();
    // Stop listening, keep the open connections: http.Server's close would also drop the idle ones
    // at once (the race above) and stop checking the request timeouts (node-server-internals.ts).
    const drained = stopListening(this.#server);
    for (const [socket, connection] of this.#connections) if (connection.answering.size === 0) this.#closeWhenIdle(socket, connection);
    let cut = 0;
    const deadline = setTimeout(() => {
      cut = [...this.#connections.values()].filter((connection) => connection.answering.size > 0).length;
      for (const socket of this.#sockets) socket.destroy();
    }, options.timeoutMs);
    await drained;
    clearTimeout(deadline);
    return cut;
  }

  #closeWhenIdle(socket: Socket, connection: Connection): void {
    clearTimeout(connection.closeTimer);
    const left = connection.idleSince + this.#idleGraceMs - performance.now();
    connection.closeTimer = setTimeout(() => {
      if (connection.answering.size === 0) socket.destroy();
    }, Math.max(0, left));
  }
}

/**
 * The one line a start that cannot listen prints (docs/operations.md#health-readiness-and-stopping):
 * its port is taken (EADDRINUSE; an instance still draining after a restart holds it until its
 * drain ends) or refused (EACCES), on `PORT` or `METRICS_PORT`. Undefined for any other error, which
 * stays as it is. No stack: the cause is the machine's, not the code's.
 */
export function listenFailure(error: unknown, ports: { port: number; metricsPort: number | undefined }): string | undefined {
  const failure = error as Partial<NodeJS.ErrnoException & { address: string; port: number }> | undefined;
  if (failure?.syscall !== 'listen' || (failure.code !== 'EADDRINUSE' && failure.code !== 'EACCES')) return undefined;
  const variable = failure.port !== undefined && failure.port === ports.metricsPort && failure.port !== ports.port ? 'METRICS_PORT' : 'PORT';
  const where = `${failure.address?.includes(':') ? `[${failure.address}]` : (failure.address ?? '')}:${failure.port ?? ''}`;
  return failure.code === 'EADDRINUSE'
    ? `Cannot listen on ${where} (${variable}): the address is in use by another process, perhaps an instance still draining; stop it or wait for it, or set ${variable}.`
    : `Cannot listen on ${where} (${variable}): permission denied (a port under 1024 needs privileges); set ${variable}.`;
}

export interface ShutdownOptions {
  /** Readiness answers 503 this long before the drain, for a load balancer to notice (SHUTDOWN_DELAY_MS). */
  delayMs: number;
  /** The drain's bound (SHUTDOWN_TIMEOUT_MS): requests still in flight then are cut. */
  drainTimeoutMs: number;
  /** Default DRAIN_IDLE_GRACE_MS. */
  idleGraceMs?: number;
}

/**
 * The graceful stop main.ts runs on SIGTERM/SIGINT: readiness 503 at once, the delay (requests still
 * served), the drain, then `app.close()` (background jobs stop, the database closes). Resolves with
 * the number of connections the drain had to cut.
 */
export async function shutDown(app: FastifyInstance, options: ShutdownOptions): Promise<{ cut: number }> {
  app.lifecycle.startDraining();
  if (options.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
  const cut = await app.lifecycle.drain({ timeoutMs: options.drainTimeoutMs, ...(options.idleGraceMs === undefined ? {} : { idleGraceMs: options.idleGraceMs }) });
  await app.close();
  return { cut };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Where the service is in its life: readiness and the shutdown 503s follow it. */
    lifecycle: Lifecycle;
  }
}
