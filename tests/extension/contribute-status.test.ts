import { describe, expect, it } from "vitest";
import { contributeLine, parseContributeStatus, previewLines } from "../../src/contribute/status.ts";
import { MessageError, parseHostMessage } from "../../src/messages/protocol.ts";

const base = {
  type: "contribute_status", schema: 1, msg_id: "c1", enabled: true, url: "https://c.example:8443", token_set: true,
  new_loads: 7, columns: { navigations: ["id", "origin"], requests: ["host"] }, last_contribution_ms: Date.UTC(2025, 10, 24, 9, 15),
  last_navigations: 120, last_error: null,
};

describe("contribute_status", () => {
  it("parses the host's message and says it in one line", () => {
    const s = parseContributeStatus(base);
    expect(contributeLine(s)).toBe("contributing to https://c.example:8443 · last 2025-11-24 09:15 UTC (120 loads) · 7 new");
    expect(previewLines(s)).toEqual(["7 new page load(s) would be sent.", "navigations: id, origin", "requests: host"]);
    expect(contributeLine({ ...s, enabled: false })).toBe("contributing: off");
    expect(contributeLine({ ...s, last_contribution_ms: null, last_error: "refused (401)" }))
      .toBe("contributing to https://c.example:8443 · nothing sent yet · 7 new · last try failed: refused (401)");
  });

  it("rejects malformed fields where they enter", () => {
    expect(parseHostMessage(base).type).toBe("contribute_status");
    for (const bad of [{ new_loads: -1 }, { new_loads: "7" }, { enabled: "yes" }, { columns: { t: [1] } },
      { last_contribution_ms: "x" }, { token_set: undefined }]) {
      expect(() => parseHostMessage({ ...base, ...bad })).toThrow(MessageError);
    }
  });
});
