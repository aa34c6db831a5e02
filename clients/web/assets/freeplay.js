// Free play (protocol 7, docs/protocol.md §14): an unranked random deal of any variant, on no
// leaderboard; the game page is the daily one, marked "Free play — unranked".

import { describe } from "./net.js";
import { el, title, toast, variantInfo } from "./ui.js";

/** The free play page (#/free): pick a variant, get a new random deal. */
export class FreePlayScreen {
  constructor(app) {
    this.app = app;
    this.conn = app.conn;
    this.variant = this.conn.variants[0];
    this.node = el("section.freeplay", { "aria-label": "Free play" });
  }

  async load() {
    const pick = el("select", { "aria-label": "Variant", name: "variant", onchange: (e) => { this.variant = e.target.value; this.render(pick); } },
      this.conn.variants.map((v) => el("option", { value: v, selected: v === this.variant }, title(v))));
    this.render(pick);
  }

  render(pick) {
    this.node.replaceChildren(
      el("h1", {}, "Free play"),
      el("p.muted", {}, "As many games as you like, each a new random deal (never a daily deal). Unranked: no leaderboard, no streak."),
      el("div.panel", {},
        el("label", {}, "Game ", pick),
        el("p.muted.goal", {}, variantInfo(this.variant).goal),
        el("div.actions", {}, el("button.primary", { onclick: () => this.deal(), "data-action": "free" }, "Deal a free game"))));
  }

  async deal() {
    try {
      const g = await this.conn.request({ type: "free.start", variant: this.variant });
      location.hash = `#/game/${encodeURIComponent(g.game_id)}`;
    } catch (e) {
      toast(describe(e), "error");
    }
  }
}

/** The mark above a free game's board. */
export function freeLabel() {
  return el("p.freelabel", { "data-free": "" }, "Free play — unranked");
}
