// The one address guard of webhooks and tools (addresses.ts): every non-public range refused, public ones kept.
// That webhooks and tools refuse private addresses end to end is shown by their own suites
// (backend/src/webhooks/webhooks.test.ts, worker/src/tools/runner.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AddressRefused, bareHost, checkHost, guardedLookup, isNonPublicAddress } from './addresses.js';

describe('address guard', () => {
  it('classifies addresses: every non-public range refused, public ones kept', () => {
    const nonPublic = ['127.0.0.1', '10.255.0.1', '172.31.255.255', '192.168.0.1', '169.254.0.1', '100.127.255.255', '0.1.2.3', '224.0.0.1', '255.255.255.255', '198.18.0.1',
      '::', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:a00:1', '::a00:1', 'fc00::', 'fdff:ffff::1', 'fe80::1%eth0', 'febf::1', 'ff02::1', '2001:db8::1', '64:ff9b::7f00:1', '64:ff9b:1::1', '2002:a00:1::', 'not-an-ip'];
    const publicOnes = ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2a00:1450:4001::1'];
    for (const a of nonPublic) expect([a, isNonPublicAddress(a)]).toEqual([a, true]);
    for (const a of publicOnes) expect([a, isNonPublicAddress(a)]).toEqual([a, false]);
  });

  it('checks a host: literals and names that resolve to non-public addresses are refused unless allowed', async () => {
    expect(bareHost('[::1]')).toBe('::1');
    await expect(checkHost('[::1]', false)).rejects.toEqual(new AddressRefused('::1 is a loopback, private, link-local or otherwise non-public address'));
    await expect(checkHost('10.0.0.1', true)).resolves.toEqual(['10.0.0.1']);
    await expect(checkHost('93.184.216.34', false)).resolves.toEqual(['93.184.216.34']);
    const refused = await checkHost('localhost', false).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AddressRefused);
    expect((refused as AddressRefused).reason).toMatch(/^resolves to (127\.0\.0\.1|::1), a loopback/);
    expect((await checkHost('localhost', true)).length).toBeGreaterThan(0);
  });

  it('connects only to the addresses it checked: a name resolving to loopback never reaches the server', async () => {
    let reached = 0;
    const server = http.createServer((_req, res) => (reached++, res.end('ok')));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const get = (allowPrivate: boolean) =>
      new Promise<string>((resolve, reject) => {
        const req = http.get({ host: 'localhost', port, family: 4, lookup: guardedLookup(allowPrivate) as never }, (res) => (res.resume(), res.on('end', () => resolve(String(res.statusCode)))));
        req.on('error', reject);
      });
    try {
      await expect(get(false)).rejects.toMatchObject({ code: 'EADDRREFUSED' });
      expect(reached).toBe(0);
      await expect(get(true)).resolves.toBe('200');
      expect(reached).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('stays out of the main entry: the console bundles schemas for the browser, where node:dns does not exist', () => {
    const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
    const outside = readdirSync(src).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    expect(outside).toContain('index.ts');
    for (const f of outside) expect([f, /from '\.\/node\//.test(readFileSync(path.join(src, f), 'utf8'))]).toEqual([f, false]);
  });
});
