import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { TokenService } from '../../server/auth/tokens.ts';
import { VerifiedTokens } from '../../server/auth/verified-tokens.ts';

describe('VerifiedTokens', () => {
  it('answers a stored token until its exp, and forgets it from exp on (exp <= now is expired)', () => {
    const tokens = new VerifiedTokens<string>(4);
    tokens.set('a.b.c', 'caller', { from: 0, until: 1000 });
    expect(tokens.get('a.b.c', 999)).toBe('caller');
    expect(tokens.get('a.b.c', 1000)).toBeUndefined();
    expect(tokens.size).toBe(0);
    expect(tokens.get('a.b.c', 999)).toBeUndefined();
  });

  it('answers a stored token only from the first second of its window on: a clock set back finds no entry', () => {
    const tokens = new VerifiedTokens<string>(4);
    tokens.set('a.b.c', 'caller', { from: 500, until: 1000 });
    expect(tokens.get('a.b.c', 500)).toBe('caller');
    expect(tokens.get('a.b.c', 499)).toBeUndefined();
    expect(tokens.size).toBe(0);
  });

  it('knows only exact texts', () => {
    const tokens = new VerifiedTokens<string>(4);
    tokens.set('a.b.c', 'caller', { from: 0, until: 1000 });
    expect(tokens.get('a.b.C', 0)).toBeUndefined();
    expect(tokens.get('a.b.c ', 0)).toBeUndefined();
    expect(tokens.get('a.b.', 0)).toBeUndefined();
  });

  it('holds at most its capacity, dropping the least recently used', () => {
    const tokens = new VerifiedTokens<number>(3);
    for (const n of [1, 2, 3]) tokens.set(`t${n}`, n, { from: 0, until: 1000 });
    expect(tokens.get('t1', 0)).toBe(1); // t2 is now the least recently used
    tokens.set('t4', 4, { from: 0, until: 1000 });
    expect(tokens.size).toBe(3);
    expect(tokens.get('t2', 0)).toBeUndefined();
    expect([tokens.get('t1', 0), tokens.get('t3', 0), tokens.get('t4', 0)]).toEqual([1, 3, 4]);
    for (let n = 5; n < 100; n++) tokens.set(`t${n}`, n, { from: 0, until: 1000 });
    expect(tokens.size).toBe(3);
    expect(tokens.get('t99', 0)).toBe(99);
  });

  it('storing a token again replaces it without growing', () => {
    const tokens = new VerifiedTokens<number>(2);
    tokens.set('t', 1, { from: 0, until: 1000 });
    tokens.set('t', 2, { from: 0, until: 2000 });
    expect(tokens.size).toBe(1);
    expect(tokens.get('t', 1500)).toBe(2);
  });

  it('a capacity of 0 remembers nothing; a capacity that is no whole number is refused', () => {
    const none = new VerifiedTokens<number>(0);
    none.set('t', 1, { from: 0, until: 1000 });
    expect(none.get('t', 0)).toBeUndefined();
    expect(() => new VerifiedTokens(-1)).toThrow(RangeError);
    expect(() => new VerifiedTokens(1.5)).toThrow(RangeError);
  });
});

describe('TokenService remembers the tokens it verified', () => {
  const settings = { secret: 'a-test-secret-of-at-least-32-bytes!!', issuer: 'order-service', audience: 'order-service', accessTokenTtlSeconds: 900 };

  it('a second request with the same token gets the same caller, which nobody can change (its scopes included)', async () => {
    const tokens = new TokenService(settings);
    const token = await tokens.mint({ sub: '7', role: 'customer', scope: 'orders:read' });
    const first = await tokens.authenticate(`Bearer ${token}`);
    const second = await tokens.authenticate(`Bearer ${token}`);
    expect(second).toBe(first);
    expect(first).toMatchObject({ role: 'customer', userId: 7 });
    expect(Object.isFrozen(first)).toBe(true);
    const scopes = first?.scopes as Set<string>;
    expect(scopes.has('orders:read')).toBe(true);
    expect(() => scopes.add('users:write')).toThrow(TypeError);
    expect(() => scopes.delete('orders:read')).toThrow(TypeError);
    expect(() => scopes.clear()).toThrow(TypeError);
    expect([...scopes]).toEqual(['orders:read']);
  });

  it('a token signed with our secret whose typ is no access token is refused every time, never remembered', async () => {
    const tokens = new TokenService(settings);
    const idToken = await new SignJWT({ role: 'admin' })
      .setProtectedHeader({ alg: 'HS256', typ: 'id_token+jwt' })
      .setSubject('1')
      .setIssuer(settings.issuer)
      .setAudience(settings.audience)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(settings.secret));
    for (let i = 0; i < 2; i++) await expect(tokens.authenticate(`Bearer ${idToken}`)).rejects.toMatchObject({ slug: 'unauthorized', headers: { 'www-authenticate': expect.stringContaining('error="invalid_token"') } });
  });

  it('a token minted by another instance (another process) is verified here, its scopes read into the fixed set', async () => {
    const token = await new TokenService(settings).mint({ sub: 'client-1', role: 'service', scope: 'orders:read products:write' });
    const caller = await new TokenService(settings).authenticate(`Bearer ${token}`);
    expect(caller).toMatchObject({ role: 'service', clientId: 'client-1' });
    expect([...(caller?.scopes as Set<string>)]).toEqual(['orders:read', 'products:write']);
  });
});
