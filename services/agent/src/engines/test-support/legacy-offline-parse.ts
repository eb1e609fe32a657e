// The offline parser as it was before the linear rewrite (regexes over the raw message and a
// quote scanner that rescans to the end per unclosed quote). Kept only as the oracle of the
// differential property test in offline-parse.test.ts: on short messages, where its
// super-linear cost does not matter, the new parser must answer exactly the same.
import { type OfflineInstruction, ORDINALS } from "../offline-parse.js";

type Token = { quoted: false; text: string } | { quoted: true; text: string };

// Which closing quotes end a quoted argument opened by a given quote. Curly
// and straight quotes are mixed freely by phones and word processors.
const CLOSERS: Record<string, string> = {
  '"': '"”“',
  "“": '”"',
  "”": '”"',
  "‘": "’'",
  "'": "'’",
};

/**
 * Splits a message into words and quoted arguments. A single quote opens an
 * argument only at the start of a word and closes only at the end of one, so
 * apostrophes ("don't") inside single-quoted text survive.
 */
function tokenize(message: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = message.length;
  while (i < n) {
    const ch = message[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const closers = CLOSERS[ch];
    if (closers !== undefined) {
      const single = ch === "'" || ch === "‘";
      let j = i + 1;
      while (j < n) {
        if (closers.includes(message[j]) && (!single || j + 1 >= n || !/[\p{L}\p{N}]/u.test(message[j + 1]))) break;
        j++;
      }
      if (j < n) {
        tokens.push({ quoted: true, text: message.slice(i + 1, j) });
        i = j + 1;
        continue;
      }
      // An unclosed quote is read as an ordinary word character.
    }
    let j = i;
    while (j < n && !/\s/.test(message[j]) && !(j > i && CLOSERS[message[j]] !== undefined && message[j] !== "'")) j++;
    if (j === i) j++;
    tokens.push({ quoted: false, text: message.slice(i, j) });
    i = j;
  }
  return tokens;
}

const Q = '"'; // a quoted argument in the token shape
const FILLER_START = /^(?:(?:please|kindly|can you|could you|would you|will you|i want you to|i'd like you to)\s+)+/;
const FILLER_END = /(?:\s+(?:please|thanks|thank you))+$/;

/**
 * Parses one message against the offline grammar (docs/offline-engine.md).
 * Keywords are case-insensitive; arguments are quoted with "", “”, '' or ‘’.
 */
export function legacyParseOfflineInstruction(message: string): OfflineInstruction {
  const outline = parseDraftOutline(message);
  if (outline) return outline;

  const tokens = tokenize(message.trim());
  const args: string[] = [];
  const words: string[] = [];
  for (const token of tokens) {
    if (token.quoted) {
      args.push(token.text);
      words.push(Q);
    } else {
      const word = token.text.toLowerCase().replace(/[.,!?;:]+$/, "");
      if (word !== "") words.push(word);
    }
  }
  const shape = words.join(" ").replace(FILLER_START, "").replace(FILLER_END, "");
  const a = (k: number): string => args[k];

  let m: RegExpExecArray | null;
  const ALL = "(?:all (?:occurrences of |instances of )?|every (?:occurrence|instance) of |the (?:text|word|phrase) )?";
  const SECTION = "(?:the )?(?:section|heading)";

  m = new RegExp(
    `^(?:replace|change|substitute) ${ALL}" (?:with|to|by|into|for) "(?: everywhere| throughout(?: the document)?)?(?: (?:in|within|inside|under) ${SECTION} ")?$`,
  ).exec(shape);
  if (m) {
    return args.length === 3
      ? { kind: "replace", find: a(0), replacement: a(1), section: a(2) }
      : { kind: "replace", find: a(0), replacement: a(1) };
  }

  if (/^rename (?:the )?(?:heading|section|title) " (?:to|as|into) "$/.test(shape)) {
    return { kind: "rename-heading", heading: a(0), newTitle: a(1) };
  }

  if (new RegExp(`^(?:delete|remove) ${SECTION} "$`).test(shape)) return { kind: "delete-section", section: a(0) };

  if (
    /^(?:delete|remove) (?:the )?(?:first )?(?:paragraph|block|chunk) (?:containing|that contains|which contains|with|with the text|mentioning|that mentions) "$/.test(
      shape,
    )
  ) {
    return { kind: "delete-paragraph", containing: a(0) };
  }

  const ADD = "(?:add|insert|append) (?:a )?(?:new )?";
  if (
    new RegExp(
      `^${ADD}paragraph (?:saying |with (?:the )?text )?" (?:after|to|at the end of|into|in|under) ${SECTION} "$`,
    ).test(shape)
  ) {
    return { kind: "add-paragraph", text: a(0), section: a(1) };
  }

  const BODY = "with (?:the )?(?:text|content|body|paragraph)";
  if (new RegExp(`^${ADD}section (?:called |titled |named )?" (?:after|below|following) ${SECTION} "$`).test(shape)) {
    return { kind: "add-section", title: a(0), section: a(1) };
  }
  if (
    new RegExp(`^${ADD}section (?:called |titled |named )?" (?:after|below|following) ${SECTION} " ${BODY} "$`).test(
      shape,
    )
  ) {
    return { kind: "add-section", title: a(0), section: a(1), body: a(2) };
  }
  if (
    new RegExp(`^${ADD}section (?:called |titled |named )?" ${BODY} " (?:after|below|following) ${SECTION} "$`).test(
      shape,
    )
  ) {
    return { kind: "add-section", title: a(0), section: a(2), body: a(1) };
  }

  m = new RegExp(
    `^${ADD}row (?:with |containing )?"(?: (?:to|in|into|at the end of) (?:(?:the )?table #?(\\d+)|(?:the )?(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|\\d+(?:st|nd|rd|th)) table|(?:the )?table (?:in|under|of) ${SECTION} "|(?:the )?table))?$`,
  ).exec(shape);
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

  const EVERY = "(?:all |every |every occurrence of |all occurrences of )?";
  m = new RegExp(
    `^(?:make|set|format|put|mark) ${EVERY}" (?:as |in )?(bold|italic|italics|italicized|emphasized)$`,
  ).exec(shape);
  if (m) return { kind: "format", phrase: a(0), tag: m[1] === "bold" ? "strong" : "em" };
  m = new RegExp(`^(bold|embolden|italicize|italicise|italic|emphasize|emphasise) ${EVERY}"$`).exec(shape);
  if (m) return { kind: "format", phrase: a(0), tag: m[1] === "bold" || m[1] === "embolden" ? "strong" : "em" };

  if (new RegExp(`^(?:show|display|print|read|view|get) (?:me )?${SECTION} "$`).test(shape)) {
    return { kind: "show-section", section: a(0) };
  }

  return { kind: "unknown" };
}

// "draft an outline about Topic" takes the unquoted rest of the message, so it is
// matched on the raw text (keeping the topic's case) rather than on tokens.
const DRAFT_OUTLINE =
  /^\s*(?:(?:please|kindly|can you|could you)\s+)*(?:draft|write|create|make|generate|start)\s+(?:me\s+)?(?:an?\s+|the\s+)?(?:document\s+)?outline(?:\s+(?:for|about|on|of)\s+([\s\S]+?))?\s*[.!?]*\s*$/i;

function parseDraftOutline(message: string): OfflineInstruction | null {
  const m = DRAFT_OUTLINE.exec(message);
  if (!m) return null;
  let topic = (m[1] ?? "").trim();
  const quoted = tokenize(topic);
  if (quoted.length === 1 && quoted[0].quoted) topic = quoted[0].text.trim();
  return { kind: "draft-outline", topic };
}
