/**
 * The tripwire of server/trpc/trpc-internals.ts, our one reach into tRPC's internals: each test
 * checks one thing that file relies on against the installed @trpc/server, so an upgrade that
 * changes it fails here, by name, before anything else misbehaves.
 */
import { initTRPC, lazy } from '@trpc/server';
import { forEachOpenApiProcedure, type OpenApiMeta, type OpenApiProcedureRecord } from 'trpc-to-openapi';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { AppRouter } from '../../server/router.ts';
import { listProcedures, middlewareResult, procedureRecord, routerTypeMembers } from '../../server/trpc/trpc-internals.ts';

type Meta = OpenApiMeta<{ tag?: string }>;
const t = initTRPC.meta<Meta>().create();

const sample = t.router({
  ping: t.procedure.meta({ tag: 'p' }).query(() => 'pong'),
  nested: t.router({
    create: t.procedure
      .meta({ tag: 'c', openapi: { method: 'POST', path: '/things' } })
      .input(z.object({ name: z.string() }))
      .output(z.object({ name: z.string() }))
      .mutation(({ input }) => input),
    deeper: t.router({ watch: t.procedure.subscription(async function* () {}) }),
  }),
});

describe('tRPC internals we rely on (server/trpc/trpc-internals.ts)', () => {
  it('a router lists its procedures by dotted path, with their kind and meta', () => {
    const listed = listProcedures<Meta>(sample).map(({ path, kind, meta }) => ({ path, kind, tag: meta?.tag }));
    expect(listed).toEqual([
      { path: 'ping', kind: 'query', tag: 'p' },
      { path: 'nested.create', kind: 'mutation', tag: 'c' },
      { path: 'nested.deeper.watch', kind: 'subscription', tag: undefined },
    ]);
  });

  it('each listed procedure is the one the public caller runs', async () => {
    const [ping] = listProcedures(sample);
    expect(ping?.procedure).toBeTypeOf('function');
    expect(await t.createCallerFactory(sample)({}).ping()).toBe('pong');
  });

  it('the record is the one trpc-to-openapi walks', () => {
    const seen: string[] = [];
    forEachOpenApiProcedure<Meta>(procedureRecord(sample) as OpenApiProcedureRecord, ({ path, meta }) => {
      seen.push(`${meta.openapi.method} ${meta.openapi.path} ${path}`);
    });
    expect(seen).toEqual(['POST /things nested.create']);
  });

  it('a lazy router is refused with a message, not listed without its procedures', () => {
    const lazyRouter = t.router({ later: lazy(async () => t.router({ x: t.procedure.query(() => 1) })) });
    expect(() => listProcedures(lazyRouter)).toThrow(/lazy routers are not supported/);
  });

  it('a router without the definition this file reads fails naming the seam', () => {
    expect(() => listProcedures({} as typeof sample)).toThrow(/tRPC's internals changed.*server\/trpc\/trpc-internals\.ts/);
  });

  it('a middleware can answer a result without calling next(), ahead of the input and output middlewares', async () => {
    const answering = t.middleware(async ({ next, getRawInput }) => {
      const replayed = ((await getRawInput()) as { replay?: string }).replay;
      return replayed === undefined ? next() : middlewareResult<Awaited<ReturnType<typeof next>>>({ value: replayed });
    });
    let ran = 0;
    const router = t.router({
      make: t.procedure
        .use(answering)
        .input(z.object({ replay: z.string().optional() }))
        .output(z.object({ value: z.string() }))
        .mutation(() => {
          ran++;
          return { value: 'fresh' };
        }),
    });
    const caller = t.createCallerFactory(router)({});
    expect(await caller.make({})).toEqual({ value: 'fresh' });
    expect(await caller.make({ replay: 'stored' })).toEqual({ value: 'stored' });
    expect(ran).toBe(1);
  });

  it("the router type's members the client build walks exist (checked by `npm run typecheck`)", () => {
    type Def = AppRouter[typeof routerTypeMembers.def];
    expectTypeOf<AppRouter>().toHaveProperty(routerTypeMembers.def);
    expectTypeOf<Def>().toHaveProperty(routerTypeMembers.record);
    expectTypeOf<Def>().toHaveProperty(routerTypeMembers.config);
    expectTypeOf<Def[typeof routerTypeMembers.config]>().toHaveProperty(routerTypeMembers.types);
    type Get = Def[typeof routerTypeMembers.record]['products']['get'];
    expectTypeOf<Get[typeof routerTypeMembers.def]>().toHaveProperty(routerTypeMembers.kind);
    expectTypeOf<Get[typeof routerTypeMembers.def][typeof routerTypeMembers.kind]>().toEqualTypeOf<'query'>();
    expectTypeOf<Get[typeof routerTypeMembers.def]>().toHaveProperty(routerTypeMembers.types);
    expect(Object.values(routerTypeMembers).length).toBe(5);
  });
});
