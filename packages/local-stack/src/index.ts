// @redline/local-stack: the local Redline stack for `pnpm start`, scripts, benches and tests: the
// supervisor (embedded or external infrastructure, the six services as supervised processes,
// stack.json), the mixed load of virtual clients, and fault injection under it.

export { freeStackEnv, type StackAddrs, stackAddrs } from "./addrs.js";
export {
  awaitCleanStreak,
  DEPENDENCIES,
  type Dependency,
  type FaultInfra,
  type FaultRun,
  type FaultStack,
  type FaultTiming,
  type Restartable,
  runFault,
  startFaultInfra,
  startFaultStack,
} from "./faults/dependency-faults.js";
export {
  KILL_ORDER,
  type KillRun,
  type KillTiming,
  killAndAwaitRestart,
  runKill,
  servicePid,
} from "./faults/kill-faults.js";
export { type ForegroundOptions, REPEATED_SIGNAL_WINDOW_MS, runForeground } from "./foreground.js";
export { migrateServices } from "./migrate.js";
export { MixedLoad } from "./mixed-load/mixed-load.js";
export {
  DEFAULT_LOOP,
  type FaultMark,
  type FaultWindow,
  type KindStats,
  type Ledger,
  type LoopKind,
  type MixedLoadOptions,
  REQUEST_KINDS,
  type RequestKind,
  type RequestRecord,
  statsOf,
  type VerifyReport,
} from "./mixed-load/model.js";
export type { VerifyOptions } from "./mixed-load/verify.js";
export {
  BACKEND_SERVICES,
  type BackendName,
  REPO_ROOT,
  RUNTIME_ARGS,
  SERVICE_NAMES,
  type ServiceName,
  type StackRuntime,
} from "./names.js";
export { caller, type GatewayCall, type ProcessStack, startProcessStack } from "./process-stack.js";
export { HeapSampler, parseHeapKiB } from "./soak/heap.js";
export {
  ACCEPTED_SERVER_ERRORS,
  formatSoakReport,
  HEAP_SLOPE_LIMIT_MIB_PER_MIN,
  isServerError,
  type KindFigures,
  MIN_JUDGED_MINUTES,
  RSS_SLOPE_LIMIT_MIB_PER_MIN,
  type SoakReport,
  soakVerdict,
} from "./soak/report.js";
export { parseVmRssKiB, type RssSample, RssSampler, type RssSummary, readRssKiB, summarizeRss } from "./soak/rss.js";
export { readSse, type SseEvent, type SseRead } from "./sse.js";
export { type RunningStack, type StartStackOptions, startStack } from "./stack.js";
export { defaultDataDir, findRunningStack, isStackRunning, readStackFile, type StackInfo } from "./stack-file.js";
export { quantile, seededRandom, shuffled, slope } from "./stats.js";
export { STOP_GRACE_MS } from "./supervised.js";
