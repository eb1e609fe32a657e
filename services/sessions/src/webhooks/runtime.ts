// The webhooks machinery of a running sessions process: its NATS connection, the enqueuer (durable
// JetStream consumers → deliveries outbox) and the delivery worker, started and stopped together.
import { connectNats, type NatsConnection } from "@redline/service-kit";
import type { SessionsContext } from "../context.js";
import { startDeliveryWorker } from "./deliver.js";
import { startEnqueuer } from "./enqueue.js";
import { observeWebhookBacklog } from "./metrics.js";

/** A started runtime: `nc` for the health probe; stop() ends the loops, then drains NATS. */
export interface WebhooksRuntime {
  nc: NatsConnection;
  stop(): Promise<void>;
}

/** Connects NATS and starts the delivery worker and the enqueuer with `ctx.webhooks`. */
export async function startWebhooks(ctx: SessionsContext, natsUrl: string): Promise<WebhooksRuntime> {
  const nc = await connectNats(natsUrl, "sessions");
  const worker = startDeliveryWorker(ctx.db, ctx.webhooks, ctx.log.child({ component: "webhook-delivery" }));
  const stopBacklog = observeWebhookBacklog(ctx.db);
  try {
    const enqueuer = await startEnqueuer(
      ctx.db,
      nc,
      ctx.webhooks.consumer,
      ctx.log.child({ component: "webhook-enqueue" }),
      worker.kick,
    );
    return {
      nc,
      async stop() {
        await enqueuer.stop();
        await worker.stop();
        stopBacklog();
        await nc.drain().catch(() => {});
      },
    };
  } catch (err) {
    await worker.stop();
    stopBacklog();
    await nc.close();
    throw err;
  }
}
