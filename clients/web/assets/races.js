// Live races (`#/races`): every race in countdown or running, refreshed every few seconds,
// each with its racers' progress and a link to watch it; below, the latest finished races
// (the public API's `/api/v1/races/finished`), each a link to its result.

import { describe } from "./net.js";
import { day, playerLink, raceHref, watchHref } from "./links.js";
import { clock, el, scoring, title } from "./ui.js";

const REFRESH_MS = 5000;
const FINISHED_SHOWN = 10;

export class RacesScreen {
  constructor(app) {
    this.app = app;
    this.conn = app.conn;
    this.variant = "";
    this.list = el("div.panel", { "aria-live": "polite" }, el("p.muted", {}, "Loading…"));
    this.finished = el("div.panel", {}, el("p.muted", {}, "Loading…"));
    const pick = el("select", { id: "races-variant", onchange: (e) => { this.variant = e.target.value; this.load(); this.loadFinished(); } },
      el("option", { value: "" }, "All games"),
      this.conn.variants.map((v) => el("option", { value: v }, title(v))));
    this.node = el("section.races", { "aria-label": "Live races" },
      el("h1", {}, "Live races"),
      el("p.muted", {}, "Races being played now. Spectators see each board 3 s late, and no card a racer has not seen yet."),
      el("div.controls", {}, el("label", { for: "races-variant" }, "Game "), pick,
        el("button", { type: "button", "data-action": "refresh", onclick: () => this.load() }, "Refresh")),
      this.list,
      el("h2.onfelt", {}, "Finished races"),
      this.finished);
    this.loadFinished();
    this.timer = setInterval(() => this.load().catch(() => {}), REFRESH_MS);
  }

  destroy() {
    clearInterval(this.timer);
  }

  /** The latest finished races of the variant picked (of every variant: the newest of all). */
  async loadFinished() {
    const variants = this.variant ? [this.variant] : this.conn.variants;
    const lists = await Promise.all(variants.map(async (v) => {
      try {
        const res = await fetch(`/api/v1/races/finished?variant=${encodeURIComponent(v)}&limit=${FINISHED_SHOWN}`);
        return res.ok ? (await res.json()).races : [];
      } catch (e) {
        return [];
      }
    }));
    const races = lists.flat().sort((a, b) => b.finished_at - a.finished_at).slice(0, FINISHED_SHOWN);
    if (!races.length) {
      this.finished.replaceChildren(el("p.muted", {}, "No finished race yet."));
      return;
    }
    this.finished.replaceChildren(el("ul.racelist", { "data-finished": "" }, races.map(({ race: r, finished_at: at }) => {
      const placed = [...r.racers].sort((a, b) => (a.place || 99) - (b.place || 99));
      return el("li", { "data-race-id": r.race_id },
        el("a", { href: raceHref(r.race_id) }, `${title(r.variant)} · ${day(at)}`), " · ",
        placed.flatMap((x, i) => [i ? ", " : "", x.place ? `${x.place}. ` : "", playerLink(x.name)]));
    })));
  }

  async load() {
    let reply;
    try {
      reply = await this.conn.request({ type: "race.list", limit: 50, ...(this.variant ? { variant: this.variant } : {}) });
    } catch (e) {
      this.list.replaceChildren(el("p.error", {}, describe(e)));
      return;
    }
    const now = this.conn.serverNow();
    if (!reply.races.length) {
      this.list.replaceChildren(el("p.muted", { "data-empty": "" }, "No race is being played right now. Start one from the Race page."));
      return;
    }
    this.list.replaceChildren(el("ul.livelist", {}, reply.races.map((r) => el("li.liverace", { "data-race-id": r.race_id },
      el("h2", {}, title(r.variant), " ", el("small.muted", {}, r.status === "countdown" ? "starting" : `${clock(r.ends_at - now)} left`)),
      el("p", {}, r.racers.flatMap((x, i) => [i ? ", " : "", playerLink(x.name), ` (${scoring(r.variant) ? x.score : x.cleared})`])),
      el("p.muted", {}, `${r.spectators} watching`),
      el("a.button.primary", { href: watchHref(r.race_id) }, "Watch")))));
  }
}
