// presigned_upload: POST /v1/uploads, PUT the bytes straight to the object store's pre-signed
// URL, then process the upload into a new session; recorded as one request.
import { type Answer, answered, type ClientState, type LoadIo, noAnswer, StepFailed } from "../client.js";

/** The text of the next pre-signed upload of `c` and its marker. */
function nextUpload(c: ClientState): { marker: string; bytes: Buffer } {
  const marker = `upload-c${c.index}-p-${++c.uploads}`;
  return { marker, bytes: Buffer.from(`# Upload ${c.index}\n\nText ${marker}.\n`) };
}

/** The three steps; the first that is not answered 2xx is what the record shows (throws StepFailed then). */
export async function presignedUpload(io: LoadIo, c: ClientState): Promise<void> {
  const { marker, bytes } = nextUpload(c);
  const startedAt = Date.now();
  const step = async (outcome: Promise<Answer>, direct = false): Promise<Answer> => {
    const a = await outcome.catch(noAnswer);
    const got = answered(a);
    if (!got || got.status < 200 || got.status >= 300) {
      io.record({ ...io.recordOf(c, "presigned_upload", startedAt, a), ...(direct ? { direct } : {}) });
      throw new StepFailed("presigned upload");
    }
    return got;
  };
  const created = await step(
    io.send(c.key, "POST", "/v1/uploads", {
      filename: `${marker}.md`,
      content_type: "text/markdown",
      size_bytes: bytes.length,
    }),
  );
  const { upload_id, upload_url } = JSON.parse(created.text) as { upload_id: string; upload_url: string };
  await step(io.fetchBounded(upload_url, { method: "PUT", body: new Uint8Array(bytes) }), true);
  const init = await step(io.send(c.key, "POST", "/v1/sessions/init", {}));
  const sid = (JSON.parse(init.text) as { session_id: string }).session_id;
  const processed = await step(io.send(c.key, "POST", `/v1/uploads/${upload_id}/process`, { session_id: sid }));
  io.record(io.recordOf(c, "presigned_upload", startedAt, processed));
  const body = JSON.parse(processed.text) as { durable_document_id: string };
  io.ledger.uploads.push({
    client: c.index,
    kind: "presigned_upload",
    documentId: body.durable_document_id,
    marker,
  });
}
