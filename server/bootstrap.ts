import { randomBytes } from 'node:crypto';
import type { Config } from './config.ts';
import type { Db } from './db/client.ts';
import { ensureAdmin, findUserByEmail, toUser } from './modules/users/users.service.ts';
import type { User } from './modules/users/users.schemas.ts';

export interface BootstrapResult {
  admin: User | undefined;
  /** Set only when a development admin was just created with a generated password. */
  generatedPassword?: string;
}

/**
 * ADMIN_EMAIL + ADMIN_PASSWORD make sure that admin exists. In development without them,
 * `admin@localhost` is created once with a generated password that is printed once.
 */
export async function bootstrapAdmin(db: Db, config: Config): Promise<BootstrapResult> {
  if (config.admin) {
    const { user } = await ensureAdmin({ db, email: config.admin.email, password: config.admin.password });
    return { admin: user };
  }
  if (config.env !== 'development') return { admin: undefined };
  const existing = await findUserByEmail({ db, email: 'admin@localhost' });
  if (existing) return { admin: existing.role === 'admin' ? toUser(existing) : undefined };
  const password = randomBytes(12).toString('base64url');
  const { user } = await ensureAdmin({ db, email: 'admin@localhost', password });
  return { admin: user, generatedPassword: password };
}
