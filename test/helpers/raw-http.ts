/**
 * HTTP/1.1 spoken by hand over a TCP socket, for what a client library hides: a body sent a byte
 * at a time, a connection that stays open after the server ends its side, who closed first.
 */
import { connect, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** The port a listening app was given (`listen({ port: 0 })`). */
export function portOf(app: FastifyInstance): number {
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the app does not listen on a TCP port');
  return address.port;
}

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

/**
 * One client connection. It never ends its own side (`allowHalfOpen`), as a slow or hostile client
 * would not: after the server's answer and FIN it keeps the connection, and keeps writing if it was
 * dribbling, so only the server letting go of the socket (a reset on the next byte) closes it.
 */
export class RawConnection {
  readonly socket: Socket;
  received = '';
  /** The server ended its side (FIN). */
  ended = false;
  /** The connection is gone on both sides (for a writing client: the server dropped its socket). */
  closed = false;
  /** Why it closed, when a reset or a refusal closed it. */
  error: NodeJS.ErrnoException | undefined;
  readonly connected: Promise<void>;
  private dribbling: NodeJS.Timeout | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(port: number) {
    this.socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    this.socket.setEncoding('latin1');
    this.socket.on('data', (data: string) => {
      this.received += data;
      this.notify();
    });
    this.socket.on('end', () => {
      this.ended = true;
      this.notify();
    });
    this.socket.on('error', (error: NodeJS.ErrnoException) => (this.error = error));
    this.socket.on('close', () => {
      this.closed = true;
      clearInterval(this.dribbling);
      this.notify();
    });
    this.connected = new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('error', reject);
    });
  }

  /**
   * Resolves once `condition` holds, checked whenever something arrives, the server ends its side
   * or the connection closes (so a condition that can no longer come true should say so too).
   */
  until(condition: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (!condition()) return;
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
      check();
    });
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }

  write(data: string): void {
    if (this.socket.writable) this.socket.write(data);
  }

  /** Writes `byte` every `everyMs` until the connection closes. */
  dribble(byte: string, everyMs: number): void {
    this.dribbling = setInterval(() => this.write(byte), everyMs);
  }

  /** The responses received so far, in order. */
  responses(): RawResponse[] {
    const responses: RawResponse[] = [];
    let rest = this.received;
    while (rest.startsWith('HTTP/1.1 ')) {
      const headEnd = rest.indexOf('\r\n\r\n');
      if (headEnd < 0) break;
      const [statusLine = '', ...lines] = rest.slice(0, headEnd).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      const body = rest.slice(headEnd + 4, headEnd + 4 + length);
      responses.push({ status: Number(statusLine.split(' ')[1]), headers, body });
      rest = rest.slice(headEnd + 4 + length);
    }
    return responses;
  }

  destroy(): void {
    clearInterval(this.dribbling);
    this.socket.destroy();
  }
}
