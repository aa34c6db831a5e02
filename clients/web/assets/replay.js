// A finished day's replay (`#/replay/GAME_ID`, or `#/replay/DATE/VARIANT` for your own game):
// the boards come from the server's public API (`/api/v1/games/ID/replay`, one view per
// move, served once the day is closed), so no rule runs here. Step with the buttons, the
// slider, the move list or the keys (← →, Home, End).

import { Board } from "./board.js";
import { describe } from "./net.js";
import { playerLink } from "./links.js";
import { clock, el, points, scoring, title, variantInfo } from "./ui.js";

export class ReplayScreen {
  constructor(app, gameId) {
    this.app = app;
    this.gameId = gameId;
    this.board = new Board(() => Promise.resolve());
    this.step = 0;
    this.replay = null;
    this.node = el("section.replay", { "aria-label": "Replay" }, el("h1", {}, "Replay"), el("p.muted", {}, "Loading…"));
    this.keys = (e) => this.key(e);
    document.addEventListener("keydown", this.keys);
  }

  destroy() {
    document.removeEventListener("keydown", this.keys);
  }

  async load() {
    const res = await fetch(`/api/v1/games/${encodeURIComponent(this.gameId)}/replay`);
    if (!res.ok) {
      let message = `The replay could not be loaded (${res.status}).`;
      if (res.status === 404) message = "This game can be replayed once its day is over (00:00 UTC) and every game of it is settled, and only a finished daily game.";
      if (res.status === 429) message = "Too many requests: try again in a moment.";
      throw new Error(message);
    }
    this.replay = await res.json();
    this.render();
  }

  render() {
    const r = this.replay, v = r.variant, last = r.steps.length - 1;
    const result = r.won ? "Won" : r.resigned ? "Resigned" : "Over";
    this.slider = el("input", { type: "range", id: "replay-step", min: 0, max: last, value: this.step,
      oninput: (e) => this.go(Number(e.target.value)) });
    this.label = el("p.steplabel", { "aria-live": "polite", "data-step": "" });
    this.buttons = {
      first: el("button", { type: "button", "data-step-to": "first", onclick: () => this.go(0), title: "The deal (Home)" }, "« First"),
      back: el("button", { type: "button", "data-step-to": "back", onclick: () => this.go(this.step - 1), title: "Back one move (←)" }, "‹ Back"),
      forward: el("button.primary", { type: "button", "data-step-to": "forward", onclick: () => this.go(this.step + 1), title: "Forward one move (→)" }, "Forward ›"),
      last: el("button", { type: "button", "data-step-to": "last", onclick: () => this.go(last), title: "The last move (End)" }, "Last »"),
    };
    this.list = el("ol.movelist.replaymoves", { "aria-label": "Moves" }, r.steps.slice(1).map((s, i) =>
      el("li", {}, el("button.linklike", { type: "button", "data-move-index": i + 1, onclick: () => this.go(i + 1) }, s.text ?? s.move))));
    const summary = `${result} · ${scoring(v) ? points(r.score) : `${r.cleared} of ${variantInfo(v).clear} cleared`} · ${clock(r.time_ms)}`;
    this.node.replaceChildren(
      el("div.gamebar", {}, el("h1", {}, `Replay · ${title(v)}`, el("small", {}, ` ${r.date}`)),
        el("span", {}, "by ", playerLink(r.name)), el("span", { "data-replay-result": "" }, summary)),
      el("div.replaycontrols.panel", { role: "group", "aria-label": "Replay controls" },
        el("div.actions", {}, this.buttons.first, this.buttons.back, this.buttons.forward, this.buttons.last),
        el("label", { for: "replay-step" }, "Position "), this.slider, this.label),
      el("div.layout", {}, el("div", {}, this.board.node,
        el("p.keys", {}, "Keys: ← back, → forward, Home the deal, End the last move")),
      el("aside.side", {}, el("h2", {}, "Moves"), this.list)));
    this.go(this.step);
  }

  /** Show position `i` (0: the deal; i: after the i-th logged move). */
  go(i) {
    const r = this.replay;
    if (!r) return;
    const last = r.steps.length - 1;
    this.step = Math.max(0, Math.min(last, i));
    const s = r.steps[this.step];
    this.board.set(s.view, { locked: true });
    this.slider.value = String(this.step);
    this.label.textContent = this.step === 0 ? `The deal · ${last} moves in all` : `Move ${this.step} of ${last}: ${s.text ?? s.move}`;
    this.buttons.first.disabled = this.buttons.back.disabled = this.step === 0;
    this.buttons.forward.disabled = this.buttons.last.disabled = this.step === last;
    for (const b of this.list.querySelectorAll("button")) {
      const current = Number(b.dataset.moveIndex) === this.step;
      b.setAttribute("aria-current", current ? "step" : "false");
      if (current) b.scrollIntoView({ block: "nearest" });
    }
  }

  key(e) {
    if (!this.replay || e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return; // the slider steps itself
    const to = { ArrowLeft: this.step - 1, ArrowRight: this.step + 1, Home: 0, End: this.replay.steps.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    this.go(to);
  }
}

/** `#/replay/GAME_ID`, or `#/replay/DATE/VARIANT`: your own game of that day. */
export async function openReplay(app, arg, variant) {
  const at = location.hash;
  let gameId = arg;
  const holder = el("section.replay", {}, el("h1", {}, "Replay"), el("p.muted", {}, "Loading…"));
  app.show(holder, { load: async () => {} });
  try {
    if (/^\d{4}-\d{2}-\d{2}$/.test(arg)) {
      const next = new Date(Date.parse(`${arg}T00:00:00Z`) + 86400000).toISOString().slice(0, 10);
      const page = await app.conn.request({ type: "history.get", variant, before: next, limit: 1 });
      const entry = page.entries.find((x) => x.date === arg);
      if (!entry) throw new Error(`You have no finished ${title(variant)} game on ${arg}.`);
      gameId = entry.game_id;
    }
    const screen = new ReplayScreen(app, gameId);
    try {
      await screen.load();
    } catch (e) {
      screen.destroy();
      throw e;
    }
    if (location.hash !== at) return screen.destroy(); // navigated away meanwhile
    app.show(screen.node, screen);
  } catch (e) {
    holder.replaceChildren(el("h1", {}, "Replay"), el("div.panel", {}, el("p.error", {}, describe(e)),
      el("a", { href: "#/history" }, "Back to your history")));
  }
}
