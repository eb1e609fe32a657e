import { describe, expect, it } from "vitest";
import { readJobsEnv, readOpenAiEnv } from "./config.js";

const BASE = { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1" };

describe("readOpenAiEnv: servers' quirks", () => {
  it("leaves the quirk settings out when unset", () => {
    const cfg = readOpenAiEnv(BASE);
    expect(cfg).toBeDefined();
    expect(cfg).not.toHaveProperty("contextTokens");
    expect(cfg).not.toHaveProperty("toolMode");
    expect(cfg).not.toHaveProperty("retryAfterMaxMs");
  });

  it("reads OPENAI_CONTEXT_TOKENS, OPENAI_TOOL_MODE and OPENAI_RETRY_AFTER_MAX_S", () => {
    expect(
      readOpenAiEnv({
        ...BASE,
        OPENAI_CONTEXT_TOKENS: "8192",
        OPENAI_TOOL_MODE: "structured",
        OPENAI_RETRY_AFTER_MAX_S: "90",
      }),
    ).toMatchObject({ contextTokens: 8192, toolMode: "structured", retryAfterMaxMs: 90_000 });
  });

  it("names the variable when a value is malformed", () => {
    expect(() => readOpenAiEnv({ ...BASE, OPENAI_CONTEXT_TOKENS: "4k" })).toThrow(/^OPENAI_CONTEXT_TOKENS must be/);
    expect(() => readOpenAiEnv({ ...BASE, OPENAI_CONTEXT_TOKENS: "100" })).toThrow(/at least 512/);
    expect(() => readOpenAiEnv({ ...BASE, OPENAI_TOOL_MODE: "json" })).toThrow(
      'OPENAI_TOOL_MODE must be one of auto, native, structured, got "json"',
    );
    expect(() => readOpenAiEnv({ ...BASE, OPENAI_RETRY_AFTER_MAX_S: "-1" })).toThrow(/^OPENAI_RETRY_AFTER_MAX_S/);
  });
});

describe("readJobsEnv: APPROVAL_TIMEOUT_S", () => {
  it("reads the approval wait in seconds, leaves it out when unset, names it when malformed", () => {
    expect(readJobsEnv({ APPROVAL_TIMEOUT_S: "90" })).toEqual({ approvalTimeoutMs: 90_000 });
    expect(readJobsEnv({})).not.toHaveProperty("approvalTimeoutMs");
    expect(() => readJobsEnv({ APPROVAL_TIMEOUT_S: "0" })).toThrow(/^APPROVAL_TIMEOUT_S must be/);
  });
});
