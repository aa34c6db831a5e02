// Links between the pages: a player's name opens their profile, a race its room or result,
// a finished daily game its replay. Every address is a hash route of app.js, so it can be shared.

import { el } from "./ui.js";

export const playerHref = (name) => `#/player/${encodeURIComponent(name)}`;
export const raceHref = (raceId) => `#/race/${encodeURIComponent(raceId)}`;
export const watchHref = (raceId) => `#/watch/${encodeURIComponent(raceId)}`;
export const replayHref = (gameId) => `#/replay/${encodeURIComponent(gameId)}`;

/** A player's name as a link to their profile. */
export function playerLink(name) {
  return el("a.player", { href: playerHref(name), "data-player": name }, name);
}

/** The whole address of a page (`#/watch/ID`), to copy and send to someone. */
export function shareUrl(hash) {
  return `${location.origin}${location.pathname}${hash}`;
}

/** A read-only field with a page's address and a Copy button (the clipboard when allowed). */
export function shareBox(label, hash) {
  const url = shareUrl(hash);
  const input = el("input.share", { readonly: true, value: url, "aria-label": label, "data-share": hash });
  const copy = el("button", {
    type: "button",
    onclick: async () => {
      input.select();
      try {
        await navigator.clipboard.writeText(url);
        copy.textContent = "Copied";
      } catch (e) {
        copy.textContent = "Select and copy";
      }
    },
  }, "Copy link");
  return el("div.sharebox", {}, el("label", {}, label, input), copy);
}

/** "2030-06-15" from a time in ms (UTC, as the server's days are). */
export function day(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}
