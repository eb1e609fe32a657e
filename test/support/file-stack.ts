// The setup most system test files share: one stack of their own (a database named after the
// file) and an API key on it. The caller keeps the stack in a module variable and closes it in
// afterAll; a helper that fails half-way closes what it had started itself.
import { inject } from "vitest";
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
