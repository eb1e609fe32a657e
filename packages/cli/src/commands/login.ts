// `redline login [--key KEY] [--api-url URL]`: checks the key against the API (GET /v1/usage,
// free) and stores it, with the URL when given, in the config file (mode 0600).
import { createRedlineClient } from "@redline/client";
import { DEFAULT_API_URL, readConfig, writeConfig } from "../config.js";
import type { CommandContext } from "../context.js";
import { UsageError } from "../errors.js";
import { createPrompter } from "../prompt.js";

/** Stores the API key; a key the API refuses (401) is not stored and exits 4. */
export async function loginCommand(ctx: CommandContext): Promise<void> {
  const { io, reporter, values } = ctx;
  if (ctx.positionals.length > 0) throw new UsageError("login takes no arguments (the key goes in --key)");
  let key = values.key as string | undefined;
  if (!key) {
    // The key is a secret: not echoed at a terminal.
    const prompter = createPrompter(io.stdin, io.stderr, undefined, { echo: false });
    try {
      key = (await prompter.ask("API key (sk_…): ")) ?? "";
    } finally {
      prompter.close();
    }
  }
  key = key.trim();
  if (!key) throw new UsageError("No API key given");
  const stored = await readConfig(io.env);
  const apiUrl = (
    (values["api-url"] as string | undefined) ||
    io.env.REDLINE_API_URL ||
    stored.api_url ||
    DEFAULT_API_URL
  )
    .trim()
    .replace(/\/+$/, "");
  const client = createRedlineClient({ baseUrl: apiUrl, apiKey: key, userAgent: "redline-cli/0.1.0" });
  const usage = await client.usage();
  const path = await writeConfig(io.env, {
    ...stored,
    api_key: key,
    ...(values["api-url"] ? { api_url: apiUrl } : {}),
  });
  reporter.result(`Logged in to ${apiUrl} (${usage.subscription_tier ?? "plan"}); key stored in ${path}`);
  reporter.resultJson({ config_path: path, api_url: apiUrl, subscription_tier: usage.subscription_tier });
}
