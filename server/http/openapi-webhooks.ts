/**
 * The OpenAPI 3.1 `webhooks` section (docs/webhooks.md): one entry per event type of the
 * catalogue, the POST a receiver gets, its body the event with `data.object` typed as the
 * resource's GET answers it (without `_links`), its headers those of Standard Webhooks. Built from
 * the catalogue and the document's own schemas, so a new event type is documented as it is
 * declared, and a type whose resource has no schema stops the build.
 */
import { eventTypes, resourceOf } from '../events/catalogue.ts';

type Json = Record<string, unknown>;

const SCHEMA_REF = '#/components/schemas/';
const pascal = (name: string) => name.replace(/(^|[._-])([a-z])/g, (_m, _sep: string, letter: string) => letter.toUpperCase());

/** `order` -> the `Order` schema, without `_links` (an event tells what happened, not what may be done now). */
function objectSchema(schemas: Record<string, Json>, resource: string): Json {
  const name = pascal(resource);
  const schema = schemas[name];
  if (schema === undefined) throw new Error(`event resource ${resource}: the document has no ${name} schema to describe its events' data.object`);
  const properties = { ...(schema.properties as Record<string, Json>) };
  delete properties._links;
  const required = ((schema.required ?? []) as string[]).filter((member) => member !== '_links');
  return { ...schema, properties, required };
}

const HEADERS: Json = {
  'webhook-id': { description: 'The event id: the same on every attempt; deduplicate by it.', required: true, schema: { type: 'string', example: 'evt_3q2Yz0mXk9bTfP1sLw8d' } },
  'webhook-timestamp': { description: 'Unix seconds of this attempt; refuse one far from your clock (the libraries allow 5 minutes).', required: true, schema: { type: 'string', pattern: '^[0-9]+$', example: '1769860200' } },
  'webhook-signature': {
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` keyed with the endpoint secret\'s bytes (after `whsec_`); two during the 24 hours after a rotation. Verify with a Standard Webhooks library.',
    required: true,
    schema: { type: 'string', example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=' },
  },
};

/** The `webhooks` section and the schemas it adds (`<Type>Event`, `<Resource>EventObject`). */
export function webhooksSection(schemas: Record<string, Json>): { webhooks: Json; schemas: Record<string, Json> } {
  const added: Record<string, Json> = {};
  const webhooks: Json = {};
  for (const [type, description] of eventTypes()) {
    const resource = resourceOf(type);
    const objectName = `${pascal(resource)}EventObject`;
    added[objectName] ??= objectSchema(schemas, resource);
    const eventName = `${pascal(type)}Event`;
    added[eventName] = {
      description: `${type}: ${description}`,
      allOf: [
        { $ref: `${SCHEMA_REF}Event` },
        {
          type: 'object',
          properties: {
            type: { const: type },
            data: { type: 'object', properties: { object: { $ref: `${SCHEMA_REF}${objectName}` } }, required: ['object'] },
          },
        },
      ],
    };
    webhooks[type] = {
      post: {
        operationId: `webhook-${type.replace('.', '-')}`,
        tags: ['webhooks'],
        summary: `${type}: ${description}`,
        description: `Sent to each enabled webhook endpoint whose \`enabled_events\` name \`${type}\`, \`${resource}.*\` or \`*\`. Answer any 2xx within 10 s; anything else (a redirect too) is retried on the schedule; 410 disables the endpoint.`,
        // The receiver checks `webhook-signature` (a header below), not a token of ours.
        security: [],
        parameters: Object.entries(HEADERS).map(([name, header]) => ({ name, in: 'header', ...(header as Json) })),
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: `${SCHEMA_REF}${eventName}` } } } },
        responses: {
          '2XX': { description: 'Received: the delivery has succeeded.' },
          '410': { description: 'Gone: the endpoint is disabled; nothing more is sent to it until it is enabled again.' },
          default: { description: 'Any other answer, or none within 10 s: the delivery is retried later.' },
        },
      },
    };
  }
  return { webhooks, schemas: added };
}
