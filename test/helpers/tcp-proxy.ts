/**
 * A TCP proxy in front of a server (PostgreSQL), which a test takes down (every connection
 * through it cut, new ones refused, as when the server's host goes away) and brings back up.
 */
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  #server: Server | undefined;
  #port = 0;
  readonly #sockets = new Set<Socket>();

  private constructor(private readonly target: { host: string; port: number }) {}

  /** A proxy listening on 127.0.0.1 (a free port) for `target`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    proxy.#port = await proxy.#listen(0);
    return proxy;
  }

  /** The port it listens on (the same after `up()`). */
  get port(): number {
    return this.#port;
  }

  async #listen(port: number): Promise<number> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          this.#sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    this.#server = server;
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return address.port;
  }

  /** Cuts every connection and refuses new ones until `up()`. */
  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : undefined;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    await closed;
  }

  /** Accepts connections again, on the same port. */
  async up(): Promise<void> {
    if (!this.#server) await this.#listen(this.#port);
  }
}
