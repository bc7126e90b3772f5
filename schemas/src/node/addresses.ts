// Where a server-side request may point (docs/design.md §8 webhooks, §9 tools): one address guard for the
// backend's webhook deliveries and the worker's HTTP tools. A URL whose host resolves to a loopback, private,
// link-local, unique-local or otherwise non-public address is refused unless the service allows private
// addresses (WEBHOOK_ALLOW_PRIVATE, TOOLS_ALLOW_PRIVATE_ADDRESSES), so an admin or a bot's tool cannot make a
// service call into its own network (cloud metadata at 169.254.169.254, Redis on 127.0.0.1, …). Webhooks are
// checked when saved and on every attempt; both callers connect only to the address they checked
// (guardedLookup), so a DNS answer that changes between the check and the connection (rebinding) changes nothing.
// Node only (node:dns, node:net): reached as `@voice-platform/schemas/node`, which the console never imports.
// Refusals are an AddressRefused; each caller maps it to its own error (the backend's invalid URL or delivery
// error, the worker's ToolError `refused`).
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP } from 'node:net';

/** IPv4 ranges that are not the public internet (IANA special-purpose registry). */
const V4_BLOCKED: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

function v4Number(address: string): number | null {
  const parts = address.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

const V4_RANGES = V4_BLOCKED.map(([base, bits]) => ({ base: v4Number(base)!, size: 2 ** (32 - bits) }));

function v4Blocked(n: number): boolean {
  return V4_RANGES.some((r) => n >= r.base && n < r.base + r.size);
}

/** The eight 16-bit words of an IPv6 address (zone id ignored, trailing dotted quad allowed), or null. */
function ipv6Words(input: string): number[] | null {
  let s = input.split('%')[0]!.toLowerCase();
  let tail: number[] = [];
  const dotted = /^(.*):(\d{1,3}(?:\.\d{1,3}){3})$/.exec(s);
  if (dotted) {
    const n = v4Number(dotted[2]!);
    if (n === null) return null;
    tail = [Math.floor(n / 65536), n % 65536];
    s = dotted[1]!.endsWith(':') ? `${dotted[1]}:` : dotted[1]!;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const words = (part: string) => (part === '' ? [] : part.split(':').map((h) => (/^[0-9a-f]{1,4}$/.test(h) ? parseInt(h, 16) : NaN)));
  const head = words(halves[0]!);
  const rest = halves.length === 2 ? words(halves[1]!) : [];
  const given = head.length + rest.length + tail.length;
  if (halves.length === 2 ? given > 7 : given !== 8) return null;
  const all = [...head, ...Array<number>(8 - given).fill(0), ...rest, ...tail];
  return all.some((w) => Number.isNaN(w)) ? null : all;
}

function v6Blocked(w: number[]): boolean {
  const zero = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  const embedded = (hi: number, lo: number) => v4Blocked(hi * 65536 + lo);
  if (zero(0, 6)) return true; // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d
  if (zero(0, 5) && w[5] === 0xffff) return embedded(w[6]!, w[7]!); // IPv4-mapped ::ffff:a.b.c.d
  if (w[0] === 0x64 && w[1] === 0xff9b) return zero(2, 6) ? embedded(w[6]!, w[7]!) : true; // NAT64 (well-known; local-use 64:ff9b:1::/48)
  if (w[0] === 0x2002) return embedded(w[1]!, w[2]!); // 6to4 carries an IPv4 address
  if (w[0] === 0x0100 && zero(1, 4)) return true; // discard-only
  if (w[0] === 0x2001 && w[1]! < 0x0200) return true; // IETF protocol assignments (Teredo, ORCHID, …)
  if (w[0] === 0x2001 && w[1] === 0x0db8) return true; // documentation
  if ((w[0]! & 0xfe00) === 0xfc00) return true; // unique-local fc00::/7
  if ((w[0]! & 0xffc0) === 0xfe80 || (w[0]! & 0xffc0) === 0xfec0) return true; // link-local, old site-local
  if ((w[0]! & 0xff00) === 0xff00) return true; // multicast
  return false;
}

/** True for any address that is not a public unicast address (unparseable counts as non-public). */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address.split('%')[0]!);
  if (family === 4) return v4Blocked(v4Number(address)!);
  if (family === 6) {
    const w = ipv6Words(address);
    return w === null || v6Blocked(w);
  }
  return true;
}

/** URL.hostname keeps IPv6 literals in brackets. */
export const bareHost = (hostname: string) => (hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname);

export class AddressRefused extends Error {
  readonly code = 'EADDRREFUSED';
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'AddressRefused';
  }
}

const refusal = (host: string, address: string) =>
  new AddressRefused(
    host === address
      ? `${address} is a loopback, private, link-local or otherwise non-public address`
      : `resolves to ${address}, a loopback, private, link-local or otherwise non-public address`,
  );

/** Every address `host` resolves to (an IP literal: itself); throws AddressRefused when one is
 *  non-public and private addresses are not allowed, or when the host does not resolve in time. */
export async function checkHost(host: string, allowPrivate: boolean, timeoutMs = 5000): Promise<string[]> {
  const name = bareHost(host);
  if (isIP(name)) {
    if (!allowPrivate && isNonPublicAddress(name)) throw refusal(name, name);
    return [name];
  }
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new AddressRefused('host could not be resolved in time')), timeoutMs);
    dnsLookup(name, { all: true, verbatim: true }, (err, found) => {
      clearTimeout(timer);
      if (err || found.length === 0) reject(new AddressRefused('host does not resolve'));
      else resolve(found);
    });
  });
  const bad = allowPrivate ? undefined : addresses.find((a) => isNonPublicAddress(a.address));
  if (bad) throw refusal(name, bad.address);
  return addresses.map((a) => a.address);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for http.request: resolves, refuses non-public answers (unless allowed), and hands the
 *  socket exactly the addresses it checked. (IP literals never reach a lookup: check them first.) */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupAllOptions | { all?: boolean; family?: number }, callback: LookupCallback): void => {
    dnsLookup(hostname, { family: options.family ?? 0, all: true, verbatim: true } as LookupAllOptions, (err, found) => {
      if (err) return callback(err, []);
      if (found.length === 0) return callback(Object.assign(new Error('host does not resolve'), { code: 'ENOTFOUND' }), []);
      const bad = allowPrivate ? undefined : found.find((a) => isNonPublicAddress(a.address));
      if (bad) return callback(refusal(hostname, bad.address), []);
      if (options.all) callback(null, found);
      else callback(null, found[0]!.address, found[0]!.family);
    });
  };
}
