/**
 * The client's router declarations (client-sdk/src/app-router.ts) are generated from the server's
 * router type and committed, so a change to what front ends get shows in review. Like the REST
 * types, the committed file must be what the generator writes today.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { routerTypesText } from '../../scripts/client-build.ts';
import { generatedRouterFile } from '../../scripts/client-router-types.ts';

// The file depends on the code alone, not on the database: check it once.
describe.skipIf(process.env.TEST_DB === 'postgres')('the committed router declarations of the client', () => {
  it('are what the server router generates (else run `npm run client:router-types`)', () => {
    const committed = readFileSync(generatedRouterFile, 'utf8');
    expect(committed === routerTypesText(), 'client-sdk/src/app-router.ts is stale: run `npm run client:router-types` and commit it').toBe(true);
  }, 60_000);
});
