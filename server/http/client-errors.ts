/**
 * Answers for what Node's HTTP parser refuses before Fastify sees a request (headers too large,
 * a request line it cannot parse, a request that never arrives whole): problem details like every
 * other error, written straight to the socket because there is no request object yet.
 */
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { DomainError, problemBody, problemType, type ProblemSlug } from '../errors/problems.ts';

interface ClientError extends Error {
  code?: string;
}

function problemFor(error: ClientError): { slug: ProblemSlug; detail: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { slug: 'request-header-fields-too-large', detail: 'The request headers are larger than the server accepts.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return { slug: 'request-timeout', detail: 'The request did not arrive whole in time.' };
    default:
      return { slug: 'malformed-request', detail: 'The request could not be parsed as HTTP.' };
  }
}

/**
 * Fastify's `clientErrorHandler`: one problem+json answer, then the connection is dropped. Ending
 * our side is not enough: a client that never ends its own (one sending a body a byte at a time)
 * would keep the socket open for ever, so it is destroyed once the answer is written.
 */
export function answerClientError(error: ClientError, socket: Socket, log: FastifyBaseLogger): void {
  // A peer that reset or already half-closed the connection cannot read an answer.
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { slug, detail } = problemFor(error);
  // No request line is logged for these (there is no request): this line stands for it.
  log.info({ status: problemType(slug).status, problem: slug, code: error.code }, 'request refused before routing');
  const problem = new DomainError(slug, detail);
  const body = JSON.stringify(problemBody(problem));
  socket.end(
    [
      `HTTP/1.1 ${problem.status} ${problemBody(problem).title}`,
      'Content-Type: application/problem+json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Cache-Control: no-store',
      'X-Content-Type-Options: nosniff',
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
    () => socket.destroy(),
  );
}
