// Who a local stack runs and how: the service names, the repository the services live in, and
// the Node arguments that run a service's entry file.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root (packages/local-stack/src/../../..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** The five gRPC services, started together before the gateway. */
export const BACKEND_SERVICES = ["documents", "sessions", "billing", "ingest", "agent"] as const;
export type BackendName = (typeof BACKEND_SERVICES)[number];
export type ServiceName = BackendName | "gateway";
export const SERVICE_NAMES: readonly ServiceName[] = [...BACKEND_SERVICES, "gateway"];

/**
 * How services run. "tsx" (default): src/main.ts through the tsx loader, workspace packages
 * resolved to their TypeScript sources. "dist": the compiled dist/main.js of `pnpm build` with
 * plain node, workspace packages resolved to their dist/, as in production.
 */
export type StackRuntime = "tsx" | "dist";

/** The export condition under which workspace packages name their TypeScript sources. */
const SOURCE_CONDITION = "@redline/source";

/** Node arguments before a service's entry file, by runtime (any tsx child process needs the condition). */
export const RUNTIME_ARGS: Record<StackRuntime, string[]> = {
  tsx: [`--conditions=${SOURCE_CONDITION}`, "--import", "tsx"],
  dist: [],
};

/** `env` for a service of `runtime`: under "dist", without a source condition inherited via NODE_OPTIONS (vitest sets one). */
export function runtimeEnv(env: NodeJS.ProcessEnv, runtime: StackRuntime): NodeJS.ProcessEnv {
  if (runtime !== "dist" || !env.NODE_OPTIONS) return env;
  const options = env.NODE_OPTIONS.split(/\s+/).filter((o) => o && o !== `--conditions=${SOURCE_CONDITION}`);
  return { ...env, NODE_OPTIONS: options.join(" ") };
}
