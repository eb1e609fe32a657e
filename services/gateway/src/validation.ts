// Turns zod 4 validation failures into the spec's 422 body: `{detail: [{type, loc, msg}]}` with
// pydantic-style types, locations and messages (interface-spec, Errors), so clients written
// against the public service read our validation errors unchanged.
import { SchemaError, type ValidationIssue } from "@redline/service-kit";
import type { z } from "zod";

/** Where a value came from; the first element of every `loc`. */
export type InputLocation = "body" | "query" | "path";

/**
 * Validates `value` against `schema` and returns the parsed output (defaults applied, unknown
 * object keys dropped). Throws SchemaError (422) whose items carry pydantic-like `type`,
 * `loc` (`[where, ...path]`) and `msg`.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, where: InputLocation): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw new SchemaError(result.error.issues.map((issue) => toValidationIssue(issue, where)));
}

/** Marks a custom refinement's failure with a pydantic error type, e.g. "base64_decode". */
export function issueType(type: string): { params: { type: string } } {
  return { params: { type } };
}

function quoteList(values: readonly unknown[]): string {
  const quoted = values.map((v) => (typeof v === "string" ? `'${v}'` : String(v)));
  if (quoted.length <= 1) return quoted.join("");
  return `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`;
}

function plural(n: number | bigint, word: string): string {
  return `${n} ${word}${Number(n) === 1 ? "" : "s"}`;
}

function regexSource(pattern: string | undefined): string {
  if (!pattern) return "";
  const m = /^\/(.*)\/[a-z]*$/s.exec(pattern);
  return m ? m[1] : pattern;
}

/** Maps one zod issue to one `{type, loc, msg}` item. */
export function toValidationIssue(issue: z.core.$ZodIssue, where: InputLocation): ValidationIssue {
  const loc: (string | number)[] = [where, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
  const input = issue.input;
  switch (issue.code) {
    case "invalid_type": {
      if (input === undefined) return { type: "missing", loc, msg: "Field required" };
      switch (issue.expected) {
        case "string":
          return { type: "string_type", loc, msg: "Input should be a valid string" };
        case "int":
        case "number":
          if (typeof input === "string") {
            return {
              type: "int_parsing",
              loc,
              msg: "Input should be a valid integer, unable to parse string as an integer",
            };
          }
          if (typeof input === "number" && Number.isFinite(input)) {
            return {
              type: "int_from_float",
              loc,
              msg: "Input should be a valid integer, got a number with a fractional part",
            };
          }
          return { type: "int_type", loc, msg: "Input should be a valid integer" };
        case "boolean":
          if (typeof input === "string") {
            return { type: "bool_parsing", loc, msg: "Input should be a valid boolean, unable to interpret input" };
          }
          return { type: "bool_type", loc, msg: "Input should be a valid boolean" };
        case "object":
          if (loc.length === 1) {
            return {
              type: "model_attributes_type",
              loc,
              msg: "Input should be a valid dictionary or object to extract fields from",
            };
          }
          return { type: "dict_type", loc, msg: "Input should be a valid dictionary" };
        case "array":
          return { type: "list_type", loc, msg: "Input should be a valid list" };
        default:
          return { type: `${issue.expected}_type`, loc, msg: `Input should be a valid ${issue.expected}` };
      }
    }
    case "too_big":
      if (issue.origin === "string") {
        return {
          type: "string_too_long",
          loc,
          msg: `String should have at most ${plural(issue.maximum, "character")}`,
        };
      }
      if (issue.origin === "array" || issue.origin === "set") {
        const actual = Array.isArray(input) ? `, not ${input.length}` : "";
        return {
          type: "too_long",
          loc,
          msg: `List should have at most ${plural(issue.maximum, "item")} after validation${actual}`,
        };
      }
      return issue.inclusive
        ? { type: "less_than_equal", loc, msg: `Input should be less than or equal to ${issue.maximum}` }
        : { type: "less_than", loc, msg: `Input should be less than ${issue.maximum}` };
    case "too_small":
      if (issue.origin === "string") {
        return {
          type: "string_too_short",
          loc,
          msg: `String should have at least ${plural(issue.minimum, "character")}`,
        };
      }
      if (issue.origin === "array" || issue.origin === "set") {
        const actual = Array.isArray(input) ? `, not ${input.length}` : "";
        return {
          type: "too_short",
          loc,
          msg: `List should have at least ${plural(issue.minimum, "item")} after validation${actual}`,
        };
      }
      return issue.inclusive
        ? { type: "greater_than_equal", loc, msg: `Input should be greater than or equal to ${issue.minimum}` }
        : { type: "greater_than", loc, msg: `Input should be greater than ${issue.minimum}` };
    case "invalid_value":
      if (issue.values.length === 1) {
        return { type: "literal_error", loc, msg: `Input should be ${quoteList(issue.values)}` };
      }
      return { type: "enum", loc, msg: `Input should be ${quoteList(issue.values)}` };
    case "invalid_format":
      if (issue.format === "regex") {
        return {
          type: "string_pattern_mismatch",
          loc,
          msg: `String should match pattern '${regexSource(issue.pattern)}'`,
        };
      }
      return { type: "value_error", loc, msg: `Value error, invalid ${issue.format}` };
    case "unrecognized_keys":
      return { type: "extra_forbidden", loc, msg: `Extra inputs are not permitted: ${issue.keys.join(", ")}` };
    case "custom": {
      const type = typeof issue.params?.type === "string" ? issue.params.type : "value_error";
      return { type, loc, msg: issue.message };
    }
    default:
      return { type: "value_error", loc, msg: issue.message };
  }
}

/**
 * The character offset of the first JSON syntax error in `text` (pydantic's `json_invalid` loc
 * is `["body", offset]`); `text.length` when the text ends early; 0 when `text` is valid.
 */
export function jsonErrorPosition(text: string): number {
  let i = 0;
  const fail = (at: number): never => {
    throw at;
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const literal = (word: string) => {
    for (let k = 0; k < word.length; k++) if (text[i + k] !== word[k]) fail(i + k);
    i += word.length;
  };
  const string = () => {
    i++;
    while (i < text.length) {
      const c = text[i];
      if (c === '"') {
        i++;
        return;
      }
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail(i + 2);
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else fail(i + 1);
      } else if (c < " ") fail(i);
      else i++;
    }
    fail(i);
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0].length === 0 || m[0] === "-") fail(i + (m?.[0].length ?? 0));
    i += (m as RegExpExecArray)[0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(i);
        string();
        ws();
        if (text[i] !== ":") fail(i);
        i++;
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") {
          i++;
          return;
        } else fail(i);
      }
    }
    if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") {
          i++;
          return;
        } else fail(i);
      }
    }
    if (c === '"') string();
    else if (c === "t") literal("true");
    else if (c === "f") literal("false");
    else if (c === "n") literal("null");
    else if (c === "-" || (c >= "0" && c <= "9")) number();
    else fail(i);
  };
  try {
    value();
    ws();
    if (i < text.length) fail(i);
    return 0;
  } catch (at) {
    return typeof at === "number" ? Math.min(at, text.length) : 0;
  }
}
