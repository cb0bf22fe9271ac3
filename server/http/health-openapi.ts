/**
 * The health and readiness checks (server/http/health.ts) in the OpenAPI document: plain routes,
 * not procedures, so they are described here, beside them, as the OAuth endpoints describe
 * theirs (server/oauth/openapi-paths.ts).
 */
import type { ZodOpenApiOperationObject } from 'zod-openapi';
import type { ProblemSlug } from '../errors/problems.ts';
import { accessText, ALWAYS, headers, securityOf, type DocumentPart, type Json } from './openapi-components.ts';
import { problemResponse, problemResponses } from './openapi-problems.ts';

/** What a check answers besides its 200 and 503: the problems every operation can answer. */
const PROBLEMS: ProblemSlug[] = ['unknown-parameter', 'unauthorized', 'not-acceptable', 'rate-limited', 'internal-error'];

const healthStatus = { type: 'string', enum: ['ok', 'unavailable'] };
const HEALTH_SCHEMA: Json = {
  type: 'object',
  description: '`degraded`: the service works but its rate-limit store (Redis) does not answer.',
  required: ['status', 'checks'],
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded', 'unavailable'] },
    checks: {
      type: 'object',
      required: ['database'],
      properties: { database: healthStatus, rate_limit_store: healthStatus },
    },
  },
};

interface HealthCheck {
  path: string;
  operationId: string;
  summary: string;
  /** What 200 and 503 mean for this check. */
  description: string;
  /** When it answers 503: a health body, or the `service-unavailable` problem. */
  unavailable: string;
}

/** `GET /api/health` and `GET /api/health/ready` (server/http/health.ts): the same body, never cached. */
const HEALTH_CHECKS: HealthCheck[] = [
  {
    path: '/api/health',
    operationId: 'health',
    summary: 'Health check',
    description:
      'Whether the service and its database answer: 200 `ok` (or `degraded` when only the rate-limit store is down), 503 when the database ' +
      'does not answer or the service is shutting down.',
    unavailable: 'The database does not answer (a health body), or the service is shutting down',
  },
  {
    path: '/api/health/ready',
    operationId: 'health-ready',
    summary: 'Readiness check',
    description:
      'Whether to send requests to this instance (for a load balancer): 200 `ok` (or `degraded` when only the rate-limit store is down) once ' +
      'it listens and its bootstrap is done; 503 while it starts, from the moment it is told to stop (before its drain, so that traffic ' +
      'moves elsewhere first), and while its database does not answer.',
    unavailable: 'The service is starting or stopping, or its database does not answer (a health body), or it is draining its connections',
  },
];

function healthOperation(check: HealthCheck): ZodOpenApiOperationObject {
  const instance = check.path;
  const problems = problemResponses(PROBLEMS, instance, undefined);
  const unavailable = problemResponse(['service-unavailable'], instance, undefined);
  return {
    operationId: check.operationId,
    tags: ['health'],
    summary: check.summary,
    description: `${check.description} Never cached.\n\n${accessText(undefined)}`,
    security: securityOf(undefined),
    responses: {
      '200': {
        description: 'Healthy.',
        headers: headers(...ALWAYS, 'Cache-Control'),
        content: { 'application/json': { schema: HEALTH_SCHEMA, example: { status: 'ok', checks: { database: 'ok' } } } },
      },
      ...problems,
      '503': {
        description: `${check.unavailable} (${unavailable.description}).`,
        headers: headers(...ALWAYS, 'Cache-Control', 'Retry-After'),
        content: {
          'application/json': { schema: HEALTH_SCHEMA, example: { status: 'unavailable', checks: { database: 'unavailable' } } },
          ...unavailable.content,
        },
      },
    },
  };
}

/** `GET /api/health` and `GET /api/health/ready`, under their own tag. */
export const healthOpenApi = (): DocumentPart => ({
  tag: { name: 'health', description: 'Liveness and readiness of the service and its database.' },
  paths: Object.fromEntries(HEALTH_CHECKS.map((check) => [check.path, { get: healthOperation(check) }])),
  problems: [...PROBLEMS, 'service-unavailable'],
});
