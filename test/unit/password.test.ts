import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../server/auth/password.ts';

describe('hashPassword / verifyPassword round trip', () => {
  it('a password verifies against its own hash', async () => {
    const stored = await hashPassword('correct-horse-battery');
    expect(await verifyPassword('correct-horse-battery', stored)).toBe(true);
  });

  it('a wrong password does not verify', async () => {
    const stored = await hashPassword('correct-horse-battery');
    expect(await verifyPassword('correct-horse-batterz', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
    expect(await verifyPassword('Correct-Horse-Battery', stored)).toBe(false);
  });

  it('the longest allowed password (256 characters) round-trips', async () => {
    const password = 'x'.repeat(255) + 'y';
    const stored = await hashPassword(password);
    expect(await verifyPassword(password, stored)).toBe(true);
    expect(await verifyPassword('x'.repeat(256), stored)).toBe(false);
  });

  it('non-ASCII passwords round-trip, and canonically equivalent forms verify alike', async () => {
    const composed = 'pässwörd-ünïcode';
    const stored = await hashPassword(composed);
    expect(await verifyPassword(composed, stored)).toBe(true);
    expect(await verifyPassword(composed.normalize('NFD'), stored)).toBe(true);
  });
});

describe('the stored form is a salted scrypt hash that does not reveal the password', () => {
  it('it is scrypt$N$r$p$salt$hash and contains no trace of the password', async () => {
    const stored = await hashPassword('correct-horse-battery');
    const parts = stored.split('$');
    expect(parts).toHaveLength(6);
    expect(parts[0]).toBe('scrypt');
    expect(Number(parts[1])).toBeGreaterThanOrEqual(2 ** 14);
    expect(stored).not.toContain('correct-horse-battery');
  });

  it('the same password hashed twice gives two different hashes (salted), both verifying', async () => {
    const a = await hashPassword('same-password');
    const b = await hashPassword('same-password');
    expect(a).not.toBe(b);
    expect(await verifyPassword('same-password', a)).toBe(true);
    expect(await verifyPassword('same-password', b)).toBe(true);
  });
});

describe('a malformed stored hash never verifies (false, not an exception)', () => {
  const malformed: [string, string][] = [
    ['an empty string', ''],
    ['the plain password itself', 'correct-horse-battery'],
    ['another scheme', 'bcrypt$2b$10$abcdefghijklmnopqrstuv'],
    ['too few parts', 'scrypt$32768$8$1$c2FsdA'],
    ['empty parts', 'scrypt$$$$$'],
    ['non-numeric parameters', 'scrypt$abc$8$1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNo'],
    ['an invalid cost (not a power of two)', 'scrypt$1000$8$1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNo'],
    ['a cost beyond the memory limit', 'scrypt$1073741824$8$1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNo'],
  ];

  it.each(malformed)('%s', async (_label, stored) => {
    await expect(verifyPassword('correct-horse-battery', stored)).resolves.toBe(false);
  });

  it('a valid hash with its key truncated does not verify', async () => {
    const stored = await hashPassword('correct-horse-battery');
    await expect(verifyPassword('correct-horse-battery', stored.slice(0, -4))).resolves.toBe(false);
  });

  it('a valid hash with a different salt does not verify', async () => {
    const parts = (await hashPassword('correct-horse-battery')).split('$');
    parts[4] = Buffer.from('another-salt-16b').toString('base64url');
    await expect(verifyPassword('correct-horse-battery', parts.join('$'))).resolves.toBe(false);
  });
});
