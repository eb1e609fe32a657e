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
function toValidationIssue(issue: z.core.$ZodIssue, where: InputLocation): ValidationIssue {
  const loc: (string | number)[] = [where, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
  switch (issue.code) {
    case "invalid_type":
      return typeIssue(issue, loc);
    case "too_big":
    case "too_small":
      return sizeIssue(issue, loc);
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

function typeIssue(issue: z.core.$ZodIssueInvalidType, loc: (string | number)[]): ValidationIssue {
  const input = issue.input;
  const issueAt = (type: string, msg: string): ValidationIssue => ({ type, loc, msg });
  if (input === undefined) return issueAt("missing", "Field required");
  switch (issue.expected) {
    case "string":
      return issueAt("string_type", "Input should be a valid string");
    case "int":
    case "number":
      if (typeof input === "string") {
        return issueAt("int_parsing", "Input should be a valid integer, unable to parse string as an integer");
      }
      if (typeof input === "number" && Number.isFinite(input)) {
        return issueAt("int_from_float", "Input should be a valid integer, got a number with a fractional part");
      }
      return issueAt("int_type", "Input should be a valid integer");
    case "boolean":
      if (typeof input === "string") {
        return issueAt("bool_parsing", "Input should be a valid boolean, unable to interpret input");
      }
      return issueAt("bool_type", "Input should be a valid boolean");
    case "object":
      if (loc.length === 1) {
        return issueAt("model_attributes_type", "Input should be a valid dictionary or object to extract fields from");
      }
      return issueAt("dict_type", "Input should be a valid dictionary");
    case "array":
      return issueAt("list_type", "Input should be a valid list");
    default:
      return issueAt(`${issue.expected}_type`, `Input should be a valid ${issue.expected}`);
  }
}

/** pydantic's words for a bound, by direction: upper (too_big) and lower (too_small). */
const BOUND_WORDS = {
  too_big: { string: "string_too_long", list: "too_long", has: "at most", than: "less_than", words: "less than" },
  too_small: {
    string: "string_too_short",
    list: "too_short",
    has: "at least",
    than: "greater_than",
    words: "greater than",
  },
} as const;

function sizeIssue(
  issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall,
  loc: (string | number)[],
): ValidationIssue {
  const w = BOUND_WORDS[issue.code];
  const bound = issue.code === "too_big" ? issue.maximum : issue.minimum;
  if (issue.origin === "string") {
    return { type: w.string, loc, msg: `String should have ${w.has} ${plural(bound, "character")}` };
  }
  if (issue.origin === "array" || issue.origin === "set") {
    const actual = Array.isArray(issue.input) ? `, not ${issue.input.length}` : "";
    return { type: w.list, loc, msg: `List should have ${w.has} ${plural(bound, "item")} after validation${actual}` };
  }
  return issue.inclusive
    ? { type: `${w.than}_equal`, loc, msg: `Input should be ${w.words} or equal to ${bound}` }
    : { type: w.than, loc, msg: `Input should be ${w.words} ${bound}` };
}

/**
 * The character offset of the first JSON syntax error in `text` (pydantic's `json_invalid` loc
 * is `["body", offset]`); `text.length` when the text ends early; 0 when `text` is valid.
 */
export function jsonErrorPosition(text: string): number {
  const scan = new JsonScanner(text);
  try {
    scan.value();
    scan.ws();
    if (scan.i < text.length) scan.fail(scan.i);
    return 0;
  } catch (at) {
    return typeof at === "number" ? Math.min(at, text.length) : 0;
  }
}

/** A JSON grammar walk that throws the offset of the first error (a number) instead of parsing. */
class JsonScanner {
  i = 0;
  constructor(private readonly text: string) {}

  fail(at: number): never {
    throw at;
  }

  ws(): void {
    while (this.i < this.text.length && " \t\n\r".includes(this.text[this.i])) this.i++;
  }

  value(): void {
    this.ws();
    const c = this.text[this.i];
    if (c === "{") this.object();
    else if (c === "[") this.array();
    else if (c === '"') this.string();
    else if (c === "t") this.literal("true");
    else if (c === "f") this.literal("false");
    else if (c === "n") this.literal("null");
    else if (c === "-" || (c >= "0" && c <= "9")) this.number();
    else this.fail(this.i);
  }

  private literal(word: string): void {
    for (let k = 0; k < word.length; k++) if (this.text[this.i + k] !== word[k]) this.fail(this.i + k);
    this.i += word.length;
  }

  private string(): void {
    const { text } = this;
    this.i++;
    while (this.i < text.length) {
      const c = text[this.i];
      if (c === '"') {
        this.i++;
        return;
      }
      if (c === "\\") {
        const e = text[this.i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(this.i + 2, this.i + 6))) this.fail(this.i + 2);
          this.i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) this.i += 2;
        else this.fail(this.i + 1);
      } else if (c < " ") this.fail(this.i);
      else this.i++;
    }
    this.fail(this.i);
  }

  private number(): void {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i, this.i + 400));
    if (!m || m[0].length === 0 || m[0] === "-") this.fail(this.i + (m?.[0].length ?? 0));
    this.i += (m as RegExpExecArray)[0].length;
  }

  /** `{` members `}`: each member a string key, `:`, a value; comma separated. */
  private object(): void {
    if (this.empty("}")) return;
    for (;;) {
      this.ws();
      if (this.text[this.i] !== '"') this.fail(this.i);
      this.string();
      this.ws();
      if (this.text[this.i] !== ":") this.fail(this.i);
      this.i++;
      if (this.next("}")) return;
    }
  }

  /** `[` values `]`, comma separated. */
  private array(): void {
    if (this.empty("]")) return;
    while (!this.next("]"));
  }

  /** Steps over a container's opener; an empty container (`close` next) is read whole and gives true. */
  private empty(close: string): boolean {
    this.i++;
    this.ws();
    if (this.text[this.i] !== close) return false;
    this.i++;
    return true;
  }

  /** Reads a value, then a comma (false: more follow) or `close` (true: the container ends). */
  private next(close: string): boolean {
    this.value();
    this.ws();
    if (this.text[this.i] === ",") this.i++;
    else if (this.text[this.i] === close) {
      this.i++;
      return true;
    } else this.fail(this.i);
    return false;
  }
}
