/**
 * Issue 21 item 3: slow clients are cut off. A request whose headers or body do not arrive whole
 * in time answers 408 (a problem) and its connection is dropped, and an idle keep-alive connection
 * is closed, so slow or silent clients cannot hold every socket the process may open. Real sockets
 * (raw HTTP: a body a byte at a time) against a listening app configured with small timeouts;
 * every wait polls for the outcome with a generous deadline.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { defaultHttpTimeouts } from '../../server/http/timeouts.ts';
import { useTestApp } from '../helpers/app.ts';
import { portOf, RawConnection } from '../helpers/raw-http.ts';

// Small, yet wide enough that a loaded machine never times out a request sent whole in one write.
const timeouts = { headersTimeoutMs: 2000, requestTimeoutMs: 4000, keepAliveTimeoutMs: 8000 };
/** Far above the timeouts (and below the test's own 30 s): only a server that never cuts a connection off misses it. */
const DEADLINE = { timeout: 20_000, interval: 50 };

let port: number;
const opened: RawConnection[] = [];

const t = useTestApp({ http: timeouts });
beforeAll(async () => {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = portOf(t.app);
});
afterAll(async () => {
  for (const connection of opened) connection.destroy();
});

async function open(): Promise<RawConnection> {
  const connection = new RawConnection(port);
  opened.push(connection);
  await connection.connected;
  return connection;
}

/** How many connections the server holds now. */
const serverConnections = () =>
  new Promise<number>((resolve, reject) => t.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));

const slowPost = (contentLength: number) =>
  `POST /api/v1/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.admin.token}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`;

/** A health check on a connection of its own, which the server closes after answering. */
async function healthOnFreshConnection(): Promise<number | undefined> {
  const connection = await open();
  connection.write('GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  await vi.waitFor(() => expect(connection.ended).toBe(true), DEADLINE);
  return connection.responses()[0]?.status;
}

function expectRequestTimeoutProblem(connection: RawConnection): void {
  const [answer] = connection.responses();
  expect(answer?.status).toBe(408);
  expect(answer?.headers['content-type']).toBe('application/problem+json');
  expect(answer?.headers.connection).toBe('close');
  expect(JSON.parse(answer?.body ?? '{}')).toMatchObject({ type: '/problems/request-timeout', status: 408 });
}

describe('a body that does not arrive whole within HTTP_REQUEST_TIMEOUT_MS answers 408 and its connection is dropped', () => {
  it('twenty POSTs declaring 100 KB and sending a byte every 100 ms each get a 408 problem and lose their connection; health answers meanwhile', async () => {
    const slow = await Promise.all(Array.from({ length: 20 }, () => open()));
    for (const connection of slow) {
      connection.write(slowPost(100_000));
      connection.dribble(' ', 100);
    }
    expect(await healthOnFreshConnection()).toBe(200);
    // Each client keeps writing and never closes: only the server dropping the socket closes it.
    await vi.waitFor(() => expect(slow.filter((connection) => !connection.closed)).toHaveLength(0), DEADLINE);
    for (const connection of slow) expectRequestTimeoutProblem(connection);
    await vi.waitFor(async () => expect(await serverConnections()).toBe(0), DEADLINE);
  });
});

describe('headers that do not arrive whole within HTTP_HEADERS_TIMEOUT_MS answer 408 and the connection is dropped', () => {
  it('a request whose header lines come one every 100 ms, without end, gets a 408 problem and loses its connection', async () => {
    const connection = await open();
    connection.write('GET /api/health HTTP/1.1\r\nHost: x\r\n');
    connection.dribble('X-Slow: 1\r\n', 100);
    await vi.waitFor(() => expect(connection.closed).toBe(true), DEADLINE);
    expectRequestTimeoutProblem(connection);
  });

  it('a connection that never sends a byte is answered 408 and dropped', async () => {
    const connection = await open();
    await vi.waitFor(() => expect(connection.ended).toBe(true), DEADLINE);
    expectRequestTimeoutProblem(connection);
    await vi.waitFor(async () => expect(await serverConnections()).toBe(0), DEADLINE);
  });
});

describe('an idle keep-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS, and only then', () => {
  it('a kept connection idle longer than the headers timeout is still served, then closed once idle for the keep-alive timeout', async () => {
    const kept = await open();
    const silent = await open();
    kept.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
    await vi.waitFor(() => expect(kept.responses()).toHaveLength(1), DEADLINE);
    // The silent connection's 408 says the headers timeout has passed since; the kept one idled all along.
    await vi.waitFor(() => expect(silent.ended).toBe(true), DEADLINE);
    kept.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
    await vi.waitFor(() => expect(kept.responses()).toHaveLength(2), DEADLINE);
    expect(kept.responses().map((response) => response.status)).toEqual([200, 200]);
    expect(kept.responses()[1]?.headers.connection).toMatch(/keep-alive/i);
    await vi.waitFor(() => expect(kept.ended).toBe(true), DEADLINE);
    await vi.waitFor(async () => expect(await serverConnections()).toBe(0), DEADLINE);
  });
});

describe('the settings reach Node\'s server; without them the documented defaults apply', () => {
  it('the configured timeouts are the server\'s', () => {
    expect(t.app.server.headersTimeout).toBe(timeouts.headersTimeoutMs);
    expect(t.app.server.requestTimeout).toBe(timeouts.requestTimeoutMs);
    expect(t.app.server.keepAliveTimeout).toBe(timeouts.keepAliveTimeoutMs);
  });

  it('the defaults: headers 10 s, whole request 30 s, idle keep-alive 72 s', () => {
    expect(defaultHttpTimeouts).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 72_000 });
  });
});
