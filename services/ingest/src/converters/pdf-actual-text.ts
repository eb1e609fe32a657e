// /ActualText of a page's marked-content spans (`/Span <</ActualText (…)>> BDC … EMC`), which
// pdf.js does not hand over: producers such as Chromium draw a flag or another emoji sequence
// with one glyph whose font maps it to nothing, and say what it means in the span around it.
// Read from the file itself, only for pages where pdf.js gave characters with no meaning: the
// page object's /Contents streams are inflated and their BDC operators listed in order.
import { inflateSync, constants as zlib } from "node:zlib";

/** One BDC operator of a page's content: its /ActualText, or null when it has none. */
export type MarkedSpan = string | null;

/** A PDF string's value: a literal `(…)` with its escapes, or `<hex>`; UTF-16BE with a BOM, else PDFDocEncoding read as Latin-1. */
function pdfString(token: string): string {
  let bytes: number[];
  if (token.startsWith("<")) {
    const hex = token.slice(1, -1).replace(/\s+/g, "");
    bytes = [];
    for (let i = 0; i < hex.length; i += 2) bytes.push(Number.parseInt(hex.slice(i, i + 2).padEnd(2, "0"), 16));
  } else {
    bytes = [];
    const body = token.slice(1, -1);
    for (let i = 0; i < body.length; i++) {
      const ch = body[i];
      if (ch !== "\\") {
        bytes.push(ch.charCodeAt(0) & 0xff);
        continue;
      }
      const next = body[++i] ?? "";
      const octal = /^[0-7]{1,3}/.exec(body.slice(i))?.[0];
      if (octal) {
        bytes.push(Number.parseInt(octal, 8) & 0xff);
        i += octal.length - 1;
      } else if (next === "\r" || next === "\n") {
        if (next === "\r" && body[i + 1] === "\n") i++;
      } else bytes.push(({ n: 10, r: 13, t: 9, b: 8, f: 12 } as Record<string, number>)[next] ?? next.charCodeAt(0));
    }
  }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    let out = "";
    for (let i = 2; i + 1 < bytes.length; i += 2) out += String.fromCharCode((bytes[i] << 8) | bytes[i + 1]);
    return out;
  }
  return String.fromCharCode(...bytes);
}

/** The BDC operators of a content stream in order (inline images and strings skipped whole). */
export function markedSpans(content: string): MarkedSpan[] {
  const out: MarkedSpan[] = [];
  // Operands since the last operator: the raw text of each dictionary or string.
  let operands: string[] = [];
  let i = 0;
  const n = content.length;
  while (i < n) {
    const ch = content[i];
    if (ch === "%") {
      while (i < n && content[i] !== "\n" && content[i] !== "\r") i++;
    } else if (ch === "(") {
      const start = i;
      let depth = 0;
      for (; i < n; i++) {
        const c = content[i];
        if (c === "\\") i++;
        else if (c === "(") depth++;
        else if (c === ")" && --depth === 0) break;
      }
      operands.push(content.slice(start, ++i));
    } else if (ch === "<" && content[i + 1] === "<") {
      const start = i;
      let depth = 0;
      for (; i < n; i++) {
        if (content[i] === "(") {
          for (let d = 0; i < n; i++) {
            if (content[i] === "\\") i++;
            else if (content[i] === "(") d++;
            else if (content[i] === ")" && --d === 0) break;
          }
        } else if (content.startsWith("<<", i)) {
          depth++;
          i++;
        } else if (content.startsWith(">>", i)) {
          depth--;
          i++;
          if (depth === 0) break;
        }
      }
      operands.push(content.slice(start, ++i));
    } else if (ch === "<") {
      const end = content.indexOf(">", i);
      operands.push(content.slice(i, end < 0 ? n : end + 1));
      i = end < 0 ? n : end + 1;
    } else if (/[A-Za-z'"]/.test(ch)) {
      let end = i;
      while (end < n && /[A-Za-z0-9'"*]/.test(content[end])) end++;
      const op = content.slice(i, end);
      i = end;
      if (op === "BDC") {
        const dict = [...operands].reverse().find((o) => o.startsWith("<<"));
        const actual = dict ? /\/ActualText\s*(\((?:\\[\s\S]|[^\\)])*\)|<[0-9A-Fa-f\s]*>)/.exec(dict)?.[1] : undefined;
        out.push(actual ? pdfString(actual) : null);
      } else if (op === "ID") {
        // Inline image data runs to EI: binary, never operators.
        const ei = content.slice(i).search(/\sEI(?=[\s]|$)/);
        i = ei < 0 ? n : i + ei + 3;
      }
      operands = [];
    } else i++;
  }
  return out;
}

/** A page object's content as text (its streams inflated and joined), or null when it cannot be read. */
export function pageContent(file: string, ref: { num: number; gen: number }): string | null {
  const object = (num: number, gen: number) => {
    const re = new RegExp(`(?:^|[^0-9])${num}\\s+${gen}\\s+obj\\b`, "g");
    let at = -1;
    for (let m = re.exec(file); m; m = re.exec(file)) at = m.index + m[0].length;
    if (at < 0) return null;
    const end = file.indexOf("endobj", at);
    return file.slice(at, end < 0 ? file.length : end);
  };
  const page = object(ref.num, ref.gen);
  const contents = page && /\/Contents\s*(\[[^\]]*\]|\d+\s+\d+\s+R)/.exec(page)?.[1];
  if (!contents) return null;
  const parts: string[] = [];
  for (const [, num, gen] of contents.matchAll(/(\d+)\s+(\d+)\s+R/g)) {
    const body = object(Number(num), Number(gen));
    const start = body ? /stream\r?\n/.exec(body) : null;
    if (!body || !start) return null;
    const dict = body.slice(0, start.index);
    const data = Buffer.from(
      body.slice(start.index + start[0].length).replace(/\r?\n?endstream[\s\S]*$/, ""),
      "latin1",
    );
    if (/\/Filter\s*\[?\s*\/FlateDecode\s*\]?/.test(dict)) {
      try {
        parts.push(inflateSync(data, { finishFlush: zlib.Z_SYNC_FLUSH }).toString("latin1"));
      } catch {
        return null;
      }
    } else if (/\/Filter/.test(dict)) return null;
    else parts.push(data.toString("latin1"));
  }
  return parts.join("\n");
}

/** A getTextContent item with includeMarkedContent: text (`str`) or a marked-content boundary. */
type ContentItem = { str: string } | { type: string };

/**
 * The text of each text item of `items` (in order), with the characters `unmapped` finds
 * replaced by what the span around them says: the first non-blank text item of a span with
 * /ActualText whose text holds such characters takes the ActualText, its other ones "". `spans` reads the
 * page's BDC operators (called once, only when needed); when they do not line up with pdf.js's
 * (a form XObject's own spans, an unreadable stream), the texts stay as they are.
 */
export function withActualText(items: ContentItem[], unmapped: RegExp, spans: () => MarkedSpan[] | null): string[] {
  const texts = items.filter((i): i is { str: string } => "str" in i).map((i) => i.str);
  if (!texts.some((t) => unmapped.test(t))) return texts;
  const marked = spans();
  const begins = items.filter((i) => "type" in i && i.type === "beginMarkedContentProps").length;
  if (!marked || marked.length !== begins) return texts;
  // The runs of text items inside each ActualText span, innermost span first.
  const stack: (number | null)[] = [];
  const runs = new Map<number, number[]>();
  let bdc = 0;
  let text = 0;
  for (const item of items) {
    if ("str" in item) {
      const span = [...stack].reverse().find((k) => k !== null && marked[k] !== null);
      // Blank items are pdf.js's word gaps: they stay where they are.
      if (span !== undefined && span !== null && item.str.trim() !== "")
        runs.set(span, [...(runs.get(span) ?? []), text]);
      text++;
    } else if (item.type === "beginMarkedContentProps") stack.push(bdc++);
    else if (item.type === "beginMarkedContent") stack.push(null);
    else if (item.type === "endMarkedContent") stack.pop();
  }
  for (const [span, run] of runs) {
    if (!run.some((k) => unmapped.test(texts[k]))) continue;
    run.forEach((k, n) => {
      texts[k] = n === 0 ? (marked[span] ?? "") : "";
    });
  }
  return texts;
}
