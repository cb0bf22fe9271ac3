/**
 * The tripwire of server/http/node-server-internals.ts, our one reach past Node's HTTP server
 * (docs/architecture.md#one-seam-per-library): what the drain relies on when it stops listening
 * with `net.Server.prototype.close`, checked against the installed Node, each on a real socket.
 * A Node upgrade that changes one of them fails here, by name, before a drain misbehaves.
 */
import { once } from 'node:events';
import { createServer, Server } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { stopListening } from '../../server/http/node-server-internals.ts';
import { RawConnection } from '../helpers/raw-http.ts';

const servers: Server[] = [];
const connections: RawConnection[] = [];

afterEach(() => {
  for (const connection of connections.splice(0)) connection.destroy();
  for (const server of servers.splice(0)) server.closeAllConnections();
});

/** A server that answers `ok` and keeps connections alive, its request timeouts checked often. */
async function listening(): Promise<{ server: Server; port: number }> {
  const server = createServer({ keepAliveTimeout: 60_000, headersTimeout: 300, requestTimeout: 600, connectionsCheckingInterval: 50 }, (_request, response) => {
    response.end('ok');
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP port');
  return { server, port: address.port };
}

function open(port: number): RawConnection {
  const connection = new RawConnection(port);
  connections.push(connection);
  return connection;
}

const GET = 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n';

/** A connection that has had one answer and is now idle, kept alive. */
async function idleConnection(port: number): Promise<RawConnection> {
  const connection = open(port);
  await connection.connected;
  connection.write(GET);
  await connection.until(() => connection.responses().length === 1 || connection.closed);
  expect(connection.responses()[0]?.status).toBe(200);
  return connection;
}

/** Whether a new connection to `port` is refused. */
const refused = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve('accepted');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });

describe("Node's HTTP server under net.Server's close (server/http/node-server-internals.ts)", () => {
  it("http.Server's own close still drops an idle kept-alive connection at once (why the drain goes around it; if not, the seam can go)", async () => {
    const { server, port } = await listening();
    expect(Object.hasOwn(Server.prototype, 'close')).toBe(true);
    const idle = await idleConnection(port);
    server.close();
    await idle.until(() => idle.closed || idle.ended);
    expect(idle.ended || idle.closed).toBe(true);
  });

  it('stopListening refuses new connections and keeps an idle kept-alive one, which is still answered', async () => {
    const { server, port } = await listening();
    const idle = await idleConnection(port);
    const stopped = stopListening(server);
    expect(server.listening).toBe(false);
    expect(await refused(port)).toBe('ECONNREFUSED');
    idle.write(GET);
    await idle.until(() => idle.responses().length === 2 || idle.closed);
    expect(idle.responses()[1]?.status).toBe(200);
    idle.destroy();
    await stopped;
  });

  it('stopListening keeps checking the request timeouts: a request still incomplete is answered 408 and its connection closed', async () => {
    const { server, port } = await listening();
    const slow = open(port);
    await slow.connected;
    slow.write('GET / HTTP/1.1\r\nHost: localhost\r\n');
    const stopped = stopListening(server);
    await slow.until(() => slow.ended || slow.closed);
    expect(slow.received).toMatch(/^HTTP\/1\.1 408 /);
    slow.destroy();
    await stopped;
  });

  it('stopListening resolves only once the last open connection has closed', async () => {
    const { server, port } = await listening();
    const idle = await idleConnection(port);
    let resolved = false;
    const stopped = stopListening(server).then(() => (resolved = true));
    // Every callback due now has run: the listener's own close is reported within these turns.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(resolved).toBe(false);
    idle.destroy();
    await stopped;
    expect(resolved).toBe(true);
  });
});
