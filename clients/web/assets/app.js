// The page: the connection, the name form, the screens by URL (#/daily, #/game/ID, #/race,
// #/race/ID, #/boards/VARIANT, #/rules/VARIANT, #/settings, #/player/NAME, #/history/VARIANT,
// #/replay/GAME_ID, #/races, #/watch/ID, #/free, #/account,
// #/calendar/MONTH) and the connection status line.

import { AccountScreen, signinWithCode } from "./account.js";
import { BoardsScreen } from "./boards.js";
import { CalendarScreen } from "./calendar.js";
import { freeLabel, FreePlayScreen } from "./freeplay.js";
import { GameScreen, outcome } from "./game.js";
import { HistoryScreen } from "./history.js";
import { playerHref, raceHref } from "./links.js";
import { Connection, describe, HELD_FOR_REVIEW, storedToken } from "./net.js";
import { openProfile } from "./profile.js";
import { RaceScreen } from "./race.js";
import { RacesScreen } from "./races.js";
import { rematchDeclined, showRematchOffer } from "./rematch.js";
import { openReplay } from "./replay.js";
import { rulesPage, rulesSummary } from "./rules.js";
import { initSettings, settingsPanel } from "./settings.js";
import { clock, closeDialogs, DAILY_TIER, dialog, el, points, scoring, tierName, title, toast, variantInfo } from "./ui.js";
import { openWatch } from "./watch.js";

/** The page and its argument from the address: "#/watch/ID" -> ["watch", "ID", …]. */
function hashParts() {
  return location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
}

class App {
  constructor() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    this.conn = new Connection(`${proto}//${location.host}/ws`);
    this.main = document.getElementById("main");
    this.statusNode = document.getElementById("status");
    this.screen = null;
    this.race = null;
    this.rules = null;
    this.watching = null; // the race this page watches (watch.js)
    this.conn.addEventListener("status", (e) => this.status(e.detail));
    this.conn.addEventListener("welcome", (e) => this.welcome(e));
    this.conn.addEventListener("push", (e) => this.push(e.detail));
    window.addEventListener("hashchange", () => this.route());
    // Back on the page (another tab, another window, a phone woken up): the daily list may be
    // stale (a game started on another device), so it asks the server again.
    const again = () => { if (document.visibilityState === "visible") this.refreshDaily(); };
    document.addEventListener("visibilitychange", again);
    window.addEventListener("focus", again);
  }

  /** The daily list (or the calendar) again, when it is the screen shown: what another
   * device did meanwhile shows (one refresh at a time). */
  refreshDaily() {
    if (!this.conn.online || !this.screen || this.refreshing) return;
    const again = this.screen.daily ? this.openDaily({ refresh: true })
      : this.screen instanceof CalendarScreen ? this.screen.load() : null;
    if (again) this.refreshing = again.catch(() => {}).finally(() => { this.refreshing = null; });
  }

  start() {
    this.conn.start();
  }

  status({ state, message }) {
    document.body.dataset.conn = state;
    if (state === "need-name") {
      // A shared watch or race link opened by someone without a player: watch anonymously.
      const [page, arg] = hashParts();
      if ((page === "watch" || page === "race") && arg && !this.wantsName) return this.watchAnonymously(arg);
      return this.askName(message);
    }
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
    this.show(el("div.welcomes", {}, form, signinWithCode(this.conn)));
    input.focus();
  }

  /** Watch a race over the public API's stream, with no player (a cold shared link). */
  watchAnonymously(raceId) {
    this.statusNode.hidden = true;
    if (this.watching && this.watching.anonymous && this.watching.raceId === raceId) return;
    openWatch(this, raceId, { anonymous: true });
    if (!this.anonymousRoute) {
      // Without a player: another race link is watched too; any other page asks for a name.
      this.anonymousRoute = () => {
        if (this.conn.online || this.conn.state !== "need-name" || this.wantsName) return;
        const [page, arg] = hashParts();
        if ((page === "watch" || page === "race") && arg) this.watchAnonymously(arg);
        else this.chooseName();
      };
      window.addEventListener("hashchange", this.anonymousRoute);
    }
  }

  /** The name form, from an anonymous watch page. */
  chooseName() {
    this.wantsName = true;
    this.askName("");
  }

  welcome(e) {
    const who = document.getElementById("who");
    who.textContent = this.conn.player.name;
    who.href = playerHref(this.conn.player.name); // your profile
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
    if (this.watching && this.watching.push(msg)) return; // the race this page watches
    if (msg.type === "race.rematch_offer") return showRematchOffer(this, msg);
    if (msg.type === "race.rematch_declined") return rematchDeclined(msg);
    if (msg.type === "device.signed_in") { // protocol 9; the account page says it itself
      if (!(this.screen instanceof AccountScreen)) toast(`A new device signed in as you: ${msg.name || "unnamed"}. Not yours? Sign it out under Account.`);
      return;
    }
    if (msg.type === "signin.tries_used") { // protocol 9: someone guessed codes by this name
      toast("Someone used up the sign-in tries by your name: your sign-in code is void. Ask a new one and redeem it without your name.");
      return;
    }
    if (msg.type === "game.finished") {
      for (const g of [this.screen, this.race && this.race.game]) if (g && g.finishedPush) g.finishedPush(msg);
      return;
    }
    if (!msg.type.startsWith("race.") || !this.race) return;
    // A race this player does not race in (one just watched, whose late pushes may still come)
    // is never taken for their own.
    if (msg.type === "race.update" && !msg.race.racers.some((x) => x.player_id === this.conn.player.id)) return;
    this.race.push(msg);
    // A race that starts (matched from the queue, started by a room's creator) is shown at once.
    const starting = msg.type === "race.started" || (msg.type === "race.update" && msg.race.status === "countdown");
    const id = msg.race_id || (msg.race && msg.race.race_id);
    if (starting && id && location.hash !== raceHref(id)) location.hash = raceHref(id);
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
    closeDialogs(); // a dialog (a game's result, its rules) belongs to the page it opened on
    const [page, arg, arg2] = hashParts();
    const section = { game: "daily", play: "daily", watch: "races", replay: "history" }[page] || page || "daily";
    for (const a of document.querySelectorAll("[data-nav]")) {
      a.setAttribute("aria-current", a.dataset.nav === section ? "page" : "false");
    }
    try {
      if (page === "game" && arg) return await this.openGame(arg);
      if (page === "play" && arg) return await this.startDaily(arg, arg2);
      if (page === "race" && arg) return await this.openRaceById(arg);
      if (page === "race") return this.openRace();
      if (page === "player" && arg) return await openProfile(this, arg);
      if (page === "history") return await this.openScreen(new HistoryScreen(this, arg));
      if (page === "replay" && arg) return await openReplay(this, arg, arg2);
      if (page === "races") return await this.openScreen(new RacesScreen(this));
      if (page === "watch" && arg) return await openWatch(this, arg);
      if (page === "boards") return await this.openBoards(arg, arg2);
      if (page === "rules") return await this.openRules(arg);
      if (page === "settings") return this.show(settingsPanel(), { load: async () => {} });
      if (page === "free") return await this.openScreen(new FreePlayScreen(this));
      if (page === "account") return await this.openScreen(new AccountScreen(this));
      if (page === "calendar") return await this.openCalendar(arg);
      return await this.openDaily();
    } catch (e) {
      const text = e.code === "not_found" ? "There is no such game (or it is not yours)." : describe(e);
      this.show(el("div.panel", {}, el("p.error", {}, text), el("a", { href: "#/daily" }, "Back to the daily deals")));
    }
  }

  async openGame(gameId) {
    const at = location.hash;
    const g = new GameScreen(this, gameId);
    await g.load();
    if (location.hash !== at) return g.destroy && g.destroy(); // navigated away meanwhile
    // A free game (protocol 7) is the daily game page, marked unranked.
    this.show(g.game && g.game.free ? el("div.freegame", {}, freeLabel(), g.node) : g.node, g);
  }

  async openScreen(screen) {
    this.show(screen.node, screen);
    await screen.load();
  }

  /** `#/play/VARIANT` (the daily game) or `#/play/VARIANT/TIER` (protocol 8: a tier of today). */
  async startDaily(variant, tier) {
    const other = tier && tier !== DAILY_TIER;
    const g = await this.conn.request({ type: "daily.start", variant, ...(other ? { tier } : {}) });
    if (g.date !== this.conn.dailyDate) [this.conn.dailyDate, this.conn.daily] = [g.date, new Map()];
    if (!other) this.conn.daily.set(variant, g.game_id);
    location.replace(`#/game/${encodeURIComponent(g.game_id)}`);
  }

  openRace() {
    this.show(this.race.node, this.race);
    this.race.render();
    // The address names the race on screen, so it can be shared and reloaded.
    if (this.race.race) this.nameRace(this.race.race.race_id);
  }

  /** The race screen's race changed (`null`: it has none now): the address names it while
   * that screen is shown. */
  nameRace(id) {
    const hash = id ? raceHref(id) : "#/race";
    if (this.screen !== this.race || location.hash === hash) return;
    history.replaceState(null, "", hash);
    this.routed = location.hash;
  }

  /** `#/race/ID`: one's own race (room, countdown, game) on the Race screen; anyone else's,
   * or a finished one, on the watch screen (boards, standings, result). */
  async openRaceById(raceId) {
    let race;
    const at = location.hash;
    try {
      ({ race } = await this.conn.request({ type: "race.get", race_id: raceId }));
    } catch (e) {
      if (e.code !== "not_found") throw e;
      return location.hash === at ? openWatch(this, raceId) : undefined; // says there is no such race
    }
    if (location.hash !== at) return; // navigated away meanwhile
    const mine = race.racers.some((x) => x.player_id === this.conn.player.id);
    if (mine && race.status !== "finished") {
      await this.race.resume(raceId);
      return this.openRace();
    }
    return openWatch(this, raceId);
  }

  async openScreen(screen) {
    this.show(screen.node, screen);
    await screen.load();
  }

  async openBoards(variant, tier) {
    const b = new BoardsScreen(this, variant, tier);
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
    const at = location.hash;
    const rules = await this.rulesDoc();
    if (location.hash !== at) return; // navigated away meanwhile
    this.show(rulesPage(rules, this.conn.variants, variant || this.conn.variants[0]), { load: async () => {} });
  }

  /** The rules of a variant in a dialog (from a game). */
  async showRules(variant) {
    const rules = await this.rulesDoc();
    await dialog(rules[variant].title, rulesSummary(rules[variant]));
  }

  /** Today's tiers of every variant with this player's state in each (protocol 8): the
   * `welcome.tiers` just received, else today's row of `calendar.get` (fresh: a game started
   * on another device shows). A map variant -> tier -> {state, catchup, par?, game_id?}. */
  async todayTiers() {
    const conn = this.conn, byVariant = new Map();
    let cells;
    if (conn.tiersFresh && conn.tiers) {
      cells = conn.tiers;
    } else {
      const cal = await conn.request({ type: "calendar.get" });
      const day = cal.days.find((d) => d.date === cal.today);
      cells = day ? day.variants.flatMap((v) => v.tiers.map((t) => ({ ...t, variant: v.variant }))) : [];
      // Pars are in `welcome.tiers` only: keep those of today.
      const pars = new Map((conn.tiers || []).map((t) => [`${t.variant}/${t.tier}`, t.par]));
      for (const c of cells) if (c.par == null && pars.get(`${c.variant}/${c.tier}`) != null) c.par = pars.get(`${c.variant}/${c.tier}`);
    }
    conn.tiersFresh = false;
    for (const c of cells) {
      if (!byVariant.has(c.variant)) byVariant.set(c.variant, new Map());
      byVariant.get(c.variant).set(c.tier, c);
    }
    return byVariant;
  }

  /** The day's deals with this player's status on each: the daily game (the medium tier)
   * and every tier of each variant (protocol 8). `refresh`: asked again on the same screen
   * (the page came back into view), drawn only once the answers are in. */
  async openDaily({ refresh = false } = {}) {
    const at = location.hash;
    await this.rulesDoc().catch(() => null);
    // A screen asked for while the rules were loading stays: this list would cover it.
    if (location.hash !== at) return;
    const conn = this.conn, date = conn.today();
    // Today's games are the ones the server named (`welcome.daily`, `daily.start`); ids are
    // opaque here. After midnight (UTC) they are yesterday's: a reconnect brings today's.
    if (date !== conn.dailyDate) [conn.dailyDate, conn.daily] = [date, new Map()];
    const ids = conn.daily;
    const list = el("ul.deals");
    const node = el("section.daily", {},
      el("h1", {}, "Today's deals ", el("small", {}, date)),
      el("p.muted", { "data-intro": "" }, "Every game has four tiers each day: easy, medium, hard and expert, each its own deal with one ranked attempt and its own leaderboard; everyone plays the same deals. ",
        el("strong", {}, "Medium is the daily"), " (the game of the day). Tiers of past days are on the ",
        el("a", { href: "#/calendar" }, "Calendar"), ". New deals at 00:00 UTC."),
      list);
    const screen = { daily: true, load: () => this.openDaily() };
    if (!refresh) this.show(node, screen);
    let tiers;
    try {
      tiers = await this.todayTiers();
    } catch (e) {
      tiers = e; // the daily games are still listed; the tiers say why they are missing
    }
    const rows = await Promise.all(conn.variants.map(async (v) => {
      const daily = tiers instanceof Map && tiers.get(v) && tiers.get(v).get(DAILY_TIER);
      let gameId = ids.get(v);
      try {
        if (!gameId && daily && ["playing", "won", "lost"].includes(daily.state)) {
          // Started elsewhere (another device): `daily.start` answers the game as it is.
          const g = await conn.request({ type: "daily.start", variant: v });
          if (g.date === conn.dailyDate) ids.set(v, g.game_id);
          return [v, g];
        }
        if (!gameId) return [v, null];
        return [v, await conn.request({ type: "game.get", game_id: gameId })];
      } catch (e) {
        if (e.code === "not_found") return [v, null];
        return [v, e];
      }
    }));
    if (location.hash !== at) return;
    if (refresh && (!this.screen || !this.screen.daily)) return; // another screen meanwhile
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
        // The time as the game's clock shows it: hint penalties included.
        status = `Playing · ${g.view.moves} moves · ${clock(g.elapsed_ms + (g.hints || 0) * (g.hint_penalty_ms || 0))}`;
        action = "Resume"; href = `#/game/${encodeURIComponent(g.game_id)}`;
      }
      const state = g === null ? "new" : g instanceof Error ? "error" : g.finished ? "done" : "playing";
      list.append(el("li.deal", { "data-variant": v, "data-state": state },
        el("div", {}, el("h2", {}, title(v)), el("p.muted.goal", {}, variantInfo(v).goal),
          el("p.muted", {}, el("span.sr-only", {}, "The daily: "), status),
          this.tierList(v, tiers, href)),
        el("div.actions", {},
          el("a.button" + (state === "done" ? "" : ".primary"), { href }, action),
          el("a.button", { href: `#/boards/${v}` }, "Leaderboard"),
          el("a.button", { href: `#/rules/${v}` }, "Rules"))));
    }
    if (refresh) {
      // Drawn again under the reader: the link that had the focus keeps it.
      const had = this.main.contains(document.activeElement) && document.activeElement.getAttribute("href");
      this.main.replaceChildren(node);
      const again = had && [...node.querySelectorAll("a[href]")].find((a) => a.getAttribute("href") === had);
      if (again) again.focus();
    }
  }

  /** A variant's four tiers of today: each with the player's state, as a link to play it
   * (`#/play/VARIANT/TIER`) while it can be started or resumed; the daily's to `dailyHref`. */
  tierList(v, tiers, dailyHref) {
    if (!(tiers instanceof Map)) return el("p.error", {}, `Tiers: ${describe(tiers)}`);
    const mine = tiers.get(v);
    if (!mine) return null;
    const items = [...mine.values()].map((c) => {
      const word = DAY_STATE[c.state] || c.state;
      const label = [tierName(c.tier), el("small", { "data-tier-state": "" }, ` · ${word}`)];
      const attrs = { "data-tier": c.tier, "data-state": c.state };
      const href = c.tier === DAILY_TIER ? dailyHref : `#/play/${v}/${c.tier}`;
      const open = ["not_played", "playing", "won", "lost"].includes(c.state);
      return el("li", attrs, open
        ? el("a.tier", { href, "aria-label": `${title(v)} ${tierName(c.tier)}: ${word}` }, ...label)
        : el("span.tier", {}, ...label));
    });
    return el("ul.daytiers", { "aria-label": `${title(v)} tiers today` }, ...items);
  }
}

/** A day tier's state in words (the server's `state`, docs/protocol.md §15). */
const DAY_STATE = {
  not_played: "not started", playing: "playing", won: "won", lost: "lost",
  absent: "no deal today", pending: "being prepared: try again in a minute", upcoming: "to come",
};

initSettings();
const app = new App();
window.solitaire = app; // for the browser tests and the curious
if (!storedToken()) document.getElementById("loading").textContent = "Connecting…";
app.start();
