// The setup most system test files share: one stack of their own (a database named after the
// file) and an API key on it. The caller keeps the stack in a module variable and closes it in
// afterAll; a helper that fails half-way closes what it had started itself.
import type { Principal } from "@redline/service-kit";
import { inject } from "vitest";
import { type ScriptedOpenAi, scriptedEngine, startScriptedOpenAi } from "./scripted-openai.js";
import { type StackOptions, startTestStack, type TestStack } from "./stack.js";

/** Starts a stack on the run's infrastructure and creates an API key for `user` on it. */
export async function startStackWithKey(opts: StackOptions, user: string): Promise<{ stack: TestStack; key: string }> {
  const stack = await startTestStack(inject("infra"), opts);
  try {
    return { stack, key: await stack.createKey(user) };
  } catch (err) {
    await stack.close();
    throw err;
  }
}

/** The principal billing resolves for `key`: who a service sees when the gateway calls it for that key. */
export async function principalOf(stack: TestStack, key: string): Promise<Principal> {
  const resolved = (await stack.accounts.resolveApiKey({ apiKey: key })).principal;
  if (!resolved) throw new Error("no principal");
  return resolved;
}

/**
 * Starts a scripted model server and a stack whose agent sends every model request to it, with an
 * API key for `user`; the server is closed again if the stack does not start.
 */
export async function startScriptedStackWithKey(
  opts: StackOptions,
  engine: Parameters<typeof scriptedEngine>[1],
  user: string,
): Promise<{ model: ScriptedOpenAi; stack: TestStack; key: string }> {
  const model = await startScriptedOpenAi();
  try {
    return { model, ...(await startStackWithKey({ ...opts, openai: scriptedEngine(model, engine) }, user)) };
  } catch (err) {
    await model.close();
    throw err;
  }
}
