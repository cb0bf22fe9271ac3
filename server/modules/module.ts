/**
 * What a module brings, declared in its folder (`<name>.module.ts`; docs/architecture.md#adding-a-module):
 * its router, its tables, its settings (environment variables, validated at start with the rest of
 * the configuration and documented in .env.example from this declaration) and its background jobs.
 * The module list (modules.ts) mounts them: router.ts builds the router from it, config.ts reads
 * its settings, app.ts starts and stops its jobs, none of them naming a module. Its scopes,
 * problem types, links and event types it declares beside its router, as before.
 */
import type { AnyTRPCRouter } from '@trpc/server';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import type { Db } from '../db/handle.ts';
import type { Listen } from '../db/client.ts';
import { Settings, type BackgroundJob, type SettingsKey } from '../lib/settings.ts';
import { router } from '../trpc/trpc.ts';

/**
 * A module's environment variables and how they become its settings. Each variable's schema
 * carries its `.describe()` text: the comment above it in .env.example (a line break, a new
 * comment line), and its default the value shown.
 */
export interface ModuleSettingsDeclaration<T extends object, Shape extends z.ZodRawShape = z.ZodRawShape> {
  key: SettingsKey<T>;
  /** The heading of its section in .env.example. */
  title: string;
  env: Shape;
  /** The settings from its variables, once valid; `production`: NODE_ENV is production. */
  read(values: z.output<z.ZodObject<Shape>>, base: { production: boolean }): T;
  /** Rules between variables (given every variable read, valid), each broken one a problem naming its variable. */
  check?(values: z.output<z.ZodObject<Shape>> & Readonly<Record<string, unknown>>): string[];
}

/** What a module's jobs are made with. */
export interface JobDeps {
  db: Db;
  /** LISTEN on a channel (server/db/client.ts). */
  listen: Listen;
  log: FastifyBaseLogger;
  settings: Settings;
}

export interface AppModule<Name extends string = string, Router extends AnyTRPCRouter = AnyTRPCRouter, S extends object = object> {
  /** Its key in the router: `/trpc/<name>.<procedure>`. */
  name: Name;
  router: Router;
  /** Its tables (`<name>.table.ts`, which drizzle.config.ts reads for the migrations). */
  tables?: readonly PgTable[];
  settings?: ModuleSettingsDeclaration<S>;
  /** Its background jobs, made as the app is built; started once it is ready, stopped before the database closes. */
  jobs?: (deps: JobDeps) => BackgroundJob[];
}

/** A module's declaration, with its name and router's types kept for the app's router. */
export function defineModule<const Name extends string, Router extends AnyTRPCRouter, S extends object = never>(module: AppModule<Name, Router, S>): AppModule<Name, Router, S> {
  return module;
}

/** A settings declaration, typed by its variables. */
export function defineSettings<T extends object, Shape extends z.ZodRawShape>(declaration: ModuleSettingsDeclaration<T, Shape>): ModuleSettingsDeclaration<T, Shape> {
  return declaration;
}

/** The routers of a module list, by name: the app router's shape. */
export type RoutersOf<Modules extends readonly AppModule[]> = { [M in Modules[number] as M['name']]: M['router'] };

/** The app's router from a module list, each module's router under its name, in the list's order. */
export function routerOf<const Modules extends readonly AppModule[]>(modules: Modules) {
  return router(Object.fromEntries(modules.map((module) => [module.name, module.router])) as RoutersOf<Modules>);
}

/** The settings a module list's modules take, by module name (a test's overrides). */
export type SettingsOf<Modules extends readonly AppModule[]> = {
  [M in Modules[number] as [SettingsTypeOf<M>] extends [never] ? never : M['name']]?: Partial<SettingsTypeOf<M>>;
};

/** The type of a module's settings; `never` for a module without any. */
type SettingsTypeOf<M> = M extends { settings?: ModuleSettingsDeclaration<infer S> } ? S : never;

/** Every module's settings, from its defaults overridden field by field by `overrides[name]`. */
export function settingsFrom(modules: readonly AppModule[], base: Settings, overrides: Readonly<Record<string, object | undefined>>): Settings {
  return new Settings(
    modules.flatMap(({ name, settings }) => (settings === undefined ? [] : [[settings.key, { ...base.get(settings.key), ...overrides[name] }] as const])),
  );
}

/** The section a module's settings have in .env.example, from its declaration. */
export function envExampleSection(declaration: ModuleSettingsDeclaration<object>): string {
  const lines = [`# --- ${declaration.title} ---`];
  for (const [name, schema] of Object.entries(declaration.env)) {
    const described = schema as z.ZodType;
    for (const line of (described.description ?? '').split('\n').filter((text) => text !== '')) lines.push(`# ${line}`);
    const fallback = described.safeParse(undefined);
    lines.push(`# ${name}=${fallback.success && fallback.data !== undefined ? String(fallback.data) : ''}`);
  }
  return `${lines.join('\n')}\n`;
}
