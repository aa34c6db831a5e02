// The month calendar (#/calendar, #/calendar/YYYY-MM): every day's tiers of every variant and
// this player's state in each, the month's crowns and badge (protocol 8, `calendar.get`).
// The states come from the server as they are; a tier that can be played links to
// `daily.start` with its tier (and its date for a past day: a catch-up game).

import { describe } from "./net.js";
import { el, title } from "./ui.js";

const TIERS = ["easy", "medium", "hard", "expert"];
const MARK = { won: "✓", lost: "✗", playing: "▶", not_played: "·", absent: "–", pending: "…", upcoming: "", closed: "⊘" };
const WORD = {
  won: "won", lost: "lost", playing: "playing", not_played: "not played",
  absent: "no deal that day", pending: "being prepared (its deal is not certified yet: try again later)",
  upcoming: "to come", closed: "not available: before you joined",
};

function shiftMonth(month, by) {
  const [y, m] = month.split("-").map(Number);
  const d = new Date(Date.UTC(y, m - 1 + by, 1));
  return d.toISOString().slice(0, 7);
}

export class CalendarScreen {
  constructor(app, month) {
    this.app = app;
    this.month = month || null;
    this.node = el("section.calendar", {}, el("p.muted", {}, "Loading the calendar…"));
  }

  async load() {
    const cal = await this.app.conn.request({ type: "calendar.get", ...(this.month ? { month: this.month } : {}) });
    this.render(cal);
  }

  /** What a cell shows: the server's state, except that a tier nobody can open for this
   * player (a day of this month before they joined: `catchup_open` false) is "closed",
   * whatever deal state the server has for it. */
  shown(day, cell) {
    const past = day.date < this.cal.today && this.cal.month === this.cal.today.slice(0, 7);
    if (past && !day.catchup_open && (cell.state === "not_played" || cell.state === "pending")) return "closed";
    return cell.state;
  }

  /** Whether a tier of `day` can be started or resumed now (as the server's states say). */
  playable(day, cell) {
    if (cell.state === "playing") return true;
    if (cell.state !== "not_played") return false;
    return day.date === this.cal.today || day.catchup_open;
  }

  /** Words beside a day's number: catch-up open, not open (before joining), or its tiers
   * still being prepared. */
  dayNote(day) {
    const states = day.variants.flatMap((v) => v.tiers.map((c) => this.shown(day, c)));
    if (states.length && states.every((s) => s === "closed" || s === "absent")) return el("small.muted", { "data-day-note": "" }, " before you joined");
    const open = day.date === this.cal.today || day.catchup_open;
    if (open && states.includes("pending")) return el("small.muted", { "data-day-note": "" }, ` ${day.catchup_open ? "catch-up " : ""}being prepared`);
    return day.catchup_open ? el("small.muted", {}, " catch-up") : "";
  }

  async play(variant, tier, date) {
    try {
      const req = { type: "daily.start", variant, tier };
      if (date !== this.cal.today) req.date = date;
      const g = await this.app.conn.request(req);
      location.hash = `#/game/${encodeURIComponent(g.game_id)}`;
    } catch (e) {
      this.error.textContent = describe(e);
    }
  }

  render(cal) {
    this.cal = cal;
    const variants = cal.days.length ? cal.days[0].variants.map((v) => v.variant) : [];
    const badge = cal.badge ? ` · ${cal.badge} badge` : "";
    const next = ["bronze", "silver", "gold", "diamond"].map((b, i) => [b, cal.thresholds[i]]).find(([, n]) => cal.crowns < n);
    this.error = el("p.error", { role: "alert" });
    const head = el("tr", {}, el("th", { scope: "col" }, "Day"),
      ...variants.map((v) => el("th", { scope: "col" }, title(v))));
    const rows = cal.days.map((day) => el("tr", { "data-date": day.date, class: day.date === cal.today ? "today" : "" },
      el("th", { scope: "row" }, day.date.slice(8), this.dayNote(day)),
      ...day.variants.map((v) => el("td", {}, el("div.tiers", {}, ...v.tiers.map((cell) => {
        const shown = this.shown(day, cell);
        const label = `${title(v.variant)} ${cell.tier}, ${day.date}: ${WORD[shown] || shown}${cell.catchup ? " (catch-up)" : ""}`;
        const attrs = {
          class: `tier ${shown}${cell.catchup ? " catchup" : ""}`, title: label, "aria-label": label,
          "data-variant": v.variant, "data-tier": cell.tier, "data-state": cell.state, "data-shown": shown,
        };
        if (!this.playable(day, cell)) return el("span", { ...attrs, role: "img" }, MARK[shown] ?? "?");
        return el("button", { ...attrs, type: "button", onclick: () => this.play(v.variant, cell.tier, day.date) }, MARK[shown] ?? "?");
      }))))));
    this.node.replaceChildren(
      el("h1", {}, "Calendar ", el("small", {}, cal.month)),
      el("nav.tabs", { "aria-label": "Months" },
        el("a", { href: `#/calendar/${shiftMonth(cal.month, -1)}` }, "← Previous month"),
        el("a", { href: `#/calendar/${shiftMonth(cal.month, 1)}` }, "Next month →")),
      el("p.crowns", { "data-crowns": String(cal.crowns) }, `${cal.crowns} crowns this month${badge}`,
        next ? el("small.muted", {}, ` · ${next[1] - cal.crowns} more for ${next[0]}`) : ""),
      el("p.muted", { "data-legend": "" }, `Each cell: ${TIERS.join(", ")}. ✓ won, ✗ lost, ▶ playing, · not played, – no deal that day, ` +
        "… being prepared (the deal is not certified yet: try again later), ⊘ not available (a day before you joined: catch-up games open on the day you joined). " +
        "Underlined: a catch-up game, played after its day on a deal of the same tier (not the day's own) and on no leaderboard. Crowns: easy 1, medium 2, hard 3, expert 4, " +
        `for a tier won without a hint (a tier won with hints is ✓ but earns no crowns); badges at ${cal.thresholds.join(", ")} crowns.`),
      this.error,
      el("div.scroll.panel", { tabindex: "0" }, el("table.calendar", {}, el("thead", {}, head), el("tbody", {}, ...rows))));
  }
}
