// The chat panel: a message goes to POST /v1/chat (sync) or /v1/chat/async, whose progress stream
// (client.streamJob) drives the progress bar, review cards (proposed_change events) and the final
// reply. In review mode the job asks before each change (approval_mode ask_every_time).
import { type ChatResponse, type JobStreamEvent, proposedChanges } from "@redline/client";
import { reloadDocument } from "./documents.js";
import { byId, h, setWidth, status } from "./dom.js";
import { mark, setLayer } from "./highlights.js";
import { addProposals, endReview, startReview } from "./review.js";
import { client, currentDoc, view } from "./session.js";
import { refreshUsage } from "./usage.js";
import { refreshVersions } from "./versions.js";

/** Wires the chat form; `run` reports a task's failure in the status bar. */
export function initChat(run: (task: () => Promise<void>) => void): void {
  const form = byId<HTMLFormElement>("chat-form");
  const input = byId<HTMLTextAreaElement>("message");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const message = input.value.trim();
    if (!message) return;
    run(async () => {
      const doc = currentDoc();
      if (!doc) throw new Error("Upload a document or paste HTML first.");
      input.value = "";
      addMessage("user", message);
      const send = byId<HTMLButtonElement>("send");
      send.disabled = true;
      try {
        const review = byId<HTMLInputElement>("review-mode").checked;
        // Approval pauses exist only in async jobs, so review mode always runs async.
        if (review || byId<HTMLSelectElement>("chat-mode").value === "async") {
          await chatAsync(doc.sessionId, message, review);
        } else {
          await chatSync(doc.sessionId, message);
        }
      } finally {
        send.disabled = false;
        await Promise.allSettled([refreshUsage(), refreshVersions()]);
      }
    });
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
}

async function chatSync(sessionId: string, message: string): Promise<void> {
  status("Waiting for the AI…");
  showProgress(30, "Working…");
  try {
    const res = await client().chat({ message, session_id: sessionId });
    await showResult(res);
  } finally {
    hideProgress();
  }
}

async function chatAsync(sessionId: string, message: string, review: boolean): Promise<void> {
  const { jobId } = await client().chatAsync({
    message,
    session_id: sessionId,
    approval_mode: review ? "ask_every_time" : "approve_all",
  });
  if (review) startReview(jobId, sessionId);
  status(`Job ${jobId} started.`);
  showProgress(5, "Queued…");
  // Stop: POST /v1/jobs/{id}/cancel; the stream then ends with the job's error event.
  const cancel = byId<HTMLButtonElement>("cancel-job");
  const onCancel = () => {
    cancel.disabled = true;
    void client()
      .cancel(jobId)
      .then(() => status("Job cancelled; changes already applied stay."))
      .catch((err: Error) => status(err.message, "error"));
  };
  cancel.disabled = false;
  cancel.hidden = false;
  cancel.addEventListener("click", onCancel);
  let result: ChatResponse | undefined;
  let failure: string | undefined;
  try {
    for await (const event of client().streamJob(jobId, { sessionId })) {
      const outcome = onEvent(event);
      if (outcome.result) result = outcome.result;
      if (outcome.error) failure = outcome.error;
    }
  } finally {
    cancel.removeEventListener("click", onCancel);
    cancel.hidden = true;
    hideProgress();
    if (review) endReview();
  }
  if (failure) throw new Error(failure);
  if (!result) result = (await client().getJob(jobId)).result as ChatResponse | undefined;
  if (result) await showResult(result);
}

/** One stream event: progress text, proposed changes, the final result or an error. */
function onEvent(event: JobStreamEvent): { result?: ChatResponse; error?: string } {
  const data = (event.data ?? {}) as Record<string, unknown>;
  switch (event.event) {
    case "intermediate": {
      const text = typeof data.content === "string" ? data.content : JSON.stringify(data.content ?? "");
      const progress = typeof data.progress === "number" ? data.progress : undefined;
      showProgress(progress ?? nextProgress(), text);
      return {};
    }
    case "proposed_change":
    case "proposed_change_batch": {
      const changes = proposedChanges(event);
      addProposals(changes);
      showProgress(60, `${changes.length === 1 ? "A change is" : `${changes.length} changes are`} waiting for review`);
      status("Review the proposed changes.");
      return {};
    }
    case "final":
      showProgress(100, "Done");
      return { result: (data.result ?? undefined) as ChatResponse | undefined };
    case "error":
      return { error: typeof data.error === "string" ? data.error : "The job failed" };
    default:
      return {};
  }
}

let progressValue = 5;
function nextProgress(): number {
  progressValue = Math.min(90, progressValue + 10);
  return progressValue;
}

/** Shows the reply, re-reads the document and marks the chunks the turn changed. */
async function showResult(res: ChatResponse): Promise<void> {
  const changes = res.document_changes;
  const diffs = changes?.chunk_diffs ?? [];
  const meta = res.usage.was_billable ? `${res.usage.ops_charged} operation charged` : "not billed";
  addMessage("ai", res.response, `${diffs.length} change${diffs.length === 1 ? "" : "s"} · ${meta}`);
  await reloadDocument(res.session_id);
  if (diffs.length > 0) {
    setLayer(
      "changed",
      mark(
        diffs.map((d) => d.chunk_id),
        "changed",
      ),
    );
    view().reveal(diffs[0].chunk_id, false);
  }
  status(diffs.length > 0 ? `The AI changed ${diffs.length} chunk${diffs.length === 1 ? "" : "s"}.` : "Done.");
}

/** Appends a chat bubble. */
export function addMessage(who: "user" | "ai" | "error", text: string, meta?: string): void {
  const list = byId("messages");
  list.append(h("li", { class: `message ${who}`, text }, meta ? h("span", { class: "meta", text: meta }) : null));
  list.scrollTop = list.scrollHeight;
}

function showProgress(percent: number, text: string): void {
  progressValue = percent;
  byId("progress").hidden = false;
  byId("progress-fill").classList.toggle("done", percent >= 100);
  byId("progress-fill").dataset.percent = String(percent);
  setWidth(byId("progress-fill"), percent);
  byId("progress-text").textContent = text;
}

function hideProgress(): void {
  byId("progress").hidden = true;
  progressValue = 5;
}
