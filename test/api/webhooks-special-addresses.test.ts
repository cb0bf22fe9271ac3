/**
 * Regression (issue 36 item 3): in production, webhook targets in every special-purpose block
 * that is not globally reachable are refused (docs/webhooks.md#endpoint-urls), as IP literals and
 * as names resolving to them, when an endpoint is saved and again at delivery. Production saved
 * `https://[::ffff:0:7f00:1]/h` (IPv4-translated, carries 127.0.0.1), `https://[::ffff:0:a9fe:a9fe]/h`
 * (carries 169.254.169.254) and `https://[fec0::1]/h` (site-local).
 *
 * The table is written here from the IANA IPv4 and IPv6 Special-Purpose Address Registries (one
 * address per block whose "Globally Reachable" is False), not read from the code it checks.
 */
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { guardedLookup, RefusedAddressError, type WebhookTargetRules } from '../../server/modules/webhooks/webhooks.targets.ts';
import { WebhookWorker } from '../../server/modules/webhooks/webhooks.worker.ts';
import { createTestApp, useTestApp } from '../helpers/app.ts';
import { expectProblem } from '../helpers/problems.ts';
import { createProduct } from '../helpers/products.ts';
import { createEndpoint, deliveriesOf, WEBHOOK_ENDPOINTS } from '../helpers/webhooks.ts';

/** One address in each block no webhook may reach, named by its registry entry. */
const REFUSED: [block: string, address: string][] = [
  // IANA IPv4 Special-Purpose Address Registry, Globally Reachable False.
  ['0.0.0.0/8 "this network"', '0.1.2.3'],
  ['10.0.0.0/8 private use', '10.1.2.3'],
  ['100.64.0.0/10 shared address space', '100.64.1.2'],
  ['127.0.0.0/8 loopback', '127.0.0.1'],
  ['169.254.0.0/16 link-local (cloud metadata)', '169.254.169.254'],
  ['172.16.0.0/12 private use', '172.16.1.2'],
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.100'],
  ['192.0.0.0/29 IPv4 service continuity (DS-Lite)', '192.0.0.1'],
  ['192.0.0.8/32 IPv4 dummy address', '192.0.0.8'],
  ['192.0.0.170/31 NAT64/DNS64 discovery', '192.0.0.170'],
  ['192.0.2.0/24 documentation (TEST-NET-1)', '192.0.2.1'],
  ['192.88.99.0/24 deprecated 6to4 relay anycast', '192.88.99.1'],
  ['192.168.0.0/16 private use', '192.168.1.2'],
  ['198.18.0.0/15 benchmarking', '198.18.0.1'],
  ['198.51.100.0/24 documentation (TEST-NET-2)', '198.51.100.1'],
  ['203.0.113.0/24 documentation (TEST-NET-3)', '203.0.113.1'],
  ['240.0.0.0/4 reserved', '240.0.0.1'],
  ['255.255.255.255/32 limited broadcast', '255.255.255.255'],
  ['224.0.0.0/4 multicast (not in the registry)', '224.0.0.1'],
  // IANA IPv6 Special-Purpose Address Registry, Globally Reachable False.
  ['::/128 unspecified', '::'],
  ['::1/128 loopback', '::1'],
  ['::ffff:0:0/96 IPv4-mapped, of a private address', '::ffff:192.168.0.1'],
  ['::ffff:0:0/96 IPv4-mapped, in hex, of the metadata address', '::ffff:a9fe:a9fe'],
  ['64:ff9b:1::/48 local-use IPv4/IPv6 translation', '64:ff9b:1::808:808'],
  ['100::/64 discard-only', '100::1'],
  ['100:0:0:1::/64 dummy IPv6 prefix', '100:0:0:1::1'],
  ['2001::/23 IETF protocol assignments', '2001:1ff::1'],
  ['2001::/32 Teredo', '2001::a00:5'],
  ['2001:2::/48 benchmarking', '2001:2::1'],
  ['2001:10::/28 deprecated ORCHID', '2001:10::1'],
  ['2001:db8::/32 documentation', '2001:db8::1'],
  ['3fff::/20 documentation', '3fff::1'],
  ['5f00::/16 segment routing SIDs', '5f00::1'],
  ['fc00::/7 unique local', 'fd12:3456::1'],
  ['fe80::/10 link-local', 'fe80::1'],
  // Not in the registry: deprecated or multicast, and IPv4 carried in IPv6.
  ['fec0::/10 deprecated site-local (the issue)', 'fec0::1'],
  ['ff00::/8 multicast', 'ff02::1'],
  ['::/96 deprecated IPv4-compatible', '::a00:5'],
  ['::ffff:0:0:0/96 IPv4-translated 127.0.0.1 (the issue)', '::ffff:0:7f00:1'],
  ['::ffff:0:0:0/96 IPv4-translated 169.254.169.254 (the issue)', '::ffff:0:a9fe:a9fe'],
  ['64:ff9b::/96 NAT64 of 169.254.169.254', '64:ff9b::a9fe:a9fe'],
  ['64:ff9b::/96 NAT64 of 10.0.0.5', '64:ff9b::10.0.0.5'],
  ['2002::/16 6to4 of 169.254.169.254', '2002:a9fe:a9fe::1'],
  ['2002::/16 6to4 of 192.168.0.1', '2002:c0a8:1::1'],
];

/** Globally reachable addresses, special-purpose or carrying a public IPv4 address: accepted. */
const ACCEPTED: [what: string, address: string][] = [
  ['a public IPv4 address', '93.184.216.34'],
  ['192.31.196.0/24 AS112-v4 (globally reachable)', '192.31.196.1'],
  ['a public IPv6 address', '2606:4700:4700::1111'],
  ['2620:4f:8000::/48 direct delegation AS112 (globally reachable)', '2620:4f:8000::1'],
  ['IPv4-mapped of a public address', '::ffff:8.8.8.8'],
  ['IPv4-translated of a public address', '::ffff:0:808:808'],
  ['64:ff9b::/96 NAT64 of a public address (globally reachable)', '64:ff9b::808:808'],
  ['2002::/16 6to4 of a public address', '2002:808:808::1'],
];

const family = (address: string): 4 | 6 => (isIP(address) === 6 ? 6 : 4);
const literal = (address: string): string => (family(address) === 6 ? `[${address}]` : address);

/** `host-<n>.example.test` resolves to the n-th address of both tables. */
const ADDRESSES = [...REFUSED, ...ACCEPTED].map(([, address]) => address);
const hostOf = (address: string): string => `host-${ADDRESSES.indexOf(address)}.example.test`;
async function resolveHost(host: string): Promise<LookupAddress[]> {
  const address = ADDRESSES[Number(/^host-(\d+)\.example\.test$/.exec(host)?.[1] ?? -1)];
  if (address === undefined) throw new Error(`${host}: not found`);
  return [{ address, family: family(address) }];
}

const PRODUCTION: WebhookTargetRules = { production: true, allowedHosts: [], resolveHost };

const production = useTestApp({ webhooks: { ...PRODUCTION, maxEndpoints: 100 } });

const save = (url: string) => production.request({ method: 'POST', url: WEBHOOK_ENDPOINTS, payload: { url, enabled_events: ['*'] }, token: production.admin.token });

describe('in production, an endpoint whose host is or resolves to a special-purpose address that is not globally reachable is 422 naming url', () => {
  it.each(REFUSED)('%s: %s as a literal and by name', async (_block, address) => {
    for (const url of [`https://${literal(address)}/h`, `https://${hostOf(address)}/h`]) {
      const problem = expectProblem(await save(url), 422, 'validation-error');
      expect(problem.errors?.map((e) => e.field), url).toEqual(['url']);
    }
  });

  it.each(ACCEPTED)('%s: %s is saved, as a literal and by name', async (_what, address) => {
    for (const url of [`https://${literal(address)}/h`, `https://${hostOf(address)}/h`]) {
      const res = await save(url);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(201);
    }
  });
});

/** What the delivery's connection lookup answers for `host` under the production rules. */
function lookUp(host: string): Promise<Error | LookupAddress[]> {
  return new Promise((resolve) => {
    guardedLookup(PRODUCTION)(host, { all: true }, (error, addresses) => resolve(error ?? (addresses as unknown as LookupAddress[])));
  });
}

describe('at delivery, the connection to a name resolving to such an address is refused', () => {
  it.each(REFUSED)('%s: %s', async (_block, address) => {
    expect(await lookUp(hostOf(address))).toBeInstanceOf(RefusedAddressError);
  });

  it.each(ACCEPTED)('%s: %s is connected to', async (_what, address) => {
    expect(await lookUp(hostOf(address))).toEqual([{ address, family: family(address) }]);
  });

  it("a production worker refuses the issue's three addresses, by literal and by name, for endpoints saved outside production", async () => {
    const t = await createTestApp();
    const worker = new WebhookWorker(t.db, PRODUCTION, { retryScheduleSeconds: [] });
    try {
      const issue = ['::ffff:0:7f00:1', '::ffff:0:a9fe:a9fe', 'fec0::1'];
      const endpoints = [];
      for (const address of issue) {
        for (const url of [`https://${literal(address)}/h`, `https://${hostOf(address)}/h`]) {
          endpoints.push(await createEndpoint(t, { url, enabled_events: ['product.created'] }));
        }
      }
      await createProduct(t);
      expect(await worker.deliverDue()).toBe(endpoints.length);
      for (const endpoint of endpoints) {
        const [delivery] = await deliveriesOf(t, endpoint.id);
        expect(delivery, endpoint.url).toMatchObject({ state: 'failed', last_status: null });
        expect(delivery?.last_error, endpoint.url).toMatch(/^refused: /);
      }
    } finally {
      await worker.stop();
      await t.close();
    }
  });
});
