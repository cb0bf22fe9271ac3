/**
 * Errors for an operator: the problem's title and detail as the service wrote them (they name the
 * field, the allowed moves, the missing scope), each bad field, and the request id to look up in
 * the service's log. Never the raw JSON.
 */
import { isProblem, SignInError, TokenRefreshError } from '@order-service/client';
import { serviceUrl } from './session.ts';

export interface Explained {
  message: string;
  /** One line per field the service refused. */
  fields: string[];
  reference?: string;
  signIn?: boolean;
}

/**
 * Whether no answer came at all: `fetch` rejects with a TypeError when the service is down, the
 * address is wrong or the browser withheld the answer (CORS), and the client keeps it as a cause.
 */
function noAnswer(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e instanceof TypeError) return true;
  return false;
}

/** Where the console looked for the service, and the two usual reasons it is not there. */
const unreachable = (): Explained => ({
  message: `Cannot reach the order service at ${serviceUrl}: is it running, and does its CORS_ORIGINS include this page's origin (${location.origin})?`,
  fields: [],
});

export function explain(error: unknown): Explained {
  if (error instanceof TokenRefreshError) return { message: 'Your sign-in has ended. Sign in again.', fields: [], signIn: true };
  if (error instanceof SignInError && error.status === undefined && noAnswer(error)) return unreachable();
  if (error instanceof SignInError) return { message: `Signing in failed (${error.error}). Try again.`, fields: [], signIn: true };
  if (isProblem(error)) {
    const { problem } = error;
    const fields = (problem.errors ?? []).map((e) => `${e.field}: ${e.message}`);
    const detail = problem.detail === undefined ? problem.title : `${problem.title}: ${problem.detail}`;
    const message = isProblem(error, 'insufficient-scope') ? `${detail} Sign in as an admin to use the console.` : detail;
    return {
      message,
      fields,
      ...(problem.request_id === undefined ? {} : { reference: problem.request_id }),
      ...(error.status === 401 ? { signIn: true } : {}),
    };
  }
  // The client's README: a network failure stays a plain TRPCClientError (no problem in it).
  if (error instanceof Error && error.name === 'TRPCClientError') return unreachable();
  if (noAnswer(error)) return unreachable();
  return { message: 'Something went wrong. Try again.', fields: [] };
}

export const STATUSES = ['draft', 'confirmed', 'paid', 'shipped', 'delivered', 'completed', 'cancelled', 'refunded'] as const;
export type OrderStatus = (typeof STATUSES)[number];
