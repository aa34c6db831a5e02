// Races: the queue, private rooms by code, the countdown, the game beside the opponents' live
// progress, and the result with rating changes. Race pushes never carry a card.

import { GameScreen } from "./game.js";
import { playerLink } from "./links.js";
import { describe } from "./net.js";
import { clock, el, scoring, signed, title, toast, variantInfo } from "./ui.js";

const RACE_KEY = "solitaire.race";

export class RaceScreen {
  constructor(app) {
    this.app = app;
    this.conn = app.conn;
    this.race = null;
    this.queued = null;
    this.game = null;
    this.left = new Set(); // races whose own game was over when this player moved on
    this.variant = app.conn.variants[0];
    this.node = el("section.race", { "aria-label": "Race" });
    this.panel = el("div.racepanel", { "aria-label": "Racers" });
    this.timer = setInterval(() => this.tick(), 200);
  }

  /** Pick up the race this browser was in (after a reload or a reconnect), or race `id`. */
  async resume(id = null) {
    id = id || (this.race && this.race.race_id) || localStorage.getItem(RACE_KEY);
    if (!id) return this.render();
    try {
      const r = await this.conn.request({ type: "race.get", race_id: id });
      await this.update(r.race);
    } catch (e) {
      localStorage.removeItem(RACE_KEY);
      this.race = null;
      this.render();
    }
  }

  async update(race) {
    this.left.delete(race.race_id); // opened again (its link): its news is this screen's again
    const first = !this.race || this.race.race_id !== race.race_id;
    // Switching away from a race still running whose own game is over: it is left behind.
    if (first && this.race && this.race.status !== "finished" && !this.playing()) this.left.add(this.race.race_id);
    if (!first && this.race.status === "open" && race.status === "finished" && !race.game_id) {
      toast("The room was closed."); // its creator left, or nobody took a rematch
      return this.leaveRace();
    }
    this.race = race;
    localStorage.setItem(RACE_KEY, race.race_id);
    this.app.nameRace(race.race_id); // the address names the race (a link to share)
    this.queued = null;
    const mine = race.game_id;
    if (race.status === "running" && mine && (!this.game || this.game.gameId !== mine)) {
      await this.startGame(mine);
    } else if (race.status === "finished" && mine && first && !this.game) {
      await this.startGame(mine);
    } else if (race.status === "finished" && this.game && !this.game.finished) {
      await this.game.load().catch(() => {}); // the race's end ended this game too
    }
    this.render();
  }

  async startGame(gameId) {
    if (this.game && this.game.gameId === gameId) return;
    if (this.game) this.game.destroy();
    this.game = new GameScreen(this.app, gameId, { race: true, onResult: () => this.render() });
    try {
      await this.game.load();
    } catch (e) {
      toast(describe(e), "error");
    }
  }

  /** A push from the server (race.update, race.event, race.started). */
  async push(msg) {
    const id = msg.race_id || (msg.race && msg.race.race_id);
    // A race left behind (the player's game in it over) goes on without them: its news is
    // not this screen's, nor is another race's while this one is still being played.
    if (this.left.has(id)) return;
    if (msg.type === "race.update" && this.race && id !== this.race.race_id && this.playing()) return;
    if (msg.type === "race.update") return this.update(msg.race);
    if (msg.type === "race.started") {
      if (!this.race || this.race.race_id !== msg.race_id) return this.resume(msg.race_id);
      this.race = { ...this.race, status: "running", game_id: msg.game_id };
      await this.startGame(msg.game_id);
      this.render();
      return;
    }
    if (msg.type === "race.spectators" && this.race && msg.race_id === this.race.race_id) {
      this.spectators = msg.count;
      this.renderPanel();
      return;
    }
    if (msg.type === "race.event" && this.race && msg.race_id === this.race.race_id) {
      const ev = msg.event;
      if (ev.kind === "progress") {
        this.race.racers = this.race.racers.map((r) => r.player_id === ev.player_id
          ? { ...r, cleared: ev.cleared, score: ev.score, moves: ev.moves, finished: ev.finished, stuck: ev.stuck, won: ev.won, resigned: ev.resigned }
          : r);
        this.renderPanel();
      } else {
        await this.resume(); // joined, left, countdown, forfeit, finished: the whole race again
      }
    }
  }

  /** This player is still playing the race shown: waiting in its room, counting down, or
   * racing with their game not over (as the server says it). */
  playing() {
    const r = this.race;
    if (!r || r.status === "finished") return false;
    const me = r.racers.find((x) => x.player_id === this.conn.player.id);
    if (!me) return false; // a race this player is not in (opened by its link)
    return !(me.finished || me.stuck || me.forfeited) && !(this.game && this.game.finished);
  }

  leaveRace() {
    if (this.race && this.race.status !== "finished" && !this.playing()) this.left.add(this.race.race_id);
    localStorage.removeItem(RACE_KEY);
    this.app.nameRace(null);
    if (this.game) this.game.destroy();
    this.race = null;
    this.game = null;
    this.render();
  }

  /** A race request; errors in words that fit what was asked. */
  async act(req) {
    try {
      return await this.conn.request(req);
    } catch (e) {
      const words = {
        "race.join/not_found": "No open room has that code. Check it with the room's creator.",
        "race.join/conflict": "You are already queued or in another race.",
        "race.queue/conflict": "You are already queued or in another race.",
        "race.create/conflict": "You are already queued or in another race.",
        "race.start/conflict": "A race needs at least two racers, and only the room's creator starts it.",
        "race.rematch/conflict": "The rematch of that race is over or under way already.",
      }[`${req.type}/${e.code}`];
      toast(words || describe(e), "error");
      return null;
    }
  }

  async queue() {
    const r = await this.act({ type: "race.queue", variant: this.variant, size: 2 });
    if (r) { this.queued = r; this.render(); }
  }

  async create() {
    const r = await this.act({ type: "race.create", variant: this.variant, size: 8 });
    if (r) await this.update(r.race);
  }

  async join(code) {
    const r = await this.act({ type: "race.join", code: code.trim().toUpperCase() });
    if (r) await this.update(r.race);
  }

  async leave() {
    const r = await this.act({ type: "race.leave" });
    if (r) { this.queued = null; this.leaveRace(); }
  }

  /** Race the same racers again (protocol 7): a private room offered to them. */
  async rematch() {
    const r = await this.act({ type: "race.rematch", race_id: this.race.race_id });
    if (!r) return;
    if (this.game) this.game.destroy();
    this.game = null;
    await this.update(r.race);
  }

  async start() {
    const r = await this.act({ type: "race.start", race_id: this.race.race_id });
    if (r) await this.update(r.race);
  }

  tick() {
    const node = this.node.querySelector("[data-countdown]");
    if (node && this.race && this.race.start_at) {
      const left = this.race.start_at - this.conn.serverNow();
      node.textContent = left > 0 ? String(Math.ceil(left / 1000)) : "Go!";
    }
    const limit = this.node.querySelector("[data-time-left]");
    if (limit && this.race && this.race.ends_at) {
      limit.textContent = `${clock(this.race.ends_at - this.conn.serverNow())} left`;
    }
  }

  render() {
    const r = this.race;
    if (!r && !this.queued) return this.node.replaceChildren(this.lobby());
    if (!r) {
      return this.node.replaceChildren(el("h1", {}, "Race"),
        el("div.panel", { "data-race": "queued" },
          el("p", {}, `Looking for an opponent on ${title(this.queued.variant)}… (${this.queued.waiting} waiting)`),
          el("button", { onclick: () => this.leave() }, "Cancel")));
    }
    if (r.status === "open") return this.node.replaceChildren(this.room());
    if (r.status === "countdown") {
      return this.node.replaceChildren(el("h1", {}, `Race · ${title(r.variant)}`),
        el("div.panel.countdown", { "data-race": "countdown" },
          el("p", {}, "The race starts in"), el("p.big", { "data-countdown": "" }, "…"),
          this.standings()));
    }
    // running or finished: the game beside the racers
    this.panel.dataset.race = r.status;
    this.renderPanel();
    if (this.game && this.game.view) {
      if (!this.node.contains(this.game.node)) this.node.replaceChildren(this.game.node);
      this.game.setSide(this.panel);
    } else {
      this.node.replaceChildren(el("h1", {}, `Race · ${title(r.variant)}`), this.panel);
    }
    this.tick();
  }

  renderPanel() {
    if (!this.race) return;
    const r = this.race;
    const done = r.status === "finished";
    const me = r.racers.find((x) => x.player_id === this.conn.player.id);
    const head = done
      ? el("h2", { "data-race-result": "" }, me && me.place === 1 ? "You won the race!" : `Race over${me && me.place ? ` · you placed ${me.place} of ${r.racers.length}` : ""}`)
      : el("h2", {}, "Race ", el("span.muted", { "data-time-left": "" }, ""));
    const watching = this.spectators
      ? el("p.muted", { "data-spectators": "" }, `${this.spectators} watching`) : null;
    const over = !done && this.game && this.game.finished;
    const waiting = over ? el("p.muted", {}, "Your game is over: waiting for the others… or race again now (your result stands).") : null;
    const newRace = done || over ? el("button.primary", { onclick: () => this.leaveRace(), "data-action": "new-race" }, "New race") : null;
    const rematch = done ? el("button", { onclick: () => this.rematch(), "data-action": "rematch" }, "Rematch") : null;
    this.panel.replaceChildren(...[head, watching, waiting, this.standings(), newRace, rematch].filter(Boolean));
  }

  standings() {
    const r = this.race;
    const done = r.status === "finished";
    const pts = scoring(r.variant);
    const racers = [...r.racers];
    if (done) racers.sort((a, b) => (a.place || 99) - (b.place || 99));
    // A racer whose game ended without a win stopped somewhere: say where, not "finished".
    const info = variantInfo(r.variant);
    const reached = (x) => pts ? `${x.score} pts` : `${x.cleared}/${info.clear}`;
    // `stuck` is any game over without a win, a resignation too; the race says who resigned
    // (`resigned`, protocol 10), and this player's own game result says it as well.
    const mine = this.game && this.game.result;
    const own = (x) => x.player_id === this.conn.player.id;
    const over = (x) => own(x) && mine && !mine.over ? `stopped at ${reached(x)}` : `stuck at ${reached(x)}`;
    const resigned = (x) => x.resigned || (own(x) && mine && mine.resigned);
    const state = (x) => x.forfeited ? "forfeited" : x.won ? "won" : resigned(x) ? `resigned at ${reached(x)}` : x.stuck ? over(x)
      : x.finished ? `stopped at ${reached(x)}` : !x.connected ? "disconnected" : done ? "" : r.status === "countdown" ? "ready" : "playing";
    return el("table.standings", { "aria-label": "Racers" },
      el("thead", {}, el("tr", {}, (done ? ["#"] : []).concat(["Racer", pts ? "Score" : "Cleared", "Moves"], done ? ["Rating"] : []).map((h) => el("th", {}, h)))),
      el("tbody", {}, racers.map((x) => el(`tr${x.player_id === this.conn.player.id ? ".me" : ""}`, { "data-racer": x.name },
        done ? el("td", {}, x.place ? String(x.place) : "—") : null,
        el("td", {}, playerLink(x.name), " ", el("small.muted", { "data-state": "" }, state(x))),
        el("td", { "data-progress": "" }, String(pts ? x.score : x.cleared)),
        el("td", {}, String(x.moves)),
        done ? el("td", { "data-rating": "" }, x.rating != null ? `${x.rating} (${signed(x.rating_change || 0)})` : "unrated") : null))));
  }

  lobby() {
    const variants = el("select", { "aria-label": "Variant", onchange: (e) => { this.variant = e.target.value; } },
      this.conn.variants.map((v) => el("option", { value: v, selected: v === this.variant }, title(v))));
    const code = el("input", { "aria-label": "Room code", placeholder: "CODE", maxlength: 8, autocapitalize: "characters", size: 8 });
    return el("div", {},
      el("h1", {}, "Race"),
      el("p", {}, "Race others on the same fresh deal: the first to win takes the race, the others rank by progress."),
      el("div.panel", {},
        el("label", {}, "Game ", variants),
        el("div.actions", {},
          el("button.primary", { onclick: () => this.queue(), "data-action": "queue" }, "Find an opponent"),
          el("button", { onclick: () => this.create(), "data-action": "create" }, "Create a private room"))),
      el("form.panel", { onsubmit: (e) => { e.preventDefault(); this.join(code.value); } },
        el("label", {}, "Join a room by code ", code), el("button", { type: "submit", "data-action": "join" }, "Join")));
  }

  room() {
    const r = this.race;
    const creator = r.creator === this.conn.player.id;
    return el("div", {},
      el("h1", {}, `Private race · ${title(r.variant)}`),
      el("div.panel", { "data-race": "open" },
        el("p", {}, "Room code: ", el("strong.code", { "data-code": "" }, r.code || "")),
        el("p.muted", {}, creator ? "Share the code; start when everyone is in." : "Waiting for the room's creator to start."),
        el("ul.racers", {}, r.racers.map((x) => el("li", {}, playerLink(x.name)))),
        el("div.actions", {},
          creator && el("button.primary", { onclick: () => this.start(), disabled: r.racers.length < 2, "data-action": "start" }, "Start"),
          el("button", { onclick: () => this.leave() }, "Leave"))));
  }
}
