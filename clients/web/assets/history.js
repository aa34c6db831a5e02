// Your daily history (`#/history/VARIANT`): a page of finished days at a time, newest first,
// older and newer pages; each finished day opens its move-by-move replay.

import { describe } from "./net.js";
import { amount, place, replayCell, verdict } from "./profile.js";
import { clock, el, title } from "./ui.js";

const PAGE = 10;

export class HistoryScreen {
  constructor(app, variant) {
    this.app = app;
    this.conn = app.conn;
    this.variant = variant && app.conn.variants.includes(variant) ? variant : app.conn.variants[0];
    this.pages = [null]; // the `before` of each page seen: [newest, older, …]
    this.node = el("section.history", { "aria-label": "History" });
  }

  async load() {
    const before = this.pages[this.pages.length - 1];
    const pick = el("select", { id: "h-variant", onchange: (e) => { location.hash = `#/history/${e.target.value}`; } },
      this.conn.variants.map((v) => el("option", { value: v, selected: v === this.variant }, title(v))));
    const body = el("div.panel", {}, el("p.muted", {}, "Loading…"));
    this.node.replaceChildren(el("h1", {}, "Your history"),
      el("div.controls", {}, el("label", { for: "h-variant" }, "Game "), pick,
        el("a.button", { href: `#/player/${encodeURIComponent(this.conn.player.name)}` }, "Your profile")),
      body);
    let page;
    try {
      page = await this.conn.request({ type: "history.get", variant: this.variant, limit: PAGE, ...(before ? { before } : {}) });
    } catch (e) {
      body.replaceChildren(el("p.error", {}, describe(e)));
      return;
    }
    const rows = page.entries.map((r) => el("tr", { "data-date": r.date },
      el("th", { scope: "row" }, r.date), el("td", {}, verdict(r)), el("td", {}, amount(r)),
      el("td", {}, clock(r.time_ms)), el("td", {}, String(r.moves)), el("td", {}, String(r.hints)),
      el("td", {}, place(r)), el("td", {}, replayCell(r))));
    const newer = el("button", { "data-page": "newer", disabled: this.pages.length === 1,
      onclick: () => { this.pages.pop(); this.load(); } }, "‹ Newer");
    const older = el("button", { "data-page": "older", disabled: !page.next_before,
      onclick: () => { this.pages.push(page.next_before); this.load(); } }, "Older ›");
    body.replaceChildren(
      rows.length
        ? el("div.scroll", { tabindex: "0" }, el("table.ranking", { "aria-label": `${title(this.variant)} history` },
          el("thead", {}, el("tr", {}, ["Day", "Result", "Points", "Time", "Moves", "Hints", "Place", "Replay"].map((h) => el("th", { scope: "col" }, h)))),
          el("tbody", {}, rows)))
        : el("p.muted", {}, `No finished ${title(this.variant)} game${before ? " before these" : " yet"}.`),
      el("div.paging", {}, newer, el("span.muted", {}, `page ${this.pages.length}`), older));
  }
}
