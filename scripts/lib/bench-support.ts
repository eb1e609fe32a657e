import type { Principal } from "@redline/service-kit";
import type { TestStack } from "../../test/support/stack.js";

/** A contract-like document of `sections` sections, each about one printed page (~3,000 characters of text in 10 chunks). */
export function generateDocument(sections: number): string {
  const parts: string[] = [];
  for (let s = 1; s <= sections; s++) {
    parts.push(`<h2>Section ${s}: Obligations of the parties</h2>`);
    for (let p = 0; p < 7; p++) {
      parts.push(
        `<p>Clause ${s}.${p + 1}. The Provider shall deliver the services described in Schedule ${s} with <strong>reasonable skill and care</strong>, in accordance with good industry practice and the service levels agreed in writing between the parties from time to time. Where a deliverable is rejected, the Provider shall remedy the defect within ten (10) business days at its own cost, and the Client may withhold payment of the related fee until the remedied deliverable has been accepted in writing. Nothing in this clause limits any other right or remedy of the Client.</p>`,
      );
    }
    parts.push(`<ul><li>Deliverable ${s}-A</li><li>Deliverable ${s}-B</li></ul>`);
    parts.push(
      `<table style="border-collapse: collapse"><tr><th>Item</th><th>Amount</th></tr><tr><td>Fee ${s}</td><td style="text-align: right">${s * 1000}</td></tr></table>`,
    );
  }
  return parts.join("\n");
}

export async function principalOf(stack: TestStack, key: string): Promise<Principal> {
  const p = (await stack.accounts.resolveApiKey({ apiKey: key })).principal;
  if (!p) throw new Error("no principal");
  return p;
}

/** The OpenAI-compatible engine config of a scripted model at `url` (every tier one model). */
export function scriptedEngine(url: string, maxSteps: number) {
  return {
    baseURL: url,
    apiKey: "bench",
    models: { core: "m", turbo: "m", pro: "m", max: "m" },
    requestTimeoutMs: 60_000,
    maxSteps,
  };
}
