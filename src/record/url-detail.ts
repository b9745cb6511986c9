/**
 * How much of a URL a record keeps (docs/RECORD.md `url_detail`): the origin only (default),
 * origin + path, or the full URL. Query strings and fragments can carry personal data, so only
 * `full` keeps them, and only lab profiles or an explicit user choice select it.
 */
import { URL_DETAILS, type UrlDetail } from "./types.ts";

export { URL_DETAILS };

export function isUrlDetail(v: unknown): v is UrlDetail {
  return typeof v === "string" && (URL_DETAILS as readonly string[]).includes(v);
}

/** `url` reduced to `detail`; unparsable input gives "" (never the raw string). */
export function applyDetail(url: string, detail: UrlDetail): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "";
  }
  if (u.origin === "null") return u.protocol;
  switch (detail) {
    case "origin":
      return u.origin;
    case "path":
      return u.origin + u.pathname;
    case "full":
      u.hash = "";
      return u.href;
  }
}

export function originOf(url: string): string {
  return applyDetail(url, "origin");
}

export function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}
