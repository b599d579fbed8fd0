/**
 * Which IP addresses a crawler must not connect to on a web page's say-so:
 * the special-purpose ranges of the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries (RFC 6890 and successors) that are not globally
 * reachable, plus multicast and the reserved blocks. Pure: addresses in,
 * verdicts out; address-guard.ts applies them at connect time.
 *
 * Addresses are compared as bytes, never as strings, so every spelling of an
 * address is one address. Two IPv6 forms carry an IPv4 address and are judged
 * by it: IPv4-mapped (`::ffff:127.0.0.1`, which the kernel connects over IPv4)
 * and the NAT64 well-known prefix (`64:ff9b::10.0.0.1`, which a NAT64 gateway
 * forwards to that IPv4 address). So `::ffff:7f00:1` is loopback, and
 * `::ffff:8.8.8.8` is as public as 8.8.8.8.
 */
import net from 'node:net';

/** One special-purpose block. */
export interface SpecialRange {
  /** CIDR as IANA writes it, e.g. "169.254.0.0/16". */
  cidr: string;
  /** What it is, e.g. "link-local (cloud metadata lives here)". */
  name: string;
}

/** A parsed network: bytes (4 or 16) and a prefix length. */
export interface Network {
  bytes: Uint8Array;
  prefix: number;
  /** As written after normalisation, for messages. */
  cidr: string;
}

/** A refused address and the block that refused it. */
export interface Refusal {
  /** The address as it was given (a resolver's answer or a URL's IP literal). */
  address: string;
  /** The IPv4 address an IPv4-mapped or NAT64 address carries, when that decided. */
  embedded?: string;
  range: SpecialRange;
}

/**
 * Most specific first where blocks nest (`::1/128` before `::/96`), so a
 * refusal names the narrowest block.
 */
const SPECIAL: readonly SpecialRange[] = [
  { cidr: '0.0.0.0/8', name: '"this network" (0.0.0.0 reaches the local host)' },
  { cidr: '10.0.0.0/8', name: 'private (RFC 1918)' },
  { cidr: '100.64.0.0/10', name: 'shared address space (CGNAT; some cloud metadata)' },
  { cidr: '127.0.0.0/8', name: 'loopback' },
  { cidr: '169.254.0.0/16', name: 'link-local (cloud metadata, 169.254.169.254)' },
  { cidr: '172.16.0.0/12', name: 'private (RFC 1918)' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments' },
  { cidr: '192.0.2.0/24', name: 'documentation (TEST-NET-1)' },
  { cidr: '192.88.99.0/24', name: '6to4 relay anycast (deprecated)' },
  { cidr: '192.168.0.0/16', name: 'private (RFC 1918)' },
  { cidr: '198.18.0.0/15', name: 'benchmarking' },
  { cidr: '198.51.100.0/24', name: 'documentation (TEST-NET-2)' },
  { cidr: '203.0.113.0/24', name: 'documentation (TEST-NET-3)' },
  { cidr: '224.0.0.0/4', name: 'multicast' },
  { cidr: '240.0.0.0/4', name: 'reserved (and broadcast)' },
  { cidr: '::/128', name: 'unspecified' },
  { cidr: '::1/128', name: 'loopback' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)' },
  { cidr: '64:ff9b:1::/48', name: 'local-use NAT64' },
  { cidr: '100::/64', name: 'discard-only' },
  { cidr: '2001:db8::/32', name: 'documentation' },
  { cidr: '2001::/23', name: 'IETF protocol assignments (Teredo included)' },
  { cidr: '2002::/16', name: '6to4' },
  { cidr: '3fff::/20', name: 'documentation' },
  { cidr: '5f00::/16', name: 'SRv6 SIDs' },
  { cidr: 'fc00::/7', name: 'unique-local (fd00:ec2::254 is cloud metadata)' },
  { cidr: 'fe80::/10', name: 'link-local' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)' },
  { cidr: 'ff00::/8', name: 'multicast' },
];

const MAPPED_PREFIX = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
const NAT64_PREFIX = Uint8Array.from([0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0]);

/** The bytes of an IP address (4 or 16), or null when it is not one. A zone (`%eth0`) is ignored. */
export function addressBytes(address: string): Uint8Array | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const plain = bare.split('%')[0];
  const family = net.isIP(plain);
  if (family === 4) return Uint8Array.from(plain.split('.').map(Number));
  if (family === 6) return ipv6Bytes(plain);
  return null;
}

function ipv6Bytes(text: string): Uint8Array {
  let head = text;
  const tail: number[] = [];
  // A trailing dotted quad ("::ffff:1.2.3.4") is the last two groups.
  const lastColon = head.lastIndexOf(':');
  if (head.slice(lastColon + 1).includes('.')) {
    const quad = head
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    head = head.slice(0, lastColon + 1) + '0:0';
    tail.push(...quad);
  }
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined];
  const groups = (s: string | undefined) => (s === undefined || s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const before = groups(left);
  const after = groups(right);
  const all = right === undefined ? before : [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  if (tail.length === 4) bytes.set(tail, 12);
  return bytes;
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  return bytes.length === 16 && prefix.every((b, i) => bytes[i] === b);
}

/** The IPv4 address inside an IPv4-mapped or NAT64 (64:ff9b::/96) address, else null. */
function embeddedIpv4(bytes: Uint8Array): Uint8Array | null {
  return startsWith(bytes, MAPPED_PREFIX) || startsWith(bytes, NAT64_PREFIX) ? bytes.subarray(12) : null;
}

function contains(network: Network, bytes: Uint8Array): boolean {
  if (network.bytes.length !== bytes.length) return false;
  const whole = network.prefix >> 3;
  for (let i = 0; i < whole; i++) if (network.bytes[i] !== bytes[i]) return false;
  const bits = network.prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return (network.bytes[whole] & mask) === (bytes[whole] & mask);
}

/** Thrown by {@link parseNetwork}; the message says what is wrong, in config-file words. */
export class NetworkSyntaxError extends Error {
  override readonly name = 'NetworkSyntaxError';
}

/**
 * Parses "10.0.0.0/8", "fd00::/8" or a single address ("192.168.1.20", a /32
 * or /128). Host bits must be zero ("10.0.0.1/8" is refused with the network
 * it probably meant), so a typo cannot quietly open a wider block. An
 * IPv4-mapped IPv6 network is turned into its IPv4 network, since mapped
 * addresses are judged as IPv4.
 */
export function parseNetwork(text: string): Network {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const bytes = addressBytes(address);
  if (bytes === null || address.includes('%') || address.startsWith('[')) {
    throw new NetworkSyntaxError(`expected a network like "10.0.0.0/8" or "fd00::/8", or one IP address, got ${JSON.stringify(text)}`);
  }
  const max = bytes.length * 8;
  const prefixText = slash === -1 ? String(max) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) {
    throw new NetworkSyntaxError(`prefix length must be 0-${max} for ${bytes.length === 4 ? 'IPv4' : 'IPv6'}, got ${JSON.stringify(text)}`);
  }
  let prefix = Number(prefixText);
  let netBytes = bytes;
  if (bytes.length === 16 && prefix >= 96 && startsWith(bytes, MAPPED_PREFIX)) {
    netBytes = bytes.slice(12);
    prefix -= 96;
  }
  const masked = maskBytes(netBytes, prefix);
  if (!masked.every((b, i) => b === netBytes[i])) {
    throw new NetworkSyntaxError(
      `${JSON.stringify(text)} has host bits set after /${prefixText}; did you mean ${JSON.stringify(`${formatAddress(masked)}/${prefix}`)}?`,
    );
  }
  return { bytes: masked, prefix, cidr: `${formatAddress(masked)}/${prefix}` };
}

function maskBytes(bytes: Uint8Array, prefix: number): Uint8Array {
  const out = Uint8Array.from(bytes);
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    out[i] = out[i] & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}

/** Canonical text of 4 or 16 address bytes (IPv6 compressed as Node prints it). */
export function formatAddress(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  // URL's serializer compresses the longest run of zero groups, as RFC 5952 says.
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

const SPECIAL_NETWORKS: ReadonlyArray<{ range: SpecialRange; network: Network }> = SPECIAL.map((range) => ({ range, network: parseNetwork(range.cidr) }));

/**
 * The special-purpose block `address` falls in, unless one of `allowed`
 * contains it; null for a globally reachable address. Something that is not
 * an IP address at all is refused (it cannot be judged).
 */
export function refusalFor(address: string, allowed: readonly Network[] = []): Refusal | null {
  const bytes = addressBytes(address);
  if (bytes === null) return { address, range: { cidr: '-', name: 'not an IP address' } };
  const v4 = embeddedIpv4(bytes);
  const judged = v4 ?? bytes;
  const hit = SPECIAL_NETWORKS.find(({ network }) => contains(network, judged));
  if (!hit) return null;
  if (allowed.some((network) => contains(network, judged))) return null;
  return v4 ? { address, embedded: formatAddress(v4), range: hit.range } : { address, range: hit.range };
}

/** "127.0.0.1 (loopback, 127.0.0.0/8)"; for mapped forms "::ffff:7f00:1 (IPv4 127.0.0.1: loopback, 127.0.0.0/8)". */
export function describeRefusal(r: Refusal): string {
  const carried = r.embedded ? `IPv4 ${r.embedded}: ` : '';
  return `${r.address} (${carried}${r.range.name}, ${r.range.cidr})`;
}

/** Every refused block, for docs and tests. */
export function specialRanges(): readonly SpecialRange[] {
  return SPECIAL;
}
