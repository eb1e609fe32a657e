// The command dispatcher: parses argv with node:util parseArgs (a mistake is a UsageError, exit
// 2), builds the client and reporter, runs one command and turns what it threw into an exit code
// and a line on stderr.
import { type ParseArgsConfig, parseArgs } from "node:util";
import { createRedlineClient, type RedlineClient } from "@redline/client";
import { editCommand } from "./commands/edit.js";
import { exportCommand } from "./commands/export.js";
import { loginCommand } from "./commands/login.js";
import { usageCommand } from "./commands/usage.js";
import { versionsCommand } from "./commands/versions.js";
import { resolveConnection } from "./config.js";
import type { CliIo, CommandContext } from "./context.js";
import { describeError, EXIT, exitCodeOf, UsageError } from "./errors.js";
import { HELP } from "./help.js";
import { createReporter } from "./output.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

const SHARED: Options = {
  "api-url": { type: "string" },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
};

const COMMANDS: Record<string, { options: Options; run: (ctx: CommandContext) => Promise<void> }> = {
  edit: {
    options: {
      prompt: { type: "string", short: "p" },
      output: { type: "string", short: "o" },
      review: { type: "boolean", default: false },
      "track-changes": { type: "boolean", default: false },
      session: { type: "string" },
      "dry-run": { type: "boolean", default: false },
    },
    run: editCommand,
  },
  export: {
    options: { format: { type: "string", short: "f" }, output: { type: "string", short: "o" } },
    run: exportCommand,
  },
  versions: {
    options: { restore: { type: "string" }, diff: { type: "string" }, against: { type: "string" } },
    run: versionsCommand,
  },
  usage: { options: {}, run: usageCommand },
  login: { options: { key: { type: "string" } }, run: loginCommand },
};

/** Runs `redline ARGV…` and answers its exit code (see help.ts); never throws. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "help" || name === "--help" || name === "-h") {
    io.stdout.write(HELP);
    return name ? EXIT.ok : EXIT.usage;
  }
  const command = COMMANDS[name];
  const json = rest.includes("--json");
  const reporter = createReporter({ stdout: io.stdout, stderr: io.stderr, json });
  try {
    if (!command) throw new UsageError(`Unknown command "${name}": run \`redline --help\``);
    const { values, positionals } = parse(rest, { ...SHARED, ...command.options });
    if (values.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    let client: RedlineClient | undefined;
    await command.run({
      io,
      reporter,
      values,
      positionals,
      async client() {
        if (!client) {
          const conn = await resolveConnection(io.env, values["api-url"] as string | undefined);
          client = createRedlineClient({ baseUrl: conn.apiUrl, apiKey: conn.apiKey, userAgent: "redline-cli/0.1.0" });
        }
        return client;
      },
    });
    return EXIT.ok;
  } catch (err) {
    reporter.done();
    const code = exitCodeOf(err);
    if (json) io.stdout.write(`${JSON.stringify({ error: describeError(err), exit_code: code }, null, 2)}\n`);
    io.stderr.write(`redline: ${describeError(err)}\n`);
    if (code === EXIT.failure && err instanceof Error && err.stack && io.env.REDLINE_DEBUG) io.stderr.write(err.stack);
    return code;
  }
}

function parse(args: string[], options: Options) {
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (err) {
    // parseArgs throws a TypeError with an ERR_PARSE_ARGS_* code for unknown or malformed options.
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}
