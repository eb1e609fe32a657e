// Where the CLI finds its gateway and key: flags, then the environment, then the config file that
// `redline login` writes ($XDG_CONFIG_HOME/redline/config.json, default ~/.config), then defaults.
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { UsageError } from "./errors.js";

/** The gateway `pnpm start` serves (PORT 8080 on HOST 127.0.0.1, docs/configuration.md). */
export const DEFAULT_API_URL = "http://127.0.0.1:8080";

/** The stored settings; both optional (a file written by an older login may lack the URL). */
export interface StoredConfig {
  api_key?: string;
  api_url?: string;
}

/** The environment variables the CLI reads (nothing else reads process.env). */
export interface CliEnv {
  REDLINE_API_KEY?: string;
  REDLINE_API_URL?: string;
  XDG_CONFIG_HOME?: string;
  HOME?: string;
  /** Set: unexpected errors print their stack. */
  REDLINE_DEBUG?: string;
}

/** The config file's path: $XDG_CONFIG_HOME/redline/config.json, else ~/.config/redline/config.json. */
export function configPath(env: CliEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "redline", "config.json");
}

/** The stored config; {} when there is no file. A file that is not a JSON object is a usage error (exit 2). */
export async function readConfig(env: CliEnv): Promise<StoredConfig> {
  const path = configPath(env);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw err;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as StoredConfig;
  } catch {
    // reported below
  }
  throw new UsageError(`${path} is not a JSON object: fix it or run \`redline login\` again`);
}

/**
 * Writes the config file with mode 0600 (its directory 0700): a temporary file in the same
 * directory, chmod before any secret could be read from it, then renamed over the old one.
 */
export async function writeConfig(env: CliEnv, config: StoredConfig): Promise<string> {
  const path = configPath(env);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, "", { mode: 0o600 });
  await chmod(tmp, 0o600);
  await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, path);
  return path;
}

/** A gateway and key to call it with. */
export interface Connection {
  apiUrl: string;
  apiKey: string;
}

/**
 * The connection a command uses: `--api-url`, else REDLINE_API_URL, else the stored URL, else
 * DEFAULT_API_URL; the key from REDLINE_API_KEY, else the stored one. No key is a usage error.
 */
export async function resolveConnection(env: CliEnv, apiUrlFlag: string | undefined): Promise<Connection> {
  const stored = await readConfig(env);
  const apiUrl = (apiUrlFlag || env.REDLINE_API_URL || stored.api_url || DEFAULT_API_URL).replace(/\/+$/, "");
  const apiKey = env.REDLINE_API_KEY || stored.api_key;
  if (!apiKey) throw new UsageError("No API key: run `redline login` or set REDLINE_API_KEY");
  return { apiUrl, apiKey };
}
