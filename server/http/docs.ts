import { createRequire } from 'node:module';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { SCOPES } from '../auth/policy.ts';
import { isProblemSlug, problemType } from '../errors/problems.ts';
import { DomainError } from '../errors/problems.ts';
import { DOCS_CLIENT_ID } from '../modules/clients/clients.service.ts';
import { registerMethodFallbacks } from './rest-adapter.ts';

const require = createRequire(import.meta.url);
// absolute-path.js only: the package's main module would load the whole UI bundle into the server.
const swaggerUiDir = (require('swagger-ui-dist/absolute-path.js') as () => string)();

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** A description's text as HTML: escaped, with its `code spans` as <code> (the one markup descriptions use). */
export const descriptionHtml = (text: string): string =>
  escapeHtml(text).replace(/`([^`]+)`/g, (_m, code: string) => `<code>${code}</code>`);

const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>order-service API</title>
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>`;

/** Swagger UI from our own origin only; it styles inline and draws its icons as data: images. */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * "Authorize" runs the authorization code flow with PKCE as the first-party docs client (made sure
 * of at start, redirecting only to this page's oauth2-redirect.html), every scope preselected.
 */
const initScript = (): string => `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  oauth2RedirectUrl: window.location.origin + '/api/docs/oauth2-redirect.html',
});
window.ui.initOAuth({
  clientId: ${JSON.stringify(DOCS_CLIENT_ID)},
  appName: 'order-service API docs',
  usePkceWithAuthorizationCodeGrant: true,
  scopes: ${JSON.stringify(SCOPES.join(' '))},
});
`;

/**
 * Where the authorization server sends the browser back with the code: Swagger UI's redirect
 * script (an external file, so no inline script is needed) hands it to the docs page that opened
 * the window. The URL carries the code: it is never cached, framed or sent on as a Referer.
 */
const redirectPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Signing in - order-service API docs</title>
</head>
<body>
<script src="/api/docs/assets/oauth2-redirect.js"></script>
</body>
</html>`;
const REDIRECT_CSP = "default-src 'none'; script-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The OpenAPI document (`document`, its JSON text) at /api/openapi.json, interactive docs (Swagger
 * UI, served from our own node_modules: no CDN) and problem type pages.
 */
export async function registerDocs(app: FastifyInstance, { document }: { document: string }): Promise<void> {
  app.get('/api/openapi.json', { config: { api: true } }, async (_request, reply) =>
    reply.header('content-type', 'application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(document),
  );
  registerMethodFallbacks(app, new Map([['/api/openapi.json', new Set(['GET', 'HEAD'])]]));
  await app.register(fastifyStatic, { root: swaggerUiDir, prefix: '/api/docs/assets/', decorateReply: false, index: false });
  app.get('/api/docs', async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .header('content-security-policy', DOCS_CSP)
      .header('x-frame-options', 'DENY')
      .send(docsPage),
  );
  app.get('/api/docs/init.js', async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(initScript()),
  );
  app.get('/api/docs/oauth2-redirect.html', async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', REDIRECT_CSP)
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .send(redirectPage),
  );

  app.get<{ Params: { slug: string } }>('/problems/:slug', async (request, reply) => {
    const { slug } = request.params;
    if (!isProblemSlug(slug)) throw new DomainError('not-found', `There is no problem type "${slug}".`);
    const type = problemType(slug);
    const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(type.title)} (${type.status}): order-service problem type</title></head>
<body>
<main>
<h1>${escapeHtml(type.title)}</h1>
<p>HTTP status <strong>${type.status}</strong>. Type <code>/problems/${escapeHtml(slug)}</code>.</p>
<p>${descriptionHtml(type.description)}</p>
<p>Problem bodies are <code>application/problem+json</code> (RFC 9457) with <code>type</code>, <code>title</code>, <code>status</code>,
<code>detail</code>, <code>instance</code> (the request path) and <code>request_id</code> (the <code>X-Request-Id</code> header);
validation failures add <code>errors</code>, one <code>{field, message}</code> per bad field. Each operation's possible problems, with
their extra members, are in the <a href="/api/docs">API documentation</a> (<a href="/api/openapi.json">OpenAPI document</a>).</p>
</main>
</body></html>`;
    // No script, style or frame: the app's default policy (`default-src 'none'; frame-ancestors 'none'`) stands.
    return reply.type('text/html; charset=utf-8').header('cache-control', 'public, max-age=3600').header('x-frame-options', 'DENY').send(html);
  });
}
