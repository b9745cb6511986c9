/**
 * Adapter: `no-h3` in an everyday browser (docs/POLICY.md, "The no-h3 relay"). Installs the PAC
 * script that routes those domains through the host's loopback CONNECT relay with
 * chrome.proxy.settings, and answers the relay's 407 with the per-run credential the host sent in
 * its `policies` message (chrome.webRequest.onAuthRequired; MV3 needs the "webRequest" and
 * "webRequestAuthProvider" permissions). The user never types a proxy password.
 */
import { pacScript, type PolicyRule, type RelayInfo } from "../policy/ruleset.ts";

let relay: RelayInfo | null = null;
const asked = new Set<string>();

/**
 * Registered once at the worker's top level (an event that wakes the worker must find it).
 * Only the relay's own challenge is answered, once per request: a wrong credential is not retried.
 */
export function installAuthListener(): void {
  chrome.webRequest.onAuthRequired.addListener(
    (details, reply): undefined => {
      const r = relay;
      const ours = r !== null && details.isProxy && details.challenger.host === r.host && details.challenger.port === r.port;
      if (!ours || asked.has(details.requestId)) {
        reply?.(ours ? { cancel: true } : {});
        return undefined;
      }
      asked.add(details.requestId);
      if (asked.size > 10_000) asked.clear();
      reply?.({ authCredentials: { username: r.username, password: r.password } });
      return undefined;
    },
    { urls: ["<all_urls>"] },
    ["asyncBlocking"],
  );
}

/** The PAC for `rules` when a relay runs and some rule is `no-h3`; else the browser's own settings. */
export async function applyProxy(rules: readonly PolicyRule[], info: RelayInfo | null): Promise<boolean> {
  relay = info;
  if (info === null || !rules.some((r) => r.arm === "no-h3")) {
    await chrome.proxy.settings.clear({ scope: "regular" });
    return false;
  }
  await chrome.proxy.settings.set({
    value: { mode: "pac_script", pacScript: { data: pacScript(info.port, rules), mandatory: true } },
    scope: "regular",
  });
  return true;
}
