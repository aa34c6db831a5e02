// A player's profile (`#/player/NAME`): streaks, bests and percentile per variant, race
// ratings, the daily results of the last 30 days (each finished day opens its replay) and
// their latest races. All of it is `profile.get` and the public API's races of a player.

import { describe } from "./net.js";
import { day, raceHref, replayHref } from "./links.js";
import { clock, el, mayFinish, points, scoring, signed, title } from "./ui.js";

/** A day result in words: "Won", "Finished" (a game one may end at will), "Resigned", "Over". */
export function verdict(r) {
  if (r.won) return "Won";
  if (r.resigned) return mayFinish(r.variant) ? "Finished" : "Resigned";
  return "Over";
}

/** A day result's points: a score, or cards cleared. */
export function amount(r) {
  return scoring(r.variant) ? points(r.score) : `${r.cleared} cleared`;
}

/** A day result's place: "#3 of 41", or why there is none yet. */
export function place(r) {
  if (r.rank) return `#${r.rank} of ${r.total}`;
  return r.replayable ? "—" : "day not over";
}

/** A link to a finished day's replay, or when it will be one. */
export function replayCell(r) {
  return r.replayable
    ? el("a.button", { href: replayHref(r.game_id), "data-replay": r.game_id }, "Replay")
    : el("span.muted", {}, "after the day");
}

export class ProfileScreen {
  constructor(app, name) {
    this.app = app;
    this.conn = app.conn;
    this.name = name;
    this.node = el("section.profile", { "aria-label": "Profile" }, el("h1", {}, name), el("p.muted", {}, "Loading…"));
  }

  async load() {
    const p = await this.conn.request({ type: "profile.get", name: this.name });
    const races = await this.latestRaces(p);
    this.node.replaceChildren(
      el("h1", {}, p.name, p.me ? el("small", {}, " (you)") : null),
      el("p.muted", { "data-joined": "" }, `Playing since ${day(p.joined)}`,
        p.me ? el("span", {}, " · ", el("a", { href: "#/history" }, "Your history"))
          : null),
      this.daily(p), this.months(p), this.races(p), this.recent(p), this.raceList(races));
  }

  /** Crowns and badge of each month with crowns (protocol 8 `profile.months`, newest first). */
  months(p) {
    const months = p.months || [];
    const badge = (b) => (b ? b[0].toUpperCase() + b.slice(1) : "—");
    return el("section.panel", { "aria-labelledby": "p-months" },
      el("h2", { id: "p-months" }, "Crowns and badges"),
      months.length ? el("div.scroll", { tabindex: "0" }, el("table.ranking", { "data-months": "" },
        el("thead", {}, el("tr", {}, ["Month", "Crowns", "Badge"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, months.map((m) => el("tr", { "data-month": m.month },
          el("th", { scope: "row" }, m.month), el("td", {}, String(m.crowns)),
          el("td", { "data-badge": m.badge || "" }, badge(m.badge)))))))
        : el("p.muted", {}, "No crowns yet: win a tier of the daily challenge without a hint (see the Calendar)."),
      // Said where crowns are counted: a win with hints is a win, but earns none (protocol 8).
      el("p.muted", { "data-crowns-rule": "" }, "Crowns: easy 1, medium 2, hard 3, expert 4 for a tier won without hints; a tier won with hints earns no crowns."));
  }

  daily(p) {
    const rows = p.daily.map((d) => el("tr", { "data-variant": d.variant },
      el("th", { scope: "row" }, title(d.variant)),
      el("td", {}, `${d.won} / ${d.played}`),
      el("td", { "data-streak": "" }, `${d.streak} (best ${d.longest_streak})`),
      el("td", { "data-won-streak": "" }, `${d.won_streak} (best ${d.longest_won_streak})`),
      el("td", { "data-best": "" }, [d.best_time_ms != null ? clock(d.best_time_ms) : null,
        d.best_score != null && scoring(d.variant) ? points(d.best_score) : null].filter(Boolean).join(" · ") || "—"),
      el("td", {}, d.percentile != null ? `${d.percentile}%` : "—"),
      el("td", {}, d.last_played || "—")));
    return el("section.panel", { "aria-labelledby": "p-daily" },
      el("h2", { id: "p-daily" }, "Daily games"),
      rows.length ? el("div.scroll", { tabindex: "0" }, el("table.ranking", {},
        el("thead", {}, el("tr", {}, ["Game", "Won / played", "Streak", "Winning streak", "Best", "Ahead of", "Last played"]
          .map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, rows)))
        : el("p.muted", {}, "No daily game finished yet."));
  }

  races(p) {
    const rows = p.races.map((r) => el("tr", { "data-variant": r.variant },
      el("th", { scope: "row" }, title(r.variant)),
      el("td", { "data-rating": "" }, r.rating != null ? String(r.rating) : "unrated"),
      el("td", {}, String(r.wins)), el("td", {}, String(r.losses)),
      el("td", {}, String(r.played)), el("td", {}, String(r.forfeits))));
    return el("section.panel", { "aria-labelledby": "p-races" },
      el("h2", { id: "p-races" }, "Races"),
      rows.length ? el("div.scroll", { tabindex: "0" }, el("table.ranking", {},
        el("thead", {}, el("tr", {}, ["Game", "Rating", "Won", "Lost", "Played", "Forfeits"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, rows)))
        : el("p.muted", {}, "No race yet."));
  }

  recent(p) {
    const rows = p.recent.map((r) => el("tr", { "data-date": r.date, "data-variant": r.variant },
      el("td", {}, r.date), el("th", { scope: "row" }, title(r.variant)),
      el("td", {}, verdict(r)), el("td", {}, amount(r)), el("td", {}, clock(r.time_ms)),
      el("td", {}, String(r.moves)), el("td", {}, place(r)), el("td", {}, replayCell(r))));
    return el("section.panel", { "aria-labelledby": "p-recent" },
      el("h2", { id: "p-recent" }, "Last 30 days"),
      rows.length ? el("div.scroll", { tabindex: "0" }, el("table.ranking", { "data-recent": "" },
        el("thead", {}, el("tr", {}, ["Day", "Game", "Result", "Points", "Time", "Moves", "Place", "Replay"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, rows)))
        : el("p.muted", {}, "No daily game in the last 30 days."));
  }

  /** The player's latest finished races of each variant raced (the public API's list). */
  async latestRaces(p) {
    const lists = await Promise.all(p.races.map(async (r) => {
      try {
        const res = await fetch(`/api/v1/players/${encodeURIComponent(p.name)}/races/${r.variant}?limit=5`);
        if (!res.ok) return [];
        return (await res.json()).races.map((x) => ({ ...x, variant: x.variant || r.variant }));
      } catch (e) {
        return [];
      }
    }));
    return lists.flat().sort((a, b) => b.finished_at - a.finished_at).slice(0, 10);
  }

  raceList(races) {
    return el("section.panel", { "aria-labelledby": "p-latest" },
      el("h2", { id: "p-latest" }, "Latest races"),
      races.length ? el("ul.racelist", {}, races.map((r) => el("li", { "data-race-id": r.race_id },
        el("a", { href: raceHref(r.race_id) }, `${title(r.variant)} · ${day(r.finished_at)}`),
        ` · place ${r.place} of ${r.racers}`, r.won ? " · won" : "",
        r.rating_after != null && r.rating_before != null ? ` · rating ${r.rating_after} (${signed(r.rating_after - r.rating_before)})` : "")))
        : el("p.muted", {}, "No finished race yet."));
  }
}

/** The screen for `#/player/NAME`, with a clear message for an unknown name. */
export async function openProfile(app, name) {
  const screen = new ProfileScreen(app, name);
  app.show(screen.node, screen);
  try {
    await screen.load();
  } catch (e) {
    const text = e.code === "not_found" ? `There is no player called ${name}.` : describe(e);
    screen.node.replaceChildren(el("h1", {}, name), el("div.panel", {}, el("p.error", {}, text)));
  }
}

