// Tool-call arguments as real servers send them. OpenAI's own models send one JSON object; small
// local models (llama.cpp, Ollama, LM Studio and vLLM serving 7-14B models) often send almost-JSON:
// a trailing comma, single-quoted strings (Python dict habits), the object wrapped in a ```json
// fence, or an object cut short by a stop token. Those are repaired once; anything else goes back
// to the model as a tool error naming the problem, and the loop continues.

/** Parsed arguments, or the message the model gets back when they cannot be read. */
export type ParsedArguments =
  | { ok: true; args: Record<string, unknown>; repaired: boolean }
  | { ok: false; error: string };

/**
 * Parses one call's `arguments` text: "" is `{}`, valid JSON is taken as is, else one repair
 * (repairJson) is tried. The result must be a JSON object.
 */
export function parseToolArguments(raw: string): ParsedArguments {
  if (raw.trim() === "") return { ok: true, args: {}, repaired: false };
  let parsed: unknown;
  let repaired = false;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    const fixed = repairJson(raw);
    if (fixed === undefined) {
      return {
        ok: false,
        error: `arguments are not valid JSON (${err instanceof Error ? err.message : "parse error"}); send one JSON object with double-quoted keys and strings`,
      };
    }
    parsed = fixed;
    repaired = true;
  }
  // Some servers double-encode: the arguments are a JSON string holding the object.
  if (typeof parsed === "string") {
    try {
      parsed = JSON.parse(parsed);
    } catch {
      return { ok: false, error: "arguments must be a JSON object, not a string" };
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { ok: false, error: "arguments must be a JSON object" };
  }
  return { ok: true, args: parsed as Record<string, unknown>, repaired };
}

/**
 * One careful repair of almost-JSON, or undefined when it still does not parse. Fixes only what
 * cannot change the meaning: a surrounding code fence, single-quoted strings, trailing commas
 * before `}`/`]`, and, at the very end, a dangling `,` and unclosed braces and brackets after a
 * complete value. An unclosed string or a key without its value is cut-off content and is not
 * completed (that would apply half an edit); unquoted keys or values are not guessed at.
 */
export function repairJson(text: string): unknown {
  const source = stripFence(text.trim());
  let out = "";
  const stack: string[] = [];
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (quote !== null) {
      if (ch === "\\") {
        const next = source[i + 1] ?? "";
        // \' is not a JSON escape; inside a string it is just the quote.
        out += next === "'" ? "'" : ch + next;
        i++;
      } else if (ch === quote) {
        out += '"';
        quote = null;
      } else if (ch === '"') {
        out += '\\"'; // a double quote inside a single-quoted string
      } else if (ch === "\n") {
        out += "\\n";
      } else {
        out += ch;
      }
      continue;
    }
    if (ch === '"' || ch === "'") {
      quote = ch;
      out += '"';
    } else if (ch === "{" || ch === "[") {
      stack.push(ch === "{" ? "}" : "]");
      out += ch;
    } else if (ch === "}" || ch === "]") {
      out = out.replace(/,\s*$/, "");
      if (stack.pop() !== ch) return undefined;
      out += ch;
    } else {
      out += ch;
    }
  }
  // A string or a key left open is cut-off content: closing it would apply half a value.
  if (quote !== null || /:\s*$/.test(out)) return undefined;
  while (stack.length > 0) {
    out = out.replace(/,\s*$/, "");
    out += stack.pop();
  }
  try {
    return JSON.parse(out);
  } catch {
    return undefined;
  }
}

/** The body of a ```lang ... ``` fence around the whole text (closing fence optional), else the text. */
export function stripFence(text: string): string {
  const match = /^```[\w-]*\s*\n?([\s\S]*?)\n?(?:```\s*)?$/.exec(text);
  return match ? match[1].trim() : text;
}
