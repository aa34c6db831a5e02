// The page: the connection, the name form, the screens by URL (#/daily, #/game/ID, #/race,
// #/boards/VARIANT, #/rules/VARIANT, #/calendar/MONTH) and the connection status line.

import { BoardsScreen } from "./boards.js";
import { CalendarScreen } from "./calendar.js";
import { GameScreen, outcome } from "./game.js";
import { Connection, describe, HELD_FOR_REVIEW, storedToken } from "./net.js";
import { RaceScreen } from "./race.js";
import { clock, dialog, el, points, scoring, title, variantInfo } from "./ui.js";

class App {
  constructor() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    this.conn = new Connection(`${proto}//${location.host}/ws`);
    this.main = document.getElementById("main");
    this.statusNode = document.getElementById("status");
    this.screen = null;
    this.race = null;
    this.rules = null;
    this.conn.addEventListener("status", (e) => this.status(e.detail));
    this.conn.addEventListener("welcome", (e) => this.welcome(e));
    this.conn.addEventListener("push", (e) => this.push(e.detail));
    window.addEventListener("hashchange", () => this.route());
  }

  start() {
    this.conn.start();
  }

  status({ state, message }) {
    document.body.dataset.conn = state;
    if (state === "need-name") return this.askName(message);
    this.statusNode.hidden = state === "online" || !message;
    this.statusNode.className = `status ${state}`;
    this.statusNode.textContent = message;
  }

  askName(message) {
    this.statusNode.hidden = true;
    const input = el("input", { name: "name", "aria-label": "Your name", autocomplete: "nickname", required: true, minlength: 3, maxlength: 20, pattern: "[A-Za-z0-9_\\-]{3,20}" });
    const error = el("p.error", { role: "alert" }, message || "");
    const form = el("form.panel.welcome", {
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          await this.conn.register(input.value.trim());
        } catch (err) {
          error.textContent = describe(err);
        }
      },
    },
      el("h1", {}, "Welcome"),
      el("p", {}, "Choose the name others will see on the leaderboards (3 to 20 letters, digits, _ or -). This browser remembers you."),
      el("label", {}, "Name ", input), el("button.primary", { type: "submit" }, "Play"), error);
    this.show(form);
    input.focus();
  }

  welcome(e) {
    document.getElementById("who").textContent = this.conn.player.name;
    const first = !this.race;
    if (first) this.race = new RaceScreen(this);
    const w = e && e.detail;
    if (w && w.race && !localStorage.getItem("solitaire.race")) localStorage.setItem("solitaire.race", w.race.race_id);
    this.race.resume(); // re-attaches this connection to the race's pushes
    if (first) {
      this.dropOldMoveLists();
      return this.route();
    }
    // A reconnect: fetch what is on screen again (the game may have moved on meanwhile), or
    // show the screen the address asked for while the connection was down.
    if (location.hash !== this.routed) return this.route();
    const game = this.screen === this.race ? this.race.game : this.screen;
    if (game && game.load) game.load().catch(() => {});
  }

  /** Move lists kept by older pages go: the server sends each game's moves (`game.log`). */
  dropOldMoveLists() {
    for (const key of Object.keys(localStorage)) {
      if (key.startsWith("solitaire.moves.")) localStorage.removeItem(key);
    }
  }

  push(msg) {
    if (msg.type === "game.finished") {
      for (const g of [this.screen, this.race && this.race.game]) if (g && g.finishedPush) g.finishedPush(msg);
      return;
    }
    if (!msg.type.startsWith("race.") || !this.race) return;
    this.race.push(msg);
    // A race that starts (matched from the queue, started by a room's creator) is shown at once.
    const starting = msg.type === "race.started" || (msg.type === "race.update" && msg.race.status === "countdown");
    if (starting && !location.hash.startsWith("#/race")) location.hash = "#/race";
  }

  show(node, screen = null) {
    if (this.screen && this.screen.destroy && this.screen !== screen && this.screen !== this.race && !(this.race && this.race.game === this.screen)) {
      this.screen.destroy();
    }
    this.screen = screen;
    this.main.replaceChildren(node);
  }

  async route() {
    if (!this.conn.online) return;
    this.routed = location.hash;
    const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
    const [page, arg] = parts;
    for (const a of document.querySelectorAll("[data-nav]")) {
      a.setAttribute("aria-current", a.dataset.nav === (page || "daily") || (page === "game" && a.dataset.nav === "daily") ? "page" : "false");
    }
    try {
      if (page === "game" && arg) return await this.openGame(arg);
      if (page === "play" && arg) return await this.startDaily(arg);
      if (page === "race") return this.openRace();
      if (page === "boards") return await this.openBoards(arg);
      if (page === "rules") return await this.openRules(arg);
      if (page === "calendar") return await this.openCalendar(arg);
      return await this.openDaily();
    } catch (e) {
      const text = e.code === "not_found" ? "There is no such game (or it is not yours)." : describe(e);
      this.show(el("div.panel", {}, el("p.error", {}, text), el("a", { href: "#/daily" }, "Back to the daily deals")));
    }
  }

  async openGame(gameId) {
    const g = new GameScreen(this, gameId);
    await g.load();
    this.show(g.node, g);
  }

  async startDaily(variant) {
    const g = await this.conn.request({ type: "daily.start", variant });
    if (g.date !== this.conn.dailyDate) [this.conn.dailyDate, this.conn.daily] = [g.date, new Map()];
    this.conn.daily.set(variant, g.game_id);
    location.replace(`#/game/${encodeURIComponent(g.game_id)}`);
  }

  openRace() {
    this.show(this.race.node, this.race);
    this.race.render();
  }

  async openBoards(variant) {
    const b = new BoardsScreen(this, variant);
    this.show(b.node, b);
    await b.load();
  }

  async openCalendar(month) {
    const c = new CalendarScreen(this, month);
    this.show(c.node, c);
    await c.load();
  }

  async rulesDoc() {
    if (!this.rules) {
      const r = await fetch("/rules.json");
      if (!r.ok) throw new Error("The rules could not be loaded.");
      this.rules = await r.json();
    }
    return this.rules;
  }

  async openRules(variant) {
    const rules = await this.rulesDoc();
    const v = variant || this.conn.variants[0];
    const pick = el("nav.tabs", { "aria-label": "Variants" }, this.conn.variants.map((x) =>
      el("a", { href: `#/rules/${x}`, "aria-current": x === v ? "page" : "false" }, title(x))));
    const node = el("section.rules", {}, el("h1", {}, "Rules"), pick,
      el("pre.rulestext", { "data-rules": v }, rules[v] ? rules[v].text : "No rules for this variant."));
    this.show(node, { load: async () => {} });
  }

  /** The rules of a variant in a dialog (from a game). */
  async showRules(variant) {
    const rules = await this.rulesDoc();
    await dialog(rules[variant].title, el("pre.rulestext", {}, rules[variant].text));
  }

  /** The day's deals with this player's status on each. */
  async openDaily() {
    await this.rulesDoc().catch(() => null);
    const conn = this.conn, date = conn.today();
    // Today's games are the ones the server named (`welcome.daily`, `daily.start`); ids are
    // opaque here. After midnight (UTC) they are yesterday's: a reconnect brings today's.
    const ids = date === conn.dailyDate ? conn.daily : new Map();
    const list = el("ul.deals");
    const node = el("section.daily", {},
      el("h1", {}, "Today's deals ", el("small", {}, date)),
      el("p.muted", {}, "One ranked attempt per game each day; everyone plays the same deal. New deals at 00:00 UTC."),
      list);
    this.show(node, { load: () => this.openDaily() });
    const rows = await Promise.all(conn.variants.map(async (v) => {
      const gameId = ids.get(v);
      if (!gameId) return [v, null];
      try {
        return [v, await conn.request({ type: "game.get", game_id: gameId })];
      } catch (e) {
        if (e.code === "not_found") return [v, null];
        return [v, e];
      }
    }));
    for (const [v, g] of rows) {
      let status, action, href;
      if (g === null) {
        status = "Not started"; action = "Play"; href = `#/play/${v}`;
      } else if (g instanceof Error) {
        status = describe(g); action = "Play"; href = `#/play/${v}`;
      } else if (g.finished) {
        const r = g.result;
        const what = r.won ? "Won" : outcome(v, r).replace("Game over", "Over");
        const pts = scoring(v) ? points(r.score) : `${r.cleared} cleared`;
        status = `${what} · ${pts} · ${clock(r.time_ms)}${r.rank ? ` · rank #${r.rank}` : ""}` +
          (r.status === "flagged" ? ` · ${HELD_FOR_REVIEW}` : "");
        action = "See result"; href = `#/game/${encodeURIComponent(g.game_id)}`;
      } else {
        status = `Playing · ${g.view.moves} moves · ${clock(g.elapsed_ms)}`;
        action = "Resume"; href = `#/game/${encodeURIComponent(g.game_id)}`;
      }
      const state = g === null ? "new" : g instanceof Error ? "error" : g.finished ? "done" : "playing";
      list.append(el("li.deal", { "data-variant": v, "data-state": state },
        el("div", {}, el("h2", {}, title(v)), el("p.muted.goal", {}, variantInfo(v).goal), el("p.muted", {}, status)),
        el("div.actions", {},
          el("a.button" + (state === "done" ? "" : ".primary"), { href }, action),
          el("a.button", { href: `#/boards/${v}` }, "Leaderboard"),
          el("a.button", { href: `#/rules/${v}` }, "Rules"))));
    }
  }
}

const app = new App();
window.solitaire = app; // for the browser tests and the curious
if (!storedToken()) document.getElementById("loading").textContent = "Connecting…";
app.start();
