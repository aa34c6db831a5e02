// Watching a race (`#/watch/RACE_ID`, and `#/race/RACE_ID` for anyone but its racers): every
// racer's board as the server shows spectators (3 s late, and as of the last position whose
// cards every racer still playing has seen), the standings, the time left, how many watch, and a link to share.
// Signed-in pages watch over the WebSocket (`race.watch`); a page opened by someone without a
// player watches anonymously over the public API's stream (`/api/v1/races/ID/events`): the
// same messages, the same delay and masking.

import { Board } from "./board.js";
import { describe } from "./net.js";
import { playerLink, raceHref, shareBox, watchHref } from "./links.js";
import { clock, el, scoring, setVariants, signed, title, variantInfo } from "./ui.js";

const STREAM_TYPES = ["race.watching", "race.spectate", "race.event", "race.update", "race.spectators"];

export class WatchScreen {
  /** `opts.anonymous`: watch over the public stream (no player on this page). */
  constructor(app, raceId, opts = {}) {
    this.app = app;
    this.conn = app.conn;
    this.raceId = raceId;
    this.anonymous = !!opts.anonymous;
    this.race = null;
    this.boards = new Map(); // player_id -> the latest board
    this.views = new Map(); // player_id -> its Board
    this.spectators = 0;
    this.own = false; // a racer of this race (who may not watch it)
    this.offset = 0;
    this.node = el("section.watch", { "aria-label": "Watch a race" }, el("h1", {}, "Watch"), el("p.muted", {}, "Loading…"));
    this.timer = setInterval(() => this.tick(), 500);
  }

  destroy() {
    clearInterval(this.timer);
    if (this.source) this.source.close();
    this.source = null;
    if (this.watching && !this.anonymous && this.conn.online) {
      this.conn.request({ type: "race.unwatch", race_id: this.raceId }).catch(() => {});
    }
    this.watching = false;
    if (this.app.watching === this) this.app.watching = null;
  }

  async load() {
    if (this.anonymous) return this.stream();
    try {
      this.watched(await this.conn.request({ type: "race.watch", race_id: this.raceId }));
      this.watching = this.race.status !== "finished";
    } catch (e) {
      if (e.code !== "conflict") throw e;
      // A racer of this race: its standings (their own board is on the Race page).
      const room = await this.conn.request({ type: "race.get", race_id: this.raceId });
      this.own = true;
      this.race = room.race;
      this.offset = room.race.server_time - Date.now();
      this.render();
    }
  }

  /** Anonymous: the public API's server-sent events, the messages `race.watch` brings. The
   * variants' descriptors come from /rules.json (no `welcome` without a player). */
  async stream() {
    const rules = await this.app.rulesDoc();
    setVariants(Object.values(rules).map((r) => r.descriptor));
    return new Promise((resolve, reject) => {
      const source = new EventSource(`/api/v1/races/${encodeURIComponent(this.raceId)}/events`);
      this.source = source;
      let first = true;
      for (const type of STREAM_TYPES) {
        source.addEventListener(type, (ev) => {
          const msg = JSON.parse(ev.data);
          if (type === "race.watching") {
            this.watched(msg);
            if (first) { first = false; resolve(); }
          } else {
            this.push(msg);
          }
          if (this.race && this.race.status === "finished") source.close(); // over: no reconnecting
        });
      }
      source.addEventListener("error", () => {
        if (first) {
          source.close();
          first = false;
          reject(new Error("There is no such race, or the server cannot be reached."));
        }
      });
    });
  }

  watched(w) {
    this.race = w.race;
    this.offset = (w.race.server_time || Date.now()) - Date.now();
    this.spectators = w.spectators;
    this.boards = new Map(w.boards.map((b) => [b.player_id, b]));
    this.render();
  }

  now() {
    return Date.now() + (this.anonymous ? this.offset : this.conn.serverNow() - Date.now());
  }

  /** A push for this race; true when it was this screen's. */
  push(msg) {
    const id = msg.race_id || (msg.race && msg.race.race_id);
    if (id !== this.raceId) return false;
    if (msg.type === "race.spectate") {
      const b = msg.board, old = this.boards.get(b.player_id);
      if (!old || !old.view || b.seq >= old.seq) this.boards.set(b.player_id, b);
      this.renderBoard(b.player_id);
      this.renderStandings();
    } else if (msg.type === "race.spectators") {
      this.spectators = msg.count;
      this.renderCount();
    } else if (msg.type === "race.update") {
      this.race = { ...msg.race, server_time: this.race && this.race.server_time };
      this.render();
    } else if (msg.type === "race.event" && this.race) {
      const ev = msg.event;
      if (ev.kind === "progress") {
        this.race.racers = this.race.racers.map((r) => r.player_id === ev.player_id ? { ...r, ...ev, kind: undefined } : r);
        this.renderStandings();
      } else if (ev.kind === "finished") {
        const by = new Map(ev.results.map((x) => [x.player_id, x]));
        this.race = { ...this.race, status: "finished",
          racers: this.race.racers.map((r) => ({ ...r, ...(by.get(r.player_id) || {}) })) };
        this.watching = false;
        this.render();
      }
    }
    return true;
  }

  render() {
    const r = this.race;
    if (!r) return;
    const done = r.status === "finished";
    const heading = done ? `Race result · ${title(r.variant)}` : `Watching · ${title(r.variant)}`;
    this.countNode = el("span.muted", { "data-spectators": "" });
    this.statusNode = el("span", { "data-race-status": r.status });
    this.standingsNode = el("div.scroll", { tabindex: "0" });
    this.boardsNode = el("div.watchboards");
    const share = done ? shareBox("Link to this result", raceHref(r.race_id)) : shareBox("Link to watch this race", watchHref(r.race_id));
    this.node.replaceChildren(
      el("h1", {}, heading),
      el("div.panel", {},
        el("p.watchstatus", {}, this.statusNode, " ", this.countNode),
        this.own && !done ? el("p", {}, "You race in this race: ", el("a", { href: "#/race" }, "back to your game"), ".") : null,
        this.anonymous ? el("p.muted", {}, "You are watching without a player. ",
          el("button", { type: "button", "data-action": "choose-name", onclick: () => this.app.chooseName() }, "Choose a name to play")) : null,
        share),
      el("section.panel", { "aria-labelledby": "w-standings" }, el("h2", { id: "w-standings" }, done ? "Standings" : "Racers"), this.standingsNode),
      this.own ? null : this.boardsNode);
    this.renderStandings();
    this.renderCount();
    this.tick();
    if (!this.own) for (const x of r.racers) this.renderBoard(x.player_id);
  }

  renderCount() {
    if (!this.countNode) return;
    const done = this.race && this.race.status === "finished";
    this.countNode.textContent = done ? "" : `· ${this.spectators} watching`;
  }

  tick() {
    const r = this.race;
    if (!r || !this.statusNode) return;
    if (r.status === "finished") this.statusNode.textContent = "The race is over.";
    else if (r.status === "open") this.statusNode.textContent = "Waiting for the room's creator to start it.";
    else if (r.status === "countdown" || this.now() < r.start_at) {
      this.statusNode.textContent = `Starts in ${Math.max(0, Math.ceil((r.start_at - this.now()) / 1000))} s`;
    } else this.statusNode.textContent = `${clock(r.ends_at - this.now())} left · boards 3 s late`;
  }

  /** A racer's progress: from their latest board when there is one, else the race's word. */
  progress(x) {
    const b = this.boards.get(x.player_id);
    const v = b && b.view;
    return {
      points: v ? (scoring(this.race.variant) ? v.score : v.cleared) : (scoring(this.race.variant) ? x.score : x.cleared),
      moves: v ? v.moves : x.moves,
    };
  }

  renderStandings() {
    const r = this.race;
    if (!r || !this.standingsNode) return;
    const done = r.status === "finished";
    const racers = [...r.racers];
    if (done) racers.sort((a, b) => (a.place || 99) - (b.place || 99));
    // `stuck` is any game over without a win, a resignation too; the race says who resigned
    // (`resigned`, protocol 10), and where each racer stopped.
    const info = variantInfo(r.variant);
    const reached = (x) => {
      const p = this.progress(x);
      return scoring(r.variant) ? `${p.points} pts` : `${p.points}/${info.clear}`;
    };
    const state = (x) => x.forfeited ? "forfeited" : x.won ? "won" : x.resigned ? `resigned at ${reached(x)}`
      : x.stuck ? `stuck at ${reached(x)}` : x.finished ? "finished" : "";
    this.standingsNode.replaceChildren(el("table.standings", { "aria-label": "Racers" },
      el("thead", {}, el("tr", {}, (done ? ["#"] : []).concat(["Racer", scoring(r.variant) ? "Score" : "Cleared", "Moves"], done ? ["Rating"] : [])
        .map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, racers.map((x) => {
        const p = this.progress(x);
        return el("tr", { "data-racer": x.name },
          done ? el("td", {}, x.place ? String(x.place) : "—") : null,
          el("td", {}, playerLink(x.name), " ", el("small.muted", { "data-state": "" }, state(x))),
          el("td", { "data-progress": "" }, p.points != null ? String(p.points) : "—"),
          el("td", {}, p.moves != null ? String(p.moves) : "—"),
          done ? el("td", {}, x.rating != null ? `${x.rating} (${signed(x.rating_change || 0)})` : "unrated") : null);
      }))));
  }

  renderBoard(pid) {
    if (this.own || !this.boardsNode || !this.race) return;
    const racer = this.race.racers.find((x) => x.player_id === pid);
    if (!racer) return;
    let box = this.boardsNode.querySelector(`[data-board-of="${CSS.escape(pid)}"]`);
    if (!box) {
      box = el("section.watchboard", { "data-board-of": pid, "aria-label": `${racer.name}'s board` });
      this.boardsNode.append(box);
    }
    const b = this.boards.get(pid);
    let board = this.views.get(pid);
    if (!board) {
      board = new Board(() => Promise.resolve());
      this.views.set(pid, board);
    }
    const head = el("h2", {}, playerLink(racer.name), b && b.view ? el("small.muted", {}, ` · ${b.view.moves} moves`) : null);
    if (b && b.view) {
      board.set(b.view, { locked: true });
      box.replaceChildren(head, board.node);
    } else {
      box.replaceChildren(head, el("p.muted", {}, this.race.status === "countdown" ? "The race has not started yet." : "The board shows 3 s after each move…"));
    }
  }
}

/** `#/watch/ID` (and `#/race/ID` for a race one does not race in). */
export async function openWatch(app, raceId, opts = {}) {
  if (app.watching) app.watching.destroy();
  const screen = new WatchScreen(app, raceId, opts);
  app.watching = screen;
  app.show(screen.node, screen);
  try {
    await screen.load();
  } catch (e) {
    const text = e.code === "not_found" ? "There is no such race (or it is too old to be shown)." : describe(e);
    screen.node.replaceChildren(el("h1", {}, "Watch"), el("div.panel", {}, el("p.error", {}, text),
      el("a", { href: "#/races" }, "See the live races")));
  }
}
