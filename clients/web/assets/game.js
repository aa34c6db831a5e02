// One game on screen: the board, the server's clock, moves, undo, hint, resign or finish, and
// the result. Daily and race games alike; `race` adds nothing here but hides hints.
//
// The page follows the game by the server's lean `moved` replies (docs/protocol.md,
// "Following a game"): each carries what the move changed in the view (applied as plain data
// by `applyChanges`), the move in card words and the foundation moves safe to play. No rule
// is decided here; a gap in `seq` (a move made elsewhere) is a `game.get`.

import { applyChanges, Board, reducedMotion } from "./board.js";
import { describe, HELD_FOR_REVIEW, ServerError } from "./net.js";
import { clock, DAILY_TIER, dialog, el, gameLabel, mayFinish, points, scoring, title, toast, variantInfo } from "./ui.js";

const AUTO_KEY = "solitaire.autoMoves";
/** Whether the player lets the page play the server's safe foundation moves (a setting). */
export function autoMoves() {
  return localStorage.getItem(AUTO_KEY) === "1";
}

/** "You won!", "Finished" (the games one may end at will), "Resigned" or "Game over". */
export function outcome(variant, r) {
  if (r.won) return "You won!";
  if (mayFinish(variant) && (r.resigned || !r.over)) return "Finished";
  return r.resigned ? "Resigned" : "Game over";
}

export class GameScreen {
  /** `opts`: {race: true for a race game, onResult(result), showRules(variant)}. */
  constructor(app, gameId, opts = {}) {
    this.app = app;
    this.conn = app.conn;
    this.gameId = gameId;
    this.race = !!opts.race;
    this.onResult = opts.onResult || (() => {});
    this.board = new Board((m) => this.play(m));
    this.busy = false;
    this.game = null;
    this.startedAt = null;
    this.hints = 0;
    this.penalty = null;
    this.history = [];
    this.safe = [];
    this.endedAt = null;
    // One place for what the server says about the game (hints and refused moves), and a
    // live region that reads each move and its result to a screen reader; both outlive renders.
    this.status = el("p.hint", { role: "status", "aria-live": "polite", "data-status": "" });
    this.live = el("p.sr-only", { "aria-live": "polite", "data-live": "moves" });
    this.body = el("div.gamebody");
    this.node = el("section.game", { "aria-label": "Game" }, this.body, this.live);
    this.timer = setInterval(() => this.tick(), 250);
    this.keys = (e) => this.key(e);
    document.addEventListener("keydown", this.keys);
  }

  /** Hints are offered except in races and catch-up games (the server refuses them there:
   * every player of a catch-up deal plays the same one, docs/fairplay.md). */
  get hintable() {
    return !this.race && !(this.game && this.game.catchup);
  }

  destroy() {
    clearInterval(this.timer);
    document.removeEventListener("keydown", this.keys);
  }

  /** Fetch the game from the server (the first time, and whenever we lost track of it). */
  async load() {
    const g = await this.conn.request({ type: "game.get", game_id: this.gameId });
    this.setGame(g);
    return g;
  }

  setGame(g) {
    const wasPlaying = this.game !== null && !this.finished;
    if (wasPlaying && g.finished) this.endedAt = this.elapsedNow(); // the clock stops, not jumps
    this.game = g;
    this.view = g.view;
    this.seq = g.seq;
    this.startedAt = g.started_at;
    this.conn.offset = g.server_time - Date.now(); // the clock runs on the server's time
    this.finished = g.finished;
    this.result = g.result || null;
    this.hints = g.hints || 0;
    // The game's moves as the server stored them, in card words where it sends them.
    this.history = (g.log_text || g.log || []).slice(0, g.seq);
    this.safe = g.safe || [];
    this.render();
    if (this.finished && wasPlaying) this.ended();
    else if (this.finished && !this.resultShown) this.showResult();
    else this.autoMove();
  }

  render() {
    const v = this.view;
    const finishLabel = mayFinish(v.variant) ? "Finish" : "Resign";
    this.clockNode = el("span.clock", { "aria-label": "time" }, clock(this.elapsedNow()));
    const info = variantInfo(v.variant);
    const progress = info.scored
      ? `Score ${v.score} / ${info.max_score}`
      : `Cleared ${v.cleared} / ${info.clear}`;
    const par = this.game.par != null ? `Par ${this.game.par}${scoring(v.variant) ? " pts" : " moves"}` : null;
    const stats = el("div.stats", {},
      el("span", { "data-stat": "moves" }, `Moves ${v.moves}`),
      el("span", { "data-stat": "points" }, progress),
      par && el("span", { "data-stat": "par" }, par),
      this.hintable && el("span", { "data-stat": "hints" },
        `Hints ${this.hints}${this.hints ? ` (+${clock(this.penaltyMs())})` : ""}`));
    const off = this.finished || this.busy;
    const actions = el("div.actions", {},
      el("button", { "data-action": "undo", onclick: () => this.undo(), disabled: off || !v.can_undo,
        title: info.undo_counts ? "Undo (U): counts as a move" : "Undo (U)" },
        info.undo_counts ? "Undo (+1 move)" : "Undo"),
      this.hintable && el("button", { "data-action": "hint", onclick: () => this.hint(), disabled: off, title: "Hint (H)" },
        `Hint (+${Math.round(this.penaltyStep() / 1000)} s)`),
      el("button.danger", { "data-action": "resign", onclick: () => this.resign(), disabled: this.finished }, finishLabel),
      el("button", { onclick: () => this.app.showRules(v.variant) }, "Rules"),
      this.finished && !this.race && el("button.primary", { onclick: () => this.showResult() }, "Result"));
    this.board.set(v, { locked: this.finished, moved: this.lastEvents });
    this.lastEvents = null;
    const list = el("ol.movelist", { "aria-label": "Moves played" },
      this.history.map((m) => el("li", {}, m)));
    const missing = this.seq - this.history.length;
    // The setting shows where the server can name safe moves: the games with foundations.
    const auto = info.family === "tableau" ? el("label.setting", {},
      el("input", { type: "checkbox", "data-setting": "auto-moves", checked: autoMoves(),
        onchange: (e) => this.setAutoMoves(e.target.checked) }),
      " Play safe moves to the foundation for me (each counts as a move)") : null;
    const aside = el("aside.side", {},
      this.sideExtra || null,
      auto,
      el("h2", {}, "Moves"),
      missing > 0 ? el("p.muted", {}, `${missing} earlier move${missing > 1 ? "s" : ""} made on another device`) : null,
      this.seq === 0 ? el("p.muted", {}, "No moves yet.") : null,
      list);
    // Only the keys that do something in this variant (no hint key where hints are refused).
    const keys = ["Click or drag a card, then its place · Keys: arrows move, Enter picks and plays, Esc cancels",
      info.undo_counts ? "U undo (counts as a move)" : "U undo"];
    if (this.hintable) keys.push("H hint");
    if (info.stock) keys.push(`D ${info.stock}`);
    this.body.replaceChildren(
      el("div.gamebar", {},
        el("h1", {}, title(v.variant), this.game.date && !this.race && !this.game.free
          ? el("small", { "data-game-label": "" }, ` ${gameLabel(this.game)}`) : null),
        this.clockNode, stats, actions),
      this.status,
      el("div.layout", {}, el("div.boardcol", {}, this.board.node, el("p.keys", {}, keys.join(", "))), aside));
    list.scrollTop = list.scrollHeight;
  }

  setAutoMoves(on) {
    localStorage.setItem(AUTO_KEY, on ? "1" : "0");
    if (on) this.autoMove();
  }

  /** Play the first safe move the server listed, when the player asked for them. */
  autoMove() {
    if (!autoMoves() || this.finished || !this.safe.length) return;
    const [next] = this.safe;
    const seq = this.seq;
    setTimeout(() => {
      if (this.seq === seq && !this.busy && !this.finished) this.play(next.move);
    }, reducedMotion() ? 0 : 250);
  }

  /** Something shown above the move list (the race panel). */
  setSide(node) {
    this.sideExtra = node;
    if (this.view) {
      const aside = this.node.querySelector("aside.side");
      if (aside && !aside.contains(node)) aside.prepend(node);
    }
  }

  /** Playing time by the server's clock, hint penalties included (as the result counts it).
   * A race game that ends by the race's end keeps the time it showed then (its result's time
   * runs to its last move, earlier). */
  elapsedNow() {
    if (this.finished && this.result) {
      return this.race && this.endedAt != null ? Math.max(this.endedAt, this.result.time_ms) : this.result.time_ms;
    }
    if (this.startedAt == null) return 0;
    return Math.max(0, this.conn.serverNow() - this.startedAt) + this.penaltyMs();
  }

  /** What a hint adds, as the server says (`game.hint_penalty_ms`). */
  penaltyStep() {
    if (this.game && this.game.hint_penalty_ms != null) return this.game.hint_penalty_ms;
    return this.penalty != null && this.hints ? this.penalty / this.hints : 30000;
  }

  penaltyMs() {
    return this.penalty != null ? this.penalty : this.hints * this.penaltyStep();
  }

  tick() {
    if (this.clockNode) this.clockNode.textContent = clock(this.elapsedNow());
  }

  key(e) {
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "TEXTAREA")) return;
    if (document.querySelector("dialog[open]") || e.ctrlKey || e.metaKey || e.altKey) return;
    if (!this.view || this.finished || !document.body.contains(this.node)) return;
    if (e.key === "u") this.undo();
    else if (e.key === "h" && this.hintable) this.hint();
    else if (e.key === "d" && variantInfo(this.view.variant).stock && !this.board.node.contains(e.target)) this.play("d");
  }

  async play(move) {
    if (this.busy || this.finished) return;
    await this.send({ type: "move", game_id: this.gameId, move, expected_seq: this.seq });
  }

  async undo() {
    if (this.busy || this.finished) return;
    await this.send({ type: "undo", game_id: this.gameId, expected_seq: this.seq });
  }

  async send(req) {
    this.busy = true;
    let reply;
    try {
      // One request, one lean reply: the page follows the server's changes (no `with_view`).
      reply = await this.conn.request(req);
    } catch (e) {
      this.busy = false;
      await this.failed(e);
      return;
    }
    this.busy = false;
    await this.moved(reply);
  }

  async moved(r) {
    if (r.seq !== this.seq + 1 || !r.changes) {
      // A gap (a move made elsewhere, a lost reply) or a server without changes: resync.
      await this.load().catch((e) => this.say(describe(e), "error"));
      return;
    }
    if (r.finished) this.endedAt = this.elapsedNow();
    this.view = applyChanges(this.view, r.changes);
    this.seq = r.seq;
    this.safe = r.safe || [];
    const words = r.text || r.move;
    this.history.push(words);
    this.lastEvents = r.events;
    this.say("");
    if (r.finished) {
      this.finished = true;
      this.result = r.result || null;
    }
    this.render();
    this.announce(words);
    if (this.finished) this.ended();
    else this.autoMove();
  }

  /** Read a move and where the game stands to a screen reader. */
  announce(words) {
    const v = this.view, info = variantInfo(v.variant);
    const progress = info.scored ? `score ${v.score} of ${info.max_score}` : `${v.cleared} of ${info.clear} cleared`;
    const end = v.won ? " You won!" : this.finished ? " The game is over." : "";
    this.live.textContent = `${words}. Move ${v.moves}, ${progress}.${end}`;
  }

  /** The `game.finished` push: the server decided the end after the move's reply. */
  finishedPush(msg) {
    if (msg.game_id !== this.gameId || this.finished) return;
    this.load().catch(() => {});
  }

  /** A refused request: said once, in the game's status line (no toast besides). */
  async failed(e) {
    if (e instanceof ServerError && e.code === "illegal_move") {
      this.board.snapBack();
      this.say(describe(e), "error");
      return;
    }
    if (e instanceof ServerError && ["conflict", "game_over", "day_over", "internal"].includes(e.code)) {
      this.say(describe(e), "error");
      await this.load().catch(() => {});
      return;
    }
    this.board.snapBack();
    this.say(describe(e), "error");
  }

  say(text, kind = "info") {
    this.status.textContent = text;
    this.status.className = `hint ${kind}`;
  }

  async hint() {
    if (this.busy || this.finished) return;
    this.busy = true;
    this.say("Asking the server for a hint…");
    try {
      const r = await this.conn.request({ type: "hint", game_id: this.gameId });
      const counted = r.hints > this.hints;
      this.hints = r.hints;
      this.penalty = r.penalty_ms;
      this.busy = false;
      this.render();
      if (r.move) {
        this.board.showHint(r.move);
        this.say(`Hint: ${r.text || r.move} (${r.hints} hint${r.hints > 1 ? "s" : ""}, +${clock(r.penalty_ms)} on your time)`);
      } else if (counted) {  // the search proved it: worth a hint (docs/protocol.md, `hint`)
        this.say(`No line wins from here (the solver sees every card); that counts as a hint (+${clock(r.penalty_ms)} on your time).`);
      } else {
        this.say("The solver found no move in time; that hint was not counted.");
      }
    } catch (e) {
      this.say(describe(e), "error");
    } finally {
      this.busy = false;
    }
  }

  async resign() {
    if (this.finished) return;
    const finish = mayFinish(this.view.variant);
    const ok = await dialog(finish ? "Finish this game?" : "Resign this game?",
      el("p", {}, finish
        ? "Your score so far is recorded as your result."
        : "The game ends now and your result is recorded."),
      [{ label: "Cancel", value: false }, { label: finish ? "Finish" : "Resign", value: true, primary: true }]);
    if (!ok) return;
    // The games the server says end with `finish` (their score recorded) are not resigned.
    const type = variantInfo(this.view.variant).finish ? "finish" : "resign";
    try {
      const r = await this.conn.request({ type, game_id: this.gameId });
      this.endedAt = this.elapsedNow();
      this.finished = true;
      this.result = r.result;
      this.view = { ...this.view, over: true };
      this.render();
      this.ended();
    } catch (e) {
      await this.failed(e);
    }
  }

  ended() {
    this.onResult(this.result);
    const won = this.result && this.result.won;
    if (won) this.celebrate();
    // The result waits a moment after a win, for the celebration to be seen.
    if (!this.race) setTimeout(() => this.showResult(), won && !reducedMotion() ? 1200 : 0);
  }

  /** A win: cards in every suit rain over the board for a moment, and it is said. */
  celebrate() {
    const old = this.node.querySelector(".celebration");
    if (old) old.remove();
    const glyphs = ["♠", "♥", "♦", "♣"];
    const party = el("div.celebration", { role: "status", "data-celebration": "" },
      el("p.cheer", {}, "You won!"),
      Array.from({ length: 24 }, (_, i) => el(`span.confetti${i % 4 === 1 || i % 4 === 2 ? ".red" : ""}`,
        { style: `--i:${i};--x:${(i * 37) % 100}` }, glyphs[i % 4])));
    this.node.append(party);
    setTimeout(() => party.remove(), 4000);
  }

  /** The win / over screen: result, rank, par and a text to share. */
  async showResult() {
    if (this.race || !this.result) return;
    this.resultShown = true;
    const r = this.result, v = this.view;
    let rank = r.rank, total = null;
    const g = this.game, tier = g.tier || DAILY_TIER;
    // A free game (protocol 7) and a catch-up game (protocol 8) are on no board; a tier
    // game is on its tier's board.
    if (!g.free && !g.catchup) try {
      const mine = await this.conn.request({ type: "leaderboard.rank", variant: v.variant, date: g.date, ...(tier !== DAILY_TIER ? { tier } : {}) });
      if (mine.entry) rank = mine.entry.rank;
      total = mine.total;
    } catch (e) { /* the rank is a bonus; the result stands */ }
    const headline = outcome(v.variant, r);
    const amount = scoring(v.variant) ? points(r.score) : `${r.cleared}/${variantInfo(v.variant).clear} cleared`;
    const par = this.game.par != null ? ` (par ${this.game.par})` : "";
    const share = [
      g.free ? `Solitaire free play · ${title(v.variant)}`
        : `Solitaire ${tier === DAILY_TIER && !g.catchup ? "daily" : `${tier}${g.catchup ? " catch-up" : ""}`} ${g.date} · ${title(v.variant)}`,
      `${r.won ? "Won" : headline} · ${amount} · ${clock(r.time_ms)} · ${r.moves} moves${scoring(v.variant) ? "" : par}` +
        `${scoring(v.variant) ? par : ""}${r.hints ? ` · ${r.hints} hint${r.hints > 1 ? "s" : ""}` : ""}`,
      rank ? `Rank #${rank}${total ? ` of ${total}` : ""}` : null,
    ].filter(Boolean).join("\n");
    const text = el("textarea.share", { readonly: true, rows: 3, "aria-label": "Shareable summary" });
    text.value = share;
    // Crowns (protocol 8): a tier won with a hint earns none (docs/protocol.md §15): say so here.
    const crowns = !g.free && r.won && r.hints
      ? el("p.nocrowns", { "data-result": "crowns" }, "Won with hints: no crowns. A tier earns its crowns only when won without a hint.")
      : null;
    const body = el("div.result", {},
      g.free ? null : el("p.gamelabel", { "data-result": "label" }, `${title(v.variant)} · ${gameLabel(g)}`),
      crowns,
      el("dl", {},
        el("dt", {}, scoring(v.variant) ? "Score" : "Cleared"), el("dd", { "data-result": "points" }, amount),
        el("dt", {}, "Time"), el("dd", { "data-result": "time" }, clock(r.time_ms)),
        el("dt", {}, "Moves"), el("dd", {}, String(r.moves)),
        el("dt", {}, "Hints"), el("dd", {}, String(r.hints || 0)),
        el("dt", {}, "Rank"), el("dd", { "data-result": "rank" },
          r.status === "flagged" ? HELD_FOR_REVIEW : g.catchup ? "catch-up: on no board" : rank ? `#${rank}${total ? ` of ${total}` : ""}` : "—"),
        el("dt", {}, "Par"), el("dd", {}, this.game.par != null ? String(this.game.par) : "—")),
      text,
      el("button", {
        onclick: async () => {
          try { await navigator.clipboard.writeText(share); toast("Copied."); }
          catch (e) { text.select(); toast("Select the text and copy it."); }
        },
      }, "Copy summary"));
    const next = await dialog(headline, body, [
      { label: "See the board", value: null },
      { label: "Leaderboard", value: "boards" },
      { label: "Daily deals", value: "daily", primary: true },
    ]);
    if (next === "boards") location.hash = `#/boards/${v.variant}${tier !== DAILY_TIER && !g.catchup ? `/${tier}` : ""}`;
    else if (next === "daily") location.hash = "#/daily";
  }
}
