// @redline/cli as a library: run the `redline` command in-process (scripts, tests).
export { run } from "./cli.js";
export { configPath, DEFAULT_API_URL } from "./config.js";
export type { CliIo } from "./context.js";
export { EXIT } from "./errors.js";
