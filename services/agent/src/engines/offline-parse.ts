// Parsing of the offline engine's instructions (docs/offline-engine.md). A chat message is
// untrusted text of up to 100,000 characters parsed on the agent's event loop, so every step
// here runs in time linear in the message: hand-written scanners instead of regexes wherever
// two quantified parts could match the same characters, and a quote scanner that never rescans
// a tail it already searched. The instruction patterns themselves are only matched against the
// short word "shape" of a message (at most MAX_SHAPE_WORDS words).

/** One parsed offline instruction; `unknown` when the message matches none of the grammar. */
export type OfflineInstruction =
  | { kind: "replace"; find: string; replacement: string; section?: string }
  | { kind: "rename-heading"; heading: string; newTitle: string }
  | { kind: "delete-section"; section: string }
  | { kind: "delete-paragraph"; containing: string }
  | { kind: "add-paragraph"; text: string; section: string }
  | { kind: "add-section"; title: string; section: string; body?: string }
  | { kind: "add-row"; cells: string[]; table: { index: number } | { section: string } | null }
  | { kind: "format"; phrase: string; tag: "strong" | "em" }
  | { kind: "show-section"; section: string }
  | { kind: "draft-outline"; topic: string }
  | { kind: "unknown" };

/**
 * Longest message the engine parses, in UTF-16 code units: the API's cap on a chat message
 * (gateway MAX_MESSAGE_CHARS). The gRPC service does not enforce it itself, so the engine does:
 * longer messages get the "not understood" reply. Parsing the maximum takes a few milliseconds.
 */
export const MAX_PARSED_MESSAGE_CHARS = 100_000;

/**
 * No instruction of the grammar has more than 16 words once leading and trailing courtesy
 * words are dropped (the longest: `add a new row containing "…" at the end of the table in the
 * section "…"`), so a longer shape is "not understood" without building or matching it.
 */
const MAX_SHAPE_WORDS = 40;

// ---------------------------------------------------------------------------
// Characters

/** Exactly the code units regex `\s` (and String#trim) treat as white space. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;

/** Index of the first non-space code unit at or after `from` (`text.length` when none). */
function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/**
 * End of `word` when it occurs at `at`, ASCII letters compared case-insensitively (as a regex
 * with the `i` flag and no `u` flag does: no non-ASCII character folds to an ASCII letter);
 * -1 otherwise.
 */
function literalAt(text: string, at: number, word: string): number {
  if (at + word.length > text.length) return -1;
  for (let k = 0; k < word.length; k++) {
    let c = text.charCodeAt(at + k);
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    if (c !== word.charCodeAt(k)) return -1;
  }
  return at + word.length;
}

/** End of the first of `words` found at `at` (tried in order), or -1. */
function anyLiteralAt(text: string, at: number, words: readonly string[]): number {
  for (const word of words) {
    const end = literalAt(text, at, word);
    if (end >= 0) return end;
  }
  return -1;
}

// ---------------------------------------------------------------------------
// Tokens

// Which closing quotes end a quoted argument opened by a given quote (curly and straight quotes
// are mixed freely by phones and word processors): three closer classes, by UTF-16 code.
//   " opens class 0, closed by " ” “;  “ and ” open class 1, closed by ” ";
//   ‘ and ' open class 2, closed by ’ ' at the end of a word.
const STRAIGHT = 0x22;
const APOSTROPHE = 0x27;

/** The closer class a quote character opens, or -1 for any other character. */
function openerClass(c: number): number {
  if (c === STRAIGHT) return 0;
  if (c === 0x201c || c === 0x201d) return 1;
  if (c === 0x2018 || c === APOSTROPHE) return 2;
  return -1;
}

function closes(cls: number, c: number): boolean {
  if (cls === 0) return c === STRAIGHT || c === 0x201d || c === 0x201c;
  if (cls === 1) return c === 0x201d || c === STRAIGHT;
  return c === 0x2019 || c === APOSTROPHE;
}

/**
 * Splits a message into words and quoted arguments. A single quote opens an argument only at the
 * start of a word and closes only at the end of one, so apostrophes ("don't") inside
 * single-quoted text survive; an unclosed quote is read as an ordinary word character.
 *
 * Each token goes to `onToken`, which returns false to stop early (callers stop once the message
 * cannot be an instruction, so a flood of tiny tokens is never materialized).
 *
 * Linear: a found closer's search range is consumed by the token, and once a search for a
 * closer class has reached the end without finding one, no later search of that class can find
 * one either (it starts further right), so `noCloserFrom` answers it at once.
 */
function tokenize(message: string, onToken: (quoted: boolean, text: string) => boolean): void {
  const n = message.length;
  const noCloserFrom = [n + 1, n + 1, n + 1];
  let i = 0;
  while (i < n) {
    if (isSpace(message.charCodeAt(i))) {
      i++;
      continue;
    }
    const cls = openerClass(message.charCodeAt(i));
    if (cls >= 0 && i + 1 < noCloserFrom[cls]) {
      let j = i + 1;
      while (j < n) {
        if (closes(cls, message.charCodeAt(j)) && (cls !== 2 || j + 1 >= n || !LETTER_OR_NUMBER.test(message[j + 1])))
          break;
        j++;
      }
      if (j < n) {
        if (!onToken(true, message.slice(i + 1, j))) return;
        i = j + 1;
        continue;
      }
      noCloserFrom[cls] = i + 1;
    }
    let j = i + 1;
    for (let c = message.charCodeAt(j); j < n && !isSpace(c) && (openerClass(c) < 0 || c === APOSTROPHE); ) {
      c = message.charCodeAt(++j);
    }
    if (!onToken(false, message.slice(i, j))) return;
    i = j;
  }
}

/** `word` without trailing `.,!?;:` (a loop: the regex `[.,!?;:]+$` is quadratic on "....x"). */
function stripTrailingPunctuation(word: string): string {
  let end = word.length;
  while (end > 0 && ".,!?;:".includes(word[end - 1])) end--;
  return end === word.length ? word : word.slice(0, end);
}

// Courtesy words around an instruction, as word sequences. Leading ones are dropped only when a
// word follows them and trailing ones only when a word precedes them (the grammar's shape).
const FILLER_START = [
  ["please"],
  ["kindly"],
  ["can", "you"],
  ["could", "you"],
  ["would", "you"],
  ["will", "you"],
  ["i", "want", "you", "to"],
  ["i'd", "like", "you", "to"],
];
const FILLER_END = [["please"], ["thanks"], ["thank", "you"]];
/** Words a courtesy phrase is made of: any other word stays in the shape. */
const FILLER_WORDS = new Set(["", ...[...FILLER_START, ...FILLER_END].flat()]);

function sequenceAt(words: string[], at: number, sequence: string[]): boolean {
  if (at < 0 || at + sequence.length > words.length) return false;
  return sequence.every((word, k) => words[at + k] === word);
}

/** The words between leading and trailing courtesy words, as [start, end) of `words`. */
function stripFillers(words: string[]): [number, number] {
  let start = 0;
  for (;;) {
    const filler = FILLER_START.find((seq) => sequenceAt(words, start, seq) && start + seq.length < words.length);
    if (!filler) break;
    start += filler.length;
  }
  let end = words.length;
  for (;;) {
    const filler = FILLER_END.find((seq) => sequenceAt(words, end - seq.length, seq) && end - seq.length > start);
    if (!filler) break;
    end -= filler.length;
  }
  return [start, end];
}

// ---------------------------------------------------------------------------
// Instructions

const Q = '"'; // a quoted argument in the word shape

const ALL = "(?:all (?:occurrences of |instances of )?|every (?:occurrence|instance) of |the (?:text|word|phrase) )?";
const SECTION = "(?:the )?(?:section|heading)";
const ADD = "(?:add|insert|append) (?:a )?(?:new )?";
const BODY = "with (?:the )?(?:text|content|body|paragraph)";
const EVERY = "(?:all |every |every occurrence of |all occurrences of )?";
// Matched against the shape only: single-space separated words, `"` for each argument, at most
// MAX_SHAPE_WORDS words; anchored, and no two adjacent quantified parts can match the same text.
const REPLACE = new RegExp(
  `^(?:replace|change|substitute) ${ALL}" (?:with|to|by|into|for) "(?: everywhere| throughout(?: the document)?)?(?: (?:in|within|inside|under) ${SECTION} ")?$`,
);
const RENAME = /^rename (?:the )?(?:heading|section|title) " (?:to|as|into) "$/;
const DELETE_SECTION = new RegExp(`^(?:delete|remove) ${SECTION} "$`);
const DELETE_PARAGRAPH =
  /^(?:delete|remove) (?:the )?(?:first )?(?:paragraph|block|chunk) (?:containing|that contains|which contains|with|with the text|mentioning|that mentions) "$/;
const ADD_PARAGRAPH = new RegExp(
  `^${ADD}paragraph (?:saying |with (?:the )?text )?" (?:after|to|at the end of|into|in|under) ${SECTION} "$`,
);
const ADD_SECTION = new RegExp(`^${ADD}section (?:called |titled |named )?" (?:after|below|following) ${SECTION} "$`);
const ADD_SECTION_BODY_AFTER = new RegExp(
  `^${ADD}section (?:called |titled |named )?" (?:after|below|following) ${SECTION} " ${BODY} "$`,
);
const ADD_SECTION_BODY_BEFORE = new RegExp(
  `^${ADD}section (?:called |titled |named )?" ${BODY} " (?:after|below|following) ${SECTION} "$`,
);
const ADD_ROW = new RegExp(
  `^${ADD}row (?:with |containing )?"(?: (?:to|in|into|at the end of) (?:(?:the )?table #?(\\d+)|(?:the )?(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|\\d+(?:st|nd|rd|th)) table|(?:the )?table (?:in|under|of) ${SECTION} "|(?:the )?table))?$`,
);
const MAKE_FORMAT = new RegExp(
  `^(?:make|set|format|put|mark) ${EVERY}" (?:as |in )?(bold|italic|italics|italicized|emphasized)$`,
);
const VERB_FORMAT = new RegExp(`^(bold|embolden|italicize|italicise|italic|emphasize|emphasise) ${EVERY}"$`);
const SHOW_SECTION = new RegExp(`^(?:show|display|print|read|view|get) (?:me )?${SECTION} "$`);

/** Table ordinals in `add row … to the second table` (last = -1). */
export const ORDINALS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
  last: -1,
};

/**
 * Parses one message against the offline grammar (docs/offline-engine.md). Keywords are
 * case-insensitive; arguments are quoted with "", “”, '' or ‘’. Runs in time linear in the
 * message; a message over MAX_PARSED_MESSAGE_CHARS is `unknown`. Never throws.
 */
export function parseOfflineInstruction(message: string): OfflineInstruction {
  if (message.length > MAX_PARSED_MESSAGE_CHARS) return { kind: "unknown" };
  const outline = parseDraftOutline(message);
  if (outline) return outline;

  const args: string[] = [];
  const words: string[] = [];
  let significant = 0;
  tokenize(message.trim(), (quoted, text) => {
    const word = quoted ? Q : stripTrailingPunctuation(text.toLowerCase());
    if (quoted) args.push(text);
    if (word !== "") words.push(word);
    if (!FILLER_WORDS.has(word)) significant++;
    return significant <= MAX_SHAPE_WORDS;
  });
  if (significant > MAX_SHAPE_WORDS) return { kind: "unknown" };
  const [start, end] = stripFillers(words);
  if (end - start > MAX_SHAPE_WORDS) return { kind: "unknown" };
  const shape = words.slice(start, end).join(" ");
  const a = (k: number): string => args[k];

  let m = REPLACE.exec(shape);
  if (m) {
    return args.length === 3
      ? { kind: "replace", find: a(0), replacement: a(1), section: a(2) }
      : { kind: "replace", find: a(0), replacement: a(1) };
  }
  if (RENAME.test(shape)) return { kind: "rename-heading", heading: a(0), newTitle: a(1) };
  if (DELETE_SECTION.test(shape)) return { kind: "delete-section", section: a(0) };
  if (DELETE_PARAGRAPH.test(shape)) return { kind: "delete-paragraph", containing: a(0) };
  if (ADD_PARAGRAPH.test(shape)) return { kind: "add-paragraph", text: a(0), section: a(1) };
  if (ADD_SECTION.test(shape)) return { kind: "add-section", title: a(0), section: a(1) };
  if (ADD_SECTION_BODY_AFTER.test(shape)) return { kind: "add-section", title: a(0), section: a(1), body: a(2) };
  if (ADD_SECTION_BODY_BEFORE.test(shape)) return { kind: "add-section", title: a(0), section: a(2), body: a(1) };

  m = ADD_ROW.exec(shape);
  if (m) {
    const cells = a(0)
      .split("|")
      .map((cell) => cell.trim());
    if (m[1] !== undefined) return { kind: "add-row", cells, table: { index: Number(m[1]) } };
    if (m[2] !== undefined) {
      const index = ORDINALS[m[2]] ?? Number.parseInt(m[2], 10);
      return { kind: "add-row", cells, table: { index } };
    }
    if (args.length === 2) return { kind: "add-row", cells, table: { section: a(1) } };
    return { kind: "add-row", cells, table: null };
  }

  m = MAKE_FORMAT.exec(shape);
  if (m) return { kind: "format", phrase: a(0), tag: m[1] === "bold" ? "strong" : "em" };
  m = VERB_FORMAT.exec(shape);
  if (m) return { kind: "format", phrase: a(0), tag: m[1] === "bold" || m[1] === "embolden" ? "strong" : "em" };

  if (SHOW_SECTION.test(shape)) return { kind: "show-section", section: a(0) };
  return { kind: "unknown" };
}

// ---------------------------------------------------------------------------
// "draft an outline about Topic": the topic is the unquoted rest of the message, so it is read
// from the raw text (keeping its case). This scanner accepts exactly what the regex
//   ^\s*(?:(?:please|kindly|can you|could you)\s+)*(?:draft|write|create|make|generate|start)\s+
//   (?:me\s+)?(?:an?\s+|the\s+)?(?:document\s+)?outline(?:\s+(?:for|about|on|of)\s+([\s\S]+?))?
//   \s*[.!?]*\s*$   (flag i)
// accepted, with the same topic, but in one pass: that regex was cubic ("draft an outline for a"
// and thousands of spaces and a letter took seconds), as the lazy topic, `\s*` and `\s*` could
// each take the same spaces.

const OUTLINE_FILLERS = ["please", "kindly", "can you", "could you"];
const OUTLINE_VERBS = ["draft", "write", "create", "make", "generate", "start"];
const OUTLINE_TOPIC_WORDS = ["for", "about", "on", "of"];

/** `text` at `at` is `word` followed by at least one space: the index after the spaces, else -1. */
function wordThenSpaces(text: string, at: number, word: string): number {
  const end = literalAt(text, at, word);
  if (end < 0) return -1;
  const after = skipSpace(text, end);
  return after > end ? after : -1;
}

/** The draft-outline instruction, or null when the message is not one. */
function parseDraftOutline(message: string): OfflineInstruction | null {
  const n = message.length;
  let i = skipSpace(message, 0);
  for (;;) {
    const filler = OUTLINE_FILLERS.map((word) => wordThenSpaces(message, i, word)).find((end) => end >= 0);
    if (filler === undefined) break;
    i = filler;
  }
  const verb = anyLiteralAt(message, i, OUTLINE_VERBS);
  if (verb < 0) return null;
  i = skipSpace(message, verb);
  if (i === verb) return null;
  const me = wordThenSpaces(message, i, "me");
  if (me >= 0) i = me;
  const article = [
    wordThenSpaces(message, i, "an"),
    wordThenSpaces(message, i, "a"),
    wordThenSpaces(message, i, "the"),
  ];
  const articleEnd = article.find((end) => end >= 0);
  if (articleEnd !== undefined) i = articleEnd;
  const doc = wordThenSpaces(message, i, "document");
  if (doc >= 0) i = doc;
  const outlineEnd = literalAt(message, i, "outline");
  if (outlineEnd < 0) return null;

  // The closing `\s*[.!?]*\s*$` matches every suffix starting at or after `tail`.
  let tail = n;
  while (tail > outlineEnd && isSpace(message.charCodeAt(tail - 1))) tail--;
  while (tail > outlineEnd && ".!?".includes(message[tail - 1])) tail--;
  while (tail > outlineEnd && isSpace(message.charCodeAt(tail - 1))) tail--;

  const keywordAt = skipSpace(message, outlineEnd);
  const keywordEnd = keywordAt > outlineEnd ? anyLiteralAt(message, keywordAt, OUTLINE_TOPIC_WORDS) : -1;
  if (keywordEnd >= 0) {
    let topicStart = skipSpace(message, keywordEnd);
    // The topic takes at least one character, if need be the last of the spaces.
    if (topicStart === n && n - keywordEnd >= 2) topicStart = n - 1;
    if (topicStart > keywordEnd && topicStart < n) {
      const topic = message.slice(topicStart, Math.max(topicStart + 1, tail)).trim();
      // A topic that is exactly one quoted argument is that argument.
      const tokens: { quoted: boolean; text: string }[] = [];
      tokenize(topic, (quoted, text) => tokens.push({ quoted, text }) < 2);
      const only = tokens.length === 1 && tokens[0].quoted ? tokens[0].text.trim() : topic;
      return { kind: "draft-outline", topic: only };
    }
  }
  return tail === outlineEnd ? { kind: "draft-outline", topic: "" } : null;
}
