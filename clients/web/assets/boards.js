// Leaderboards: the daily board of each variant and tier (top with paging, around me, my
// rank, par; `#/boards/VARIANT/TIER`, protocol 8 `tier`) and the race boards (rating, wins today).

import { playerLink } from "./links.js";
import { describe } from "./net.js";
import { clock, DAILY_TIER, el, scoring, tierName, TIERS, title } from "./ui.js";

const PAGE = 20;

export class BoardsScreen {
  constructor(app, variant, tier) {
    this.app = app;
    this.conn = app.conn;
    this.variant = variant || app.conn.variants[0];
    this.tier = TIERS.includes(tier) ? tier : DAILY_TIER;
    this.kind = "daily";
    this.offset = 0;
    this.mode = "top";
    this.node = el("section.boards", { "aria-label": "Leaderboards" });
  }

  async load() {
    const variants = el("select", { "aria-label": "Variant", onchange: (e) => { this.variant = e.target.value; this.offset = 0; this.load(); } },
      this.conn.variants.map((v) => el("option", { value: v, selected: v === this.variant }, title(v))));
    const kinds = el("div.tabs", { role: "tablist" },
      [["daily", "Daily"], ["rating", "Race rating"], ["wins", "Race wins today"]].map(([k, label]) =>
        el("button", { role: "tab", "aria-selected": String(k === this.kind), "data-board": k,
          onclick: () => { this.kind = k; this.offset = 0; this.mode = "top"; this.load(); } }, label)));
    // The day's tiers each have their board (protocol 8); medium is the daily game's.
    const tiers = this.kind === "daily" ? el("select", { "aria-label": "Tier", "data-tier-choice": "",
      onchange: (e) => { this.tier = e.target.value; this.offset = 0; this.mode = "top"; this.load(); } },
    TIERS.map((t) => el("option", { value: t, selected: t === this.tier }, tierName(t)))) : null;
    const body = el("div.boardbody", {}, el("p.muted", {}, "Loading…"));
    this.node.replaceChildren(el("h1", {}, "Leaderboards"), el("div.controls", {}, variants, tiers, kinds), body);
    try {
      body.replaceChildren(...(this.kind === "daily" ? await this.daily() : await this.races()));
    } catch (e) {
      body.replaceChildren(el("p.error", {}, describe(e)));
    }
  }

  paging(total, count) {
    return el("div.paging", {},
      el("button", { disabled: this.mode !== "top" || this.offset === 0, onclick: () => { this.offset = Math.max(0, this.offset - PAGE); this.load(); } }, "‹ Previous"),
      el("span.muted", {}, this.mode === "top"
        ? (total ? `${this.offset + 1}–${this.offset + count} of ${total}` : "No results yet")
        : `around you · ${total} in all`),
      el("button", { disabled: this.mode !== "top" || this.offset + PAGE >= total, onclick: () => { this.offset += PAGE; this.load(); } }, "Next ›"),
      el("button", { "data-mode": "around", onclick: () => { this.mode = this.mode === "top" ? "around" : "top"; this.load(); } },
        this.mode === "top" ? "Around me" : "Top"));
  }

  async daily() {
    const v = this.variant;
    const tier = this.tier !== DAILY_TIER ? { tier: this.tier } : {};
    const page = this.mode === "top"
      ? await this.conn.request({ type: "leaderboard.top", variant: v, offset: this.offset, limit: PAGE, ...tier })
      : await this.conn.request({ type: "leaderboard.around", variant: v, k: 5, ...tier });
    const rank = await this.conn.request({ type: "leaderboard.rank", variant: v, ...tier });
    const pts = scoring(v);
    const mine = rank.entry
      ? `Your rank: #${rank.entry.rank} of ${rank.total}`
      : "You have no result on this board today.";
    const board = this.tier === DAILY_TIER ? "daily" : this.tier;
    const table = el("table.ranking", { "aria-label": `${title(v)} ${board} leaderboard` },
      el("thead", {}, el("tr", {}, ["#", "Player", "Result", pts ? "Score" : "Cleared", "Time", "Moves", "Hints"].map((h) => el("th", {}, h)))),
      el("tbody", {}, page.entries.map((e) => el(`tr${e.me ? ".me" : ""}`, {},
        el("td", {}, String(e.rank)), el("td", {}, playerLink(e.name)), el("td", {}, e.won ? "won" : "—"),
        el("td", {}, String(pts ? e.score : e.cleared)), el("td", {}, clock(e.time_ms)),
        el("td", {}, String(e.moves)), el("td", {}, String(e.hints || 0))))));
    return [
      el("p.summary", { "data-board-tier": this.tier }, `${title(v)} · ${page.date} · ${tierName(this.tier)}`, page.par != null ? ` · par ${page.par}${pts ? " points" : " moves"}` : ""),
      el("p.myrank", { "data-myrank": "" }, mine),
      table, this.paging(page.total, page.entries.length),
    ];
  }

  async races() {
    const v = this.variant, board = this.kind;
    const page = this.mode === "top"
      ? await this.conn.request({ type: "race.top", variant: v, board, offset: this.offset, limit: PAGE })
      : await this.conn.request({ type: "race.around", variant: v, board, k: 5 });
    const rank = await this.conn.request({ type: "race.rank", variant: v, board });
    const mine = rank.entry ? `Your rank: #${rank.entry.rank} of ${rank.total}` : "You are not on this board yet.";
    const table = el("table.ranking", { "aria-label": `${title(v)} race ${board} board` },
      el("thead", {}, el("tr", {}, ["#", "Player", board === "wins" ? "Wins today" : "Rating", "Won", "Lost", "Played"].map((h) => el("th", {}, h)))),
      el("tbody", {}, page.entries.map((e) => el(`tr${e.me ? ".me" : ""}`, {},
        el("td", {}, String(e.rank)), el("td", {}, playerLink(e.name)), el("td", {}, String(e.rating)),
        el("td", {}, String(e.wins)), el("td", {}, String(e.losses)), el("td", {}, String(e.played))))));
    return [el("p.summary", {}, `${title(v)} · races`), el("p.myrank", { "data-myrank": "" }, mine),
      table, this.paging(page.total, page.entries.length)];
  }
}
