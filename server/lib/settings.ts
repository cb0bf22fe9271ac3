/**
 * Module settings (docs/architecture.md#adding-a-module): each module that has settings names
 * them with a key of its own, holding its values when nothing is set; the app carries one
 * `Settings` (the values read from the environment at start, or a test's) and a module reads its
 * own with `settings.get(key)`. Nothing here, nor in the context that carries it, names a module.
 */

/** A module's settings: whose they are, and their values when nothing is set. */
export class SettingsKey<T extends object> {
  constructor(
    readonly module: string,
    readonly defaults: T,
  ) {}
}

/** The settings of every module: a module's values, or its key's defaults when none were given. */
export class Settings {
  readonly #values: ReadonlyMap<SettingsKey<object>, object>;

  constructor(values: Iterable<readonly [SettingsKey<object>, object]> = []) {
    this.#values = new Map(values);
  }

  get<T extends object>(key: SettingsKey<T>): T {
    return (this.#values.get(key) as T | undefined) ?? key.defaults;
  }
}

/**
 * Work a module runs in the background (a purge, a delivery worker): started once the app is
 * ready, stopped before the database closes (server/app.ts runs every module's).
 */
export interface BackgroundJob {
  /** What it does, for the logs. */
  readonly name: string;
  start(): void | Promise<void>;
  /** Lets the work in progress finish; resolves once it has. */
  stop(): Promise<void>;
}
