// Review mode: one card per proposed change of an async job (approval_mode ask_every_time), with
// the old and new text, the AI's explanation, Approve, Deny with feedback, and Approve all.
// Decisions go through the client (POST /v1/chat/{session_id}/approve); an approved change is
// committed at once, so the document is re-read and the chunk marked as changed.
import type { ChangeRecord } from "@redline/client";
import { htmlText } from "./doc-view.js";
import { reloadDocument } from "./documents.js";
import { byId, h, status } from "./dom.js";
import { mark, setLayer, setProposedBlocks } from "./highlights.js";
import { client, view } from "./session.js";

type Decision = "pending" | "approved" | "denied";

interface Card {
  change: ChangeRecord;
  state: Decision;
  el: HTMLElement;
}

interface Review {
  jobId: string;
  sessionId: string;
  cards: Map<string, Card>;
  /** Chunks committed by this review's approvals. */
  committed: Set<string>;
  /** The job ended: cards stay as a record, nothing can be decided. */
  ended: boolean;
}

let review: Review | null = null;
let runTask: (task: () => Promise<void>) => void = (task) => void task();
let showTab: (tab: string) => void = () => {};

/** Wires Approve all; `run` reports a task's failure, `tab` switches the side panel. */
export function initReview(run: (task: () => Promise<void>) => void, tab: (name: string) => void): void {
  runTask = run;
  showTab = tab;
  byId("approve-all").addEventListener("click", () => run(approveAll));
}

/** Starts reviewing the job's proposals (clears the previous review's cards). */
export function startReview(jobId: string, sessionId: string): void {
  review = { jobId, sessionId, cards: new Map(), committed: new Set(), ended: false };
  byId("cards").replaceChildren();
  refresh();
}

/** Adds cards for proposed changes (a change already shown is ignored). */
export function addProposals(changes: ChangeRecord[]): void {
  if (!review || changes.length === 0) return;
  const first = review.cards.size === 0 ? changes[0] : undefined;
  for (const change of changes) {
    if (review.cards.has(change.change_id)) continue;
    const card: Card = { change, state: "pending", el: cardElement(change) };
    review.cards.set(change.change_id, card);
    byId("cards").append(card.el);
  }
  showTab("review");
  refresh();
  if (first) view().reveal(first.insert_after_chunk_id ?? first.chunk_id, false);
}

/** The job ended: undecided cards can no longer be decided. */
export function endReview(): void {
  if (!review) return;
  review.ended = true;
  for (const card of review.cards.values()) {
    for (const button of card.el.querySelectorAll("button")) button.disabled = true;
  }
  setLayer("review", new Map());
  setProposedBlocks([]);
  refresh();
}

function cardElement(change: ChangeRecord): HTMLElement {
  const oldText = change.old_html ? htmlText(change.old_html) : "";
  const newText = change.new_html ? htmlText(change.new_html) : "";
  const feedback = h("input", { class: "feedback", type: "text" });
  feedback.placeholder = "Feedback (optional)";
  const approve = h("button", { class: "approve", type: "button", text: "Approve" });
  const deny = h("button", { class: "deny", type: "button", text: "Deny" });
  const chunk = h("span", { class: "chunk", text: change.chunk_id, title: "Show in the document" });
  chunk.addEventListener("click", () => view().reveal(change.chunk_id));
  const el = h(
    "article",
    { class: "card", data: { changeId: change.change_id, chunkId: change.chunk_id, state: "pending" } },
    h("div", { class: "card-head" }, h("span", { class: "op", text: change.operation }), chunk),
    change.ai_explanation ? h("div", { class: "explanation", text: change.ai_explanation }) : null,
    change.operation !== "create" && oldText ? h("div", { class: "old" }, h("span", { text: oldText })) : null,
    change.operation !== "delete" && newText ? h("div", { class: "new" }, h("span", { text: newText })) : null,
    h("div", { class: "card-actions" }, feedback, deny, approve),
    h("div", { class: "decision" }),
  );
  approve.addEventListener("click", () => runTask(() => decide(change.change_id, true)));
  deny.addEventListener("click", () => runTask(() => decide(change.change_id, false, feedback.value.trim())));
  el.addEventListener("mouseenter", () => view().reveal(change.chunk_id));
  return el;
}

async function decide(changeId: string, approved: boolean, feedback = ""): Promise<void> {
  const current = review;
  const card = current?.cards.get(changeId);
  if (!current || current.ended || !card || card.state !== "pending") return;
  setBusy(card, true);
  try {
    const opts = { changeIds: [changeId], sessionId: current.sessionId };
    const res = approved
      ? await client().approve(current.jobId, opts)
      : await client().deny(current.jobId, { ...opts, ...(feedback && { feedback }) });
    settle(card, approved ? "approved" : "denied", feedback);
    if (approved && res.applied.length > 0) await committed(current, [card.change.chunk_id]);
    status(approved ? "Change approved and committed." : "Change denied; the feedback goes to the AI.");
  } finally {
    setBusy(card, false);
  }
}

async function approveAll(): Promise<void> {
  const current = review;
  if (!current || current.ended) return;
  const pending = [...current.cards.values()].filter((c) => c.state === "pending");
  if (pending.length === 0) return;
  await client().approve(current.jobId, { sessionId: current.sessionId });
  for (const card of pending) settle(card, "approved");
  await committed(
    current,
    pending.map((c) => c.change.chunk_id),
  );
  status(`Approved ${pending.length} changes.`);
}

async function committed(current: Review, chunkIds: string[]): Promise<void> {
  for (const id of chunkIds) current.committed.add(id);
  await reloadDocument(current.sessionId);
  setLayer("changed", mark(current.committed, "changed"));
  refresh();
}

function settle(card: Card, state: Decision, feedback = ""): void {
  card.state = state;
  card.el.dataset.state = state;
  const label = state === "approved" ? "Approved" : `Denied${feedback ? `: “${feedback}”` : ""}`;
  const decision = card.el.querySelector(".decision");
  if (decision) decision.textContent = label;
  card.el.querySelector(".card-actions")?.remove();
  refresh();
}

function setBusy(card: Card, busy: boolean): void {
  for (const button of card.el.querySelectorAll("button")) button.disabled = busy;
}

/** Updates the counter, the summary and the document's review decorations. */
function refresh(): void {
  const ended = review?.ended ?? false;
  const cards = review ? [...review.cards.values()] : [];
  const pending = ended ? [] : cards.filter((c) => c.state === "pending");
  const count = byId("review-count");
  count.textContent = String(pending.length);
  count.hidden = pending.length === 0;
  byId("approve-all").hidden = pending.length < 2;
  const decided = cards.length - pending.length;
  byId("review-summary").textContent =
    cards.length === 0
      ? "No changes waiting for review."
      : pending.length > 0
        ? `${pending.length} of ${cards.length} proposed changes waiting for you`
        : ended
          ? `The turn ended: ${decided} of ${cards.length} changes decided.`
          : `All ${decided} changes decided; the AI is finishing the turn…`;
  if (ended) return;
  const highlights = new Map(
    pending
      .filter((c) => c.change.operation !== "create")
      .map((c) => [c.change.chunk_id, c.change.operation === "delete" ? "proposed-delete" : "proposed-edit"] as const),
  );
  setLayer("review", highlights);
  setProposedBlocks(
    pending
      .filter((c) => c.change.operation === "create")
      .map((c) => ({
        changeId: c.change.change_id,
        afterChunkId: c.change.insert_after_chunk_id,
        html: c.change.new_html,
      })),
  );
}
