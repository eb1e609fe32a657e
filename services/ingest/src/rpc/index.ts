// The RPCs of ingest's two gRPC services, each bound to its file.
import { ingestFilesV1, ingestV1 } from "@redline/grpc-stubs";
import { bindService, type ServiceBinding } from "@redline/service-kit";
import type { IngestContext } from "../context.js";
import { convertDocument } from "./convert-document.js";
import { convertUpload } from "./convert-upload.js";
import { createAttachment } from "./create-attachment.js";
import { createDownload } from "./create-download.js";
import { createTemplate } from "./create-template.js";
import { createUpload } from "./create-upload.js";
import { deleteAttachment } from "./delete-attachment.js";
import { deleteTemplate } from "./delete-template.js";
import { exportDocument } from "./export-document.js";
import { getAttachmentJob } from "./get-attachment-job.js";
import { getMedia } from "./get-media.js";
import { getTemplate } from "./get-template.js";
import { listAttachments } from "./list-attachments.js";
import { listFormats } from "./list-formats.js";
import { listTemplates } from "./list-templates.js";
import { queueEmailExport } from "./queue-email-export.js";
import { searchAttachments } from "./search-attachments.js";

/** ingest.v1.IngestService: conversions (interface-spec fact 8). */
export function ingestHandlers(ctx: IngestContext): ServiceBinding {
  return bindService(ingestV1.IngestServiceService, { convertDocument: convertDocument(ctx), listFormats });
}

/** ingest.v1.FilesService: exports, media, uploads, attachments, templates and deliveries. */
export function filesHandlers(ctx: IngestContext): ServiceBinding {
  return bindService(ingestFilesV1.FilesServiceService, {
    exportDocument: exportDocument(ctx),
    getMedia: getMedia(ctx),
    createUpload: createUpload(ctx),
    convertUpload: convertUpload(ctx),
    createAttachment: createAttachment(ctx),
    listAttachments: listAttachments(ctx),
    getAttachmentJob: getAttachmentJob(ctx),
    deleteAttachment: deleteAttachment(ctx),
    searchAttachments: searchAttachments(ctx),
    createTemplate: createTemplate(ctx),
    listTemplates: listTemplates(ctx),
    deleteTemplate: deleteTemplate(ctx),
    getTemplate: getTemplate(ctx),
    createDownload: createDownload(ctx),
    queueEmailExport: queueEmailExport(ctx),
  });
}
