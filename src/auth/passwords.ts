import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";

const scrypt = (password: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );

// OWASP's scrypt floor (N=2^17, r=8, p=1) costs 128 MiB and ~200 ms per login on 2 cores; 2^15
// keeps logins fast while the parameters stored with each hash allow raising it later.
const N = 1 << 15;
const R = 8;
const P = 1;
const KEYLEN = 32;
const MAXMEM = 256 * N * R;

/** `scrypt$N$r$p$salt$hash`, base64 salt and hash: the parameters travel with the hash. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEYLEN, { N, r: R, p: P, maxmem: MAXMEM });
  return ["scrypt", N, R, P, salt.toString("base64"), key.toString("base64")].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, "base64");
  const expected = Buffer.from(parts[5]!, "base64");
  const key = await scrypt(password, salt, expected.length, { N: n, r, p, maxmem: 256 * n * r });
  return timingSafeEqual(key, expected);
}

/** A random password a person can copy: 20 characters of base64url (~120 bits). */
export function generatePassword(): string {
  return randomBytes(15).toString("base64url");
}
