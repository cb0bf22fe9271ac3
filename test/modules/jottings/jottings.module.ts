/**
 * A module that exists only in the tests (test/api/module-list.test.ts): a table, a setting
 * (`JOTTING_MAX_LENGTH`), a background job (a sweeper of done jottings) and two procedures. Mounted
 * by adding it to the module list, nothing else: its router on both doors, its setting validated
 * with the configuration, its job started and stopped by the app.
 */
import { asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { purgeJob } from '../../../server/db/purge.ts';
import { DomainError } from '../../../server/errors/problems.ts';
import { SettingsKey } from '../../../server/lib/settings.ts';
import { defineModule, defineSettings } from '../../../server/modules/module.ts';
import { publicProcedure, router } from '../../../server/trpc/trpc.ts';
import { jottings } from './jottings.table.ts';

export interface JottingSettings {
  maxLength: number;
  /** How often done jottings are swept away. */
  sweepIntervalMs: number;
}

export const jottingSettings = new SettingsKey<JottingSettings>('jottings', { maxLength: 140, sweepIntervalMs: 60_000 });

/** What each app's sweeper did, in the order its apps were built: the test reads its lifecycle. */
export const sweeperJournals: string[][] = [];

const Jotting = z.object({ id: z.number().int(), body: z.string(), done: z.boolean() });

const jottingsRouter = router({
  create: publicProcedure
    .meta({ openapi: { method: 'POST', path: '/jottings', summary: 'Jot something down' }, rest: { status: 201, kind: 'item' } })
    .input(z.strictObject({ body: z.string().min(1), done: z.boolean().default(false) }))
    .output(Jotting)
    .mutation(async ({ ctx, input }) => {
      const { maxLength } = ctx.settings.get(jottingSettings);
      if (input.body.length > maxLength) throw new DomainError('validation-error', `A jotting is at most ${maxLength} characters (JOTTING_MAX_LENGTH).`);
      const [row] = await ctx.db.insert(jottings).values(input).returning();
      if (!row) throw new Error('insert returned nothing');
      return row;
    }),
  list: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/jottings', summary: 'Every jotting' }, rest: { kind: 'item' } })
    .input(z.strictObject({}))
    .output(z.object({ jottings: z.array(Jotting) }))
    .query(async ({ ctx }) => ({ jottings: await ctx.db.select().from(jottings).orderBy(asc(jottings.id)) })),
});

export const jottingsModule = defineModule({
  name: 'jottings',
  router: jottingsRouter,
  tables: [jottings],
  settings: defineSettings({
    key: jottingSettings,
    title: 'Jottings (a test-only module)',
    env: { JOTTING_MAX_LENGTH: z.coerce.number().int().positive().max(10_000).default(140).describe('The longest jotting, in characters.') },
    read: (e) => ({ ...jottingSettings.defaults, maxLength: e.JOTTING_MAX_LENGTH }),
  }),
  jobs: ({ db, log, settings }) => {
    const sweep = purgeJob(log, settings.get(jottingSettings).sweepIntervalMs, 'done jottings', async () => (await db.delete(jottings).where(eq(jottings.done, true)).returning()).length);
    const journal: string[] = [];
    sweeperJournals.push(journal);
    return [
      {
        name: sweep.name,
        start: () => {
          journal.push('started');
          return sweep.start();
        },
        stop: async () => {
          await sweep.stop();
          journal.push('stopped');
        },
      },
    ];
  },
});
