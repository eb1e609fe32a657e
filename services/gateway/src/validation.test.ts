import { SchemaError, type ValidationIssue } from "@redline/service-kit";
import { describe, expect, it } from "vitest";
import { toChatRpcRequest } from "./api/chat/mappers.js";
import { ChatRequestSchema } from "./api/chat/schemas.js";
import { HistoryQuerySchema, ListSessionsQuerySchema } from "./api/sessions/schemas.js";
import { SessionPathSchema } from "./api/shared/schemas.js";
import { jsonErrorPosition, parseOrThrow } from "./validation.js";

function issues(run: () => unknown): ValidationIssue[] {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(SchemaError);
    const e = err as SchemaError;
    expect(e.httpStatus).toBe(422);
    return e.detail as ValidationIssue[];
  }
  throw new Error("expected a SchemaError");
}

const chat = (body: unknown) => parseOrThrow(ChatRequestSchema, body, "body");

describe("chat request schema", () => {
  it("applies the documented defaults and drops unknown fields", () => {
    const body = chat({ message: "hi", extra: 1, user_id: "u" });
    expect(body).toEqual({
      message: "hi",
      user_id: "u",
      model_tier: "core",
      thinking_depth: "balanced",
      approval_mode: "approve_all",
      response_mode: "full",
    });
  });

  it("accepts null for the optional fields", () => {
    const body = chat({
      message: "hi",
      session_id: null,
      document_html: null,
      upload_document_base64: null,
      cursor_context: null,
    });
    expect(body.session_id).toBeNull();
  });

  it("reports a missing message as pydantic's missing", () => {
    expect(issues(() => chat({}))).toEqual([{ type: "missing", loc: ["body", "message"], msg: "Field required" }]);
  });

  it("reports a body that is not an object", () => {
    expect(issues(() => chat("text"))).toEqual([
      {
        type: "model_attributes_type",
        loc: ["body"],
        msg: "Input should be a valid dictionary or object to extract fields from",
      },
    ]);
    expect(issues(() => chat(undefined))[0]).toMatchObject({ type: "missing", loc: ["body"] });
  });

  it("reports a bad enum with the allowed values", () => {
    expect(issues(() => chat({ message: "x", model_tier: "ultra" }))).toEqual([
      { type: "enum", loc: ["body", "model_tier"], msg: "Input should be 'core', 'turbo', 'pro' or 'max'" },
    ]);
  });

  it("reports a session_id pattern mismatch and an over-long id", () => {
    expect(issues(() => chat({ message: "x", session_id: "a b/c" }))).toEqual([
      {
        type: "string_pattern_mismatch",
        loc: ["body", "session_id"],
        msg: "String should match pattern '^[a-zA-Z0-9_\\-.]+$'",
      },
    ]);
    expect(issues(() => chat({ message: "x", session_id: "a".repeat(257) }))).toEqual([
      { type: "string_too_long", loc: ["body", "session_id"], msg: "String should have at most 256 characters" },
    ]);
  });

  it("reports wrong types per field, all at once", () => {
    const items = issues(() => chat({ message: 5, document_html: 3, image_attachments: {}, cursor_context: "here" }));
    expect(items).toEqual([
      { type: "string_type", loc: ["body", "message"], msg: "Input should be a valid string" },
      { type: "string_type", loc: ["body", "document_html"], msg: "Input should be a valid string" },
      { type: "list_type", loc: ["body", "image_attachments"], msg: "Input should be a valid list" },
      { type: "dict_type", loc: ["body", "cursor_context"], msg: "Input should be a valid dictionary" },
    ]);
  });

  it("rejects a message over 100,000 characters", () => {
    expect(issues(() => chat({ message: "a".repeat(100_001) }))).toEqual([
      { type: "string_too_long", loc: ["body", "message"], msg: "String should have at most 100000 characters" },
    ]);
    expect(chat({ message: "a".repeat(100_000) }).message).toHaveLength(100_000);
  });

  it("rejects invalid base64 in upload_document_base64 and nested missing fields", () => {
    expect(
      issues(() => chat({ message: "x", upload_document_base64: { filename: "a.txt", file_base64: "%%%" } })),
    ).toEqual([
      {
        type: "base64_decode",
        loc: ["body", "upload_document_base64", "file_base64"],
        msg: "Base64 decoding error: invalid base64 data",
      },
    ]);
    expect(issues(() => chat({ message: "x", upload_document_base64: { file_base64: "aGk=" } }))).toEqual([
      { type: "missing", loc: ["body", "upload_document_base64", "filename"], msg: "Field required" },
    ]);
    expect(
      issues(() => chat({ message: "x", upload_document_base64: { filename: "a.txt", file_base64: "abcde" } }))[0].type,
    ).toBe("base64_decode");
  });

  it("decodes the upload to bytes for the agent", () => {
    const body = chat({ message: "x", upload_document_base64: { filename: "a.txt", file_base64: "aGVs\nbG8=" } });
    const req = toChatRpcRequest(body);
    expect(req.upload?.filename).toBe("a.txt");
    expect(req.upload?.content.toString("utf8")).toBe("hello");
    expect(req.sessionId).toBe("");
    expect(req.modelTier).toBe("core");
  });

  it("caps image_attachments at 20 and checks each item", () => {
    const img = {
      id: "i",
      name: "a.png",
      base64Data: "data:image/png;base64,iVBORw0KGgo=",
      mimeType: "image/png",
      size: 8,
    };
    expect(issues(() => chat({ message: "x", image_attachments: Array(21).fill(img) }))).toEqual([
      {
        type: "too_long",
        loc: ["body", "image_attachments"],
        msg: "List should have at most 20 items after validation, not 21",
      },
    ]);
    expect(
      issues(() => chat({ message: "x", image_attachments: [img, { ...img, size: 1.5, mimeType: undefined }] })),
    ).toEqual([
      { type: "missing", loc: ["body", "image_attachments", 1, "mimeType"], msg: "Field required" },
      {
        type: "int_from_float",
        loc: ["body", "image_attachments", 1, "size"],
        msg: "Input should be a valid integer, got a number with a fractional part",
      },
    ]);
    const req = toChatRpcRequest(chat({ message: "x", image_attachments: [img] }));
    expect(req.imageAttachments[0].base64Data).toBe("iVBORw0KGgo=");
  });
});

describe("query and path schemas", () => {
  it("parses limit as an integer 1..200 with default 50, clamping larger values (no bound in the spec)", () => {
    expect(parseOrThrow(ListSessionsQuerySchema, {}, "query")).toEqual({ limit: 50, offset: 0 });
    expect(parseOrThrow(ListSessionsQuerySchema, { limit: "7", user_id: "x" }, "query")).toEqual({
      limit: 7,
      offset: 0,
      user_id: "x",
    });
    expect(issues(() => parseOrThrow(ListSessionsQuerySchema, { limit: "abc" }, "query"))).toEqual([
      {
        type: "int_parsing",
        loc: ["query", "limit"],
        msg: "Input should be a valid integer, unable to parse string as an integer",
      },
    ]);
    expect(issues(() => parseOrThrow(ListSessionsQuerySchema, { limit: "1.5" }, "query"))[0].type).toBe("int_parsing");
    expect(issues(() => parseOrThrow(ListSessionsQuerySchema, { limit: "0" }, "query"))).toEqual([
      { type: "greater_than_equal", loc: ["query", "limit"], msg: "Input should be greater than or equal to 1" },
    ]);
    expect(parseOrThrow(ListSessionsQuerySchema, { limit: "201" }, "query")).toEqual({ limit: 200, offset: 0 });
    expect(issues(() => parseOrThrow(ListSessionsQuerySchema, { offset: "-1" }, "query"))).toEqual([
      { type: "greater_than_equal", loc: ["query", "offset"], msg: "Input should be greater than or equal to 0" },
    ]);
  });

  it("parses booleans from true/false/1/0 with default true", () => {
    const q = (v: Record<string, unknown>) => parseOrThrow(HistoryQuerySchema, v, "query").include_document_html;
    expect(q({})).toBe(true);
    expect(q({ include_document_html: "false" })).toBe(false);
    expect(q({ include_document_html: "0" })).toBe(false);
    expect(q({ include_document_html: "1" })).toBe(true);
    expect(q({ include_document_html: "TRUE" })).toBe(true);
    expect(issues(() => q({ include_document_html: "maybe" }))).toEqual([
      {
        type: "bool_parsing",
        loc: ["query", "include_document_html"],
        msg: "Input should be a valid boolean, unable to interpret input",
      },
    ]);
  });

  it("checks the session_id path pattern", () => {
    expect(parseOrThrow(SessionPathSchema, { session_id: "abc_1-2.3" }, "path")).toEqual({ session_id: "abc_1-2.3" });
    expect(issues(() => parseOrThrow(SessionPathSchema, { session_id: "a$b" }, "path"))[0]).toMatchObject({
      type: "string_pattern_mismatch",
      loc: ["path", "session_id"],
    });
  });
});

describe("jsonErrorPosition", () => {
  it("points at the first syntax error", () => {
    expect(jsonErrorPosition('{"a": }')).toBe(6);
    expect(jsonErrorPosition("{bad")).toBe(1);
    expect(jsonErrorPosition('{"a": 1')).toBe(7);
    expect(jsonErrorPosition('{"a": 1,}')).toBe(8);
    expect(jsonErrorPosition("[1, 2] x")).toBe(7);
    expect(jsonErrorPosition('{"a": tru}')).toBe(9);
    expect(jsonErrorPosition('{"a": [1, {"b": "c\\q"}]}')).toBe(19);
    expect(jsonErrorPosition('{"a": [1, {"b": null}]}')).toBe(0);
  });
});
