// --review: each change a job proposes is shown (old and new text, the AI's explanation) and the
// user answers approve, deny, or deny with feedback; the decisions go back in one batch
// (POST /v1/chat/{session_id}/approve with `changes`), so the job resumes once per proposal.
import type { ChangeRecord } from "@redline/client";
import type { Prompter } from "./prompt.js";

/** One answer to a proposed change. */
export interface Decision {
  change_id: string;
  approved: boolean;
  feedback?: string;
}

/** The visible text of an HTML fragment (tags dropped, entities of the basic five decoded, spaces collapsed). */
export function htmlText(html: string): string {
  return html
    .replace(/<(br|\/p|\/h[1-6]|\/li|\/tr)\b[^>]*>/gi, " ")
    .replace(/<[^>]+>/g, "")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * The old and new text from a little before where they first differ, so a long paragraph shows
 * its change rather than its unchanged start.
 */
export function aroundChange(before: string, after: string): [string, string] {
  let p = 0;
  while (p < before.length && p < after.length && before[p] === after[p]) p++;
  const from = Math.max(0, p - 40);
  const lead = from > 0 ? "…" : "";
  return [lead + before.slice(from), lead + after.slice(from)];
}

/** The change as the terminal shows it: operation, old and new text, explanation. */
export function describeChange(change: ChangeRecord, index: number, total: number): string {
  const lines = [`\nChange ${index + 1} of ${total}: ${change.operation} ${change.chunk_id}`];
  const before = htmlText(change.old_html ?? "");
  const after = htmlText(change.new_html ?? "");
  if (before) lines.push(`  - ${before}`);
  if (after) lines.push(`  + ${after}`);
  if (change.ai_explanation) lines.push(`  Why: ${change.ai_explanation}`);
  return `${lines.join("\n")}\n`;
}

const QUESTION = "[a]pprove, [d]eny, [f]eedback (deny and tell the AI why)? ";

/**
 * Asks about each change in turn. `a`/`y` approves, `d`/`n` denies, `f` (optionally followed by the
 * text on the same line) denies with feedback; anything else asks again. The end of input
 * denies what is left: nothing is applied that nobody approved.
 */
export async function askDecisions(
  changes: ChangeRecord[],
  prompter: Prompter,
  write: (text: string) => void,
): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (const [i, change] of changes.entries()) {
    write(describeChange(change, i, changes.length));
    decisions.push(await askOne(change.change_id, prompter, write));
  }
  return decisions;
}

async function askOne(changeId: string, prompter: Prompter, write: (text: string) => void): Promise<Decision> {
  for (;;) {
    const answer = await prompter.ask(QUESTION);
    if (answer === null) {
      write("(end of input: denied)\n");
      return { change_id: changeId, approved: false };
    }
    const [word = "", ...rest] = answer.split(/\s+/);
    const choice = word.toLowerCase();
    if (choice === "a" || choice === "approve" || choice === "y" || choice === "yes")
      return { change_id: changeId, approved: true };
    if (choice === "d" || choice === "deny" || choice === "n" || choice === "no")
      return { change_id: changeId, approved: false };
    if (choice === "f" || choice === "feedback") {
      const inline = rest.join(" ").trim();
      const feedback = inline || ((await prompter.ask("Feedback for the AI: ")) ?? "");
      return { change_id: changeId, approved: false, ...(feedback && { feedback }) };
    }
  }
}
