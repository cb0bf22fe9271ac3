/**
 * The OpenAPI 3.1 document, built with zod-openapi from the route table (rest-routes.ts): the
 * same procedures, schemas, statuses and policies the REST facade serves, so the document says
 * what the service really does. Paths are whole (`/api/v1/...`, `/api/health`) under one server,
 * the origin the document is served from, so every generator calls every operation correctly.
 * This file assembles it: an operation per route (openapi-operations.ts), the problems they answer
 * (openapi-problems.ts), the PATCH bodies (openapi-patch.ts), the webhooks (openapi-webhooks.ts),
 * and the parts described beside their plain routes: the health checks (health-openapi.ts) and
 * the authorization server's endpoints, which the oauth module describes
 * (server/oauth/openapi-paths.ts) and the caller hands in.
 */
import type { AnyRouter } from '@trpc/server';
import { createDocument, type oas31, type ZodOpenApiPathsObject } from 'zod-openapi';
import { scopeCatalogue, type Scope } from '../auth/scopes.ts';
import type { ProblemSlug } from '../errors/problems.ts';
import { API_PREFIX } from '../lib/api-paths.ts';
import { tagDescriptions } from '../lib/api-tags.ts';
import { honoursIdempotencyKey } from '../trpc/idempotency.ts';
import { healthOpenApi } from './health-openapi.ts';
import { HEADERS, PARAMETERS, type DocumentPart, type Json } from './openapi-components.ts';
import { buildOperation } from './openapi-operations.ts';
import { JSON_PATCH_SCHEMAS, mergePatchSchemas } from './openapi-patch.ts';
import { problemSchemas, problemSlugs } from './openapi-problems.ts';
import { webhooksSection } from './openapi-webhooks.ts';
import { restRoutes } from './rest-routes.ts';

export type { DocumentPart } from './openapi-components.ts';

/** What each OAuth scope grants (docs/api.md#scopes), as its module declares it (`<name>.scopes.ts`). */
const scopeDescriptions = (): Record<Scope, string> =>
  Object.fromEntries([...scopeCatalogue()].map(([name, scope]) => [name, scope.description])) as Record<Scope, string>;

export function buildOpenApiDocument(router: AnyRouter, version: string, parts: readonly DocumentPart[]): oas31.OpenAPIObject {
  const routes = restRoutes(router);
  const described = [healthOpenApi(), ...parts];
  const paths: ZodOpenApiPathsObject = {};
  // The parts' problems first: their schemas lead the components, then the operations' in order.
  const usedSlugs = new Set<ProblemSlug>(described.flatMap((part) => part.problems ?? []));
  for (const route of routes) {
    const operation = buildOperation(route, routes);
    for (const slug of problemSlugs(route, honoursIdempotencyKey({ openapi: { method: route.method }, rest: route.rest }))) usedSlugs.add(slug);
    const item = (paths[API_PREFIX + route.path] ??= {});
    item[route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'] = operation;
  }
  for (const part of described) Object.assign(paths, part.paths);

  const tags = [...new Set(routes.flatMap((route) => route.tags))];
  const document = createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'order-service',
        version,
        description:
          'Order handling: products, users, orders, payments and fulfillments.\n\n' +
          '- Every path is whole: resources under `/api/v1` (`/api/<resource>` answers the same), the health and readiness checks at `/api/health` and `/api/health/ready`.\n' +
          '- Every error is an RFC 9457 problem (`application/problem+json`) whose `type` is `/problems/<slug>`, a page explaining it.\n' +
          '- Access tokens are JWTs sent as `Authorization: Bearer <token>`; the service\'s OAuth 2.0 authorization server (`/oauth/token`, ' +
          '`/oauth/revoke`, metadata at `/.well-known/oauth-authorization-server`, all described here) issues them with the scopes each operation names.\n' +
          '- Reads carry `ETag` (304 on `If-None-Match`), writes take `If-Match` (412 when stale), creating POSTs take `Idempotency-Key`.',
        contact: { name: 'order-service maintainers', url: 'https://github.com/order-service/order-service', email: 'api@order-service.example' },
        license: { name: 'MIT', url: 'https://github.com/order-service/order-service/blob/main/LICENSE' },
      },
      // The origin the document is served from; every path carries its prefix.
      servers: [{ url: '/', description: 'This service (the origin serving this document).' }],
      tags: [...tags.map((name) => ({ name, description: tagDescriptions().get(name) ?? `Operations on ${name}.` })), ...described.map((part) => part.tag)],
      paths,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'An access token (JWT) from the OAuth 2.0 endpoints below, or from an accepted external issuer.',
          },
          ...(Object.assign({}, ...described.map((part) => part.securitySchemes)) as Record<string, oas31.SecuritySchemeObject>),
          oauth2: {
            type: 'oauth2',
            description:
              'The service\'s own authorization server. Browsers and mobile apps: Authorization Code with PKCE (S256). Backends: Client Credentials. ' +
              'First-party apps: Resource Owner Password. Refresh tokens rotate on every use.',
            flows: {
              authorizationCode: {
                authorizationUrl: '/oauth/authorize',
                tokenUrl: '/oauth/token',
                refreshUrl: '/oauth/token',
                scopes: scopeDescriptions(),
              },
              clientCredentials: { tokenUrl: '/oauth/token', scopes: scopeDescriptions() },
              password: { tokenUrl: '/oauth/token', refreshUrl: '/oauth/token', scopes: scopeDescriptions() },
            },
          },
        },
        headers: { ...HEADERS, ...Object.assign({}, ...described.map((part) => part.headers)) } as unknown as Record<string, oas31.HeaderObject>,
        parameters: PARAMETERS as unknown as Record<string, oas31.ParameterObject>,
        schemas: {
          ...(problemSchemas(usedSlugs) as Record<string, oas31.SchemaObject>),
          ...(JSON_PATCH_SCHEMAS as Record<string, oas31.SchemaObject>),
          ...(Object.assign({}, ...described.map((part) => part.schemas)) as Record<string, oas31.SchemaObject>),
        },
      },
    },
  );
  // A merge patch is the PUT body of the same path with every member optional.
  const components = document.components as { schemas: Record<string, Json> };
  Object.assign(components.schemas, mergePatchSchemas(routes, document.paths));
  // What a webhook endpoint receives, one entry per event type (server/http/openapi-webhooks.ts).
  const section = webhooksSection(components.schemas as Record<string, Record<string, unknown>>);
  Object.assign(components.schemas, section.schemas);
  (document as { webhooks?: unknown }).webhooks = section.webhooks;
  return document;
}
