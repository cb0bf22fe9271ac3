/**
 * PATCH in the OpenAPI document (docs/api.md#writes): the request body of both kinds, the JSON
 * Patch operations (RFC 6902) and the merge patch documents (RFC 7396), each derived from the PUT
 * body of the same path.
 */
import { createSchema, type ZodOpenApiOperationObject } from 'zod-openapi';
import { API_PREFIX } from '../lib/api-paths.ts';
import { MetadataMergePatch } from '../modules/common.schemas.ts';
import type { PatchMeta } from '../trpc/meta.ts';
import { ref, type Json } from './openapi-components.ts';
import type { RestRoute } from './rest-routes.ts';

const pascal = (path: string) => path.split(/[.-]/).map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('');

/** The component naming the merge patch document of `route` (a PATCH): `OrdersPatchBody` for `orders.patch`. */
export const mergePatchName = (route: RestRoute): string => `${pascal(route.procedurePath)}Body`;

/**
 * PATCH, both ways (docs/api.md#writes): a merge patch (RFC 7396; `application/json` is read as
 * one) is the resource's writable document with every member optional (or the schema the
 * operation names); a JSON Patch (RFC 6902) an array of operations. The patched document must be
 * a valid PUT body.
 */
export function patchRequestBody(patch: PatchMeta, mergePatchComponent: string): NonNullable<ZodOpenApiOperationObject['requestBody']> {
  const merge = { schema: patch.mergePatch ?? ref('schemas', mergePatchComponent), example: patch.examples.mergePatch };
  return {
    required: true,
    description:
      'A merge patch (RFC 7396, `application/merge-patch+json`; `application/json` is read as one) or a JSON Patch (RFC 6902, ' +
      '`application/json-patch+json`). The patched resource must be a valid PUT body: 422 otherwise; a path that does not exist or a failed `test` is 409.',
    content: {
      'application/merge-patch+json': merge,
      'application/json-patch+json': { schema: ref('schemas', 'JsonPatch'), example: patch.examples.jsonPatch },
      'application/json': merge,
    },
  };
}

/** RFC 6901 JSON Pointer: empty (the whole document) or `/`-separated tokens, `~` only as ~0 or ~1. */
const jsonPointer = (description: string): Json => ({ type: 'string', pattern: '^(/([^~/]|~[01])*)*$', description });

/** RFC 6902 section 4: one schema per operation. Members an operation does not define are ignored. */
const jsonPatchOperation = (op: string, description: string, members: Record<string, Json>): Json => ({
  type: 'object',
  description,
  required: ['op', ...Object.keys(members)],
  properties: { op: { type: 'string', const: op }, ...members },
});
const patchValue = { description: 'Any JSON value, null included.' };
export const JSON_PATCH_SCHEMAS: Record<string, Json> = {
  JsonPatch: {
    type: 'array',
    description: 'JSON Patch operations (RFC 6902), applied in order; all or none.',
    maxItems: 200,
    items: {
      oneOf: ['Add', 'Remove', 'Replace', 'Move', 'Copy', 'Test'].map((op) => ref('schemas', `JsonPatch${op}`)),
    },
  },
  JsonPatchAdd: jsonPatchOperation('add', 'Adds a value (`/items/-` appends).', {
    path: jsonPointer('Where to add, e.g. /address or /items/-.'),
    value: patchValue,
  }),
  JsonPatchRemove: jsonPatchOperation('remove', 'Removes a member.', { path: jsonPointer('The member to remove.') }),
  JsonPatchReplace: jsonPatchOperation('replace', 'Replaces an existing value.', {
    path: jsonPointer('The value to replace, e.g. /items/0/quantity.'),
    value: patchValue,
  }),
  JsonPatchMove: jsonPatchOperation('move', 'Moves a value.', { from: jsonPointer('The value to move.'), path: jsonPointer('Where to.') }),
  JsonPatchCopy: jsonPatchOperation('copy', 'Copies a value.', { from: jsonPointer('The value to copy.'), path: jsonPointer('Where to.') }),
  JsonPatchTest: jsonPatchOperation('test', 'Fails the whole patch (409) unless the value equals `value`.', {
    path: jsonPointer('The value to compare.'),
    value: patchValue,
  }),
};

/**
 * The merge patch document (RFC 7396): every member of the PUT body optional; `null` removes a
 * member, which a nullable field (`address`, `discount_code`) and the read-only ones allow; on a
 * required field it is refused (422); an array replaces the whole array; `metadata` merges.
 */
function mergePatchSchema(orderDocument: Json | undefined): Json {
  const properties = { ...((orderDocument?.properties as Record<string, Json> | undefined) ?? {}) };
  // Metadata merges key by key (docs/api.md#metadata): a key set to null is removed.
  if (properties.metadata) properties.metadata = createSchema(MetadataMergePatch, { io: 'input' }).schema as Json;
  for (const [name, schema] of Object.entries(properties)) {
    if (schema.readOnly === true) {
      const type = { ...schema };
      delete type.readOnly;
      delete type.description;
      properties[name] = { anyOf: [type, { type: 'null' }], readOnly: true, description: schema.description };
    }
  }
  return {
    type: 'object',
    description: 'Members to change; `null` removes a nullable member; an array replaces the whole array. Unknown members are refused (422).',
    // A member left out is unchanged: no default applies.
    properties: JSON.parse(JSON.stringify(properties), (key, value: unknown) => (key === 'default' ? undefined : value)) as Json,
    additionalProperties: false,
  };
}

/**
 * The merge patch document of every PATCH that names none of its own, from the PUT body of its
 * path as `paths` (the rendered document's) describes it.
 */
export function mergePatchSchemas(routes: readonly RestRoute[], paths: unknown): Record<string, Json> {
  const documentPaths = paths as Record<string, { put?: { requestBody?: { content?: Record<string, { schema?: Json }> } } }>;
  const schemas: Record<string, Json> = {};
  for (const route of routes.filter((r) => r.rest.patch && !r.rest.patch.mergePatch)) {
    const putBody = documentPaths[API_PREFIX + route.path]?.put?.requestBody?.content?.['application/json']?.schema;
    if (!putBody) throw new Error(`${route.procedurePath}: a PATCH needs a PUT on ${route.path} to describe its merge patch`);
    schemas[mergePatchName(route)] = mergePatchSchema(putBody);
  }
  return schemas;
}
