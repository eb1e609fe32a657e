import { describe, expect, it } from "vitest";
import { ChunkError } from "./errors.js";
import { hasTable, tableRows } from "./table-rows.js";

describe("tableRows", () => {
  it("lists thead, tbody and tfoot rows in order, with their markup", () => {
    const html =
      '<table data-chunk-id="t"><thead><tr><th>Plan</th></tr></thead>' +
      '<tbody><tr class="r"><td style="color: red">Free</td></tr><tr><td>Pro</td></tr></tbody>' +
      "<tfoot><tr><td>Total</td></tr></tfoot></table>";
    expect(tableRows(html)).toEqual([
      "<tr><th>Plan</th></tr>",
      '<tr class="r"><td style="color: red">Free</td></tr>',
      "<tr><td>Pro</td></tr>",
      "<tr><td>Total</td></tr>",
    ]);
  });

  it("keeps a nested table's rows inside their cell, and reads a table wrapped in a figure", () => {
    const html =
      '<figure data-chunk-id="f"><table><tr><td><table><tr><td>inner</td></tr></table></td></tr>' +
      "<tr><td>outer</td></tr></table></figure>";
    const rows = tableRows(html);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain("inner");
    expect(rows[1]).toBe("<tr><td>outer</td></tr>");
    expect(hasTable(html)).toBe(true);
  });

  it("throws not_table for a chunk without a table", () => {
    expect(hasTable("<p>tables are nice</p>")).toBe(false);
    expect(() => tableRows("<p>no table</p>")).toThrow(ChunkError);
  });
});
