// The WebSocket session: hello with the stored token, request/reply by id, pushes as events,
// reconnection with exponential backoff. The page speaks the newest protocol only (9): the
// variants are described by `welcome.variant_info`, today's games named by `welcome.daily`
// (game ids are opaque here), and the board is the server's view, kept current by the lean
// `moved` replies' `changes` (game.js; a `game.get` only on a gap). Version 7 adds signing in
// with a one-time code (`redeem`), free play and rematches; version 9 the device list.

import { setVariants } from "./ui.js";

export const PROTOCOL_VERSIONS = [10];

/** A name for this browser in the player's device list ("Firefox on Linux"): a label only. */
export function deviceName() {
  const ua = navigator.userAgent;
  const browser = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox" : /Chrom/.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "Browser";
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Windows/.test(ua) ? "Windows" : /Mac OS/.test(ua) ? "macOS" : /Linux/.test(ua) ? "Linux" : "";
  return os ? `${browser} on ${os}` : browser;
}
/** A client without the rules: the server sends moves in card words, each move's changes to
 * the view, safe moves, hint penalties and foundation suits (docs/protocol.md, `hello`). */
export const FEATURES = ["rules_free"];
/** A result the fair-play screen holds (protocol 5, `result.status === "flagged"`), in words. */
export const HELD_FOR_REVIEW = "held for review";
const TOKEN_KEY = "solitaire.token";
const REQUEST_TIMEOUT_MS = 15000;
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 15000;

/** An error reply (`code` from docs/protocol.md §7) or a local failure (`offline`, `timeout`). */
export class ServerError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const DESCRIPTIONS = {
  offline: "Not connected to the server. Reconnecting…",
  timeout: "The server did not answer in time. Try again.",
  rate_limited: "Too many requests: slow down for a moment, then try again.",
  unavailable: "The server is temporarily unavailable. Try again in a moment.",
  internal: "The server hit a problem with that request. Try again.",
  not_started: "The race has not started yet.",
  limit_reached: "You have created as many private rooms as an hour allows: join one, or try again later.",
  game_over: "This game is already over.",
  day_over: "This game's day is over (00:00 UTC): it was closed as it stood and takes no more moves. Start today's game.",
  not_found: "Not found.",
  conflict: "That game changed elsewhere; it has been reloaded.",
  invalid_code: "That code is wrong, used or expired: show a new one on your other device.",
  not_trusted_yet: "This device signed in with a code recently: for its first 7 days it may sign out only devices newer than itself. Do it from an older device.",
  name_taken: "That name, or one that looks like it, is taken: choose another.",
  invalid_name: "Names are 3 to 20 letters, digits, _ or - (and not a reserved name such as admin).",
  unsupported_version: "This page is out of date for the server: reload it.",
  too_large: "That request was too large.",
  bad_request: "The server did not understand that request.",
};

/** A sentence a person understands for an error. */
export function describe(err) {
  if (err instanceof ServerError) {
    if (err.code === "illegal_move") return reasonOf(err.message);
    if (err.code === "limit_reached") return err.message; // says which limit, and for how long
    return DESCRIPTIONS[err.code] || err.message || DESCRIPTIONS.internal;
  }
  return String(err && err.message ? err.message : err);
}

/** The engine's reason from "illegal move '3 7': reason" (shown as is otherwise). */
export function reasonOf(message) {
  const m = /^illegal move '[^']*': (.*)$/s.exec(message || "");
  const text = m ? m[1] : (message || "That move is not allowed.");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function storedToken() {
  return localStorage.getItem(TOKEN_KEY);
}

export class Connection extends EventTarget {
  constructor(url) {
    super();
    this.url = url;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.backoff = BACKOFF_FIRST_MS;
    this.offset = 0; // server clock minus ours
    this.player = null;
    this.variants = [];
    this.online = false;
    this.fatal = false;
    this.retryAfter = null;
    this.everOnline = false;
  }

  /** Open the socket (and keep it open). */
  start() {
    this.connect();
  }

  connect() {
    this.online = false;
    this.status("connecting", this.everOnline ? "Reconnecting to the server…" : "Connecting to the server…");
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (e) {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    ws.onopen = () => this.opened();
    ws.onmessage = (ev) => this.receive(ev.data);
    ws.onclose = (ev) => this.closed(ws, ev);
  }

  async opened() {
    const token = storedToken();
    if (!token) {
      this.status("need-name", "");
      return;
    }
    try {
      this.welcomed(await this.send({ type: "hello", versions: PROTOCOL_VERSIONS, features: FEATURES, token }));
    } catch (e) {
      if (e.code === "not_authenticated") {
        localStorage.removeItem(TOKEN_KEY);
        this.status("need-name", "This server does not know your saved player any more: choose a name.");
      } else if (e.code === "unsupported_version") {
        this.failFatal(e);
      }
    }
  }

  /** Create a player called `name` (the first visit); its token is kept in localStorage. */
  async register(name) {
    const w = await this.send({ type: "hello", versions: PROTOCOL_VERSIONS, features: FEATURES, name });
    if (w.token) localStorage.setItem(TOKEN_KEY, w.token);
    this.welcomed(w);
  }

  /** Sign this browser in as an existing player with a one-time code (protocol 7): the
   * server answers `welcome` with this browser's own token, kept like a new player's. */
  async redeem(code) {
    const w = await this.send({ type: "signin.redeem", versions: PROTOCOL_VERSIONS, features: FEATURES, code: code.trim(), device: deviceName() });
    if (w.token) localStorage.setItem(TOKEN_KEY, w.token);
    this.welcomed(w);
  }

  welcomed(w) {
    this.player = { id: w.player_id, name: w.name };
    this.variants = w.variants;
    this.version = w.version;
    setVariants(w.variant_info);
    // Today's daily games by variant (ids as the server sent them; a `daily.start` adds one).
    this.dailyDate = new Date(w.server_time).toISOString().slice(0, 10);
    // The daily game of each variant is its medium tier; the other tiers are on the calendar.
    const daily = (w.daily || []).filter((d) => !d.tier || d.tier === "medium");
    this.daily = new Map(daily.map((d) => [d.variant, d.game_id]));
    // Today's tiers of every variant with this player's state (protocol 8 `welcome.tiers`):
    // the daily list's first drawing uses them; later ones ask `calendar.get` (app.js).
    this.tiers = w.tiers || null;
    this.tiersFresh = !!w.tiers;
    this.offset = w.server_time - Date.now();
    this.online = true;
    this.everOnline = true;
    this.backoff = BACKOFF_FIRST_MS;
    this.retryAfter = null;
    this.status("online", "");
    this.dispatchEvent(new CustomEvent("welcome", { detail: w }));
  }

  failFatal(e) {
    this.fatal = true;
    this.status("fatal", describe(e));
  }

  closed(ws, ev) {
    if (ws !== this.ws) return;
    this.online = false;
    for (const [, p] of this.pending) p.reject(new ServerError("offline", DESCRIPTIONS.offline));
    this.pending.clear();
    if (this.fatal) return;
    if (ev.code === 4001) { // token.revoke_all or device.revoke from another device: this token is dead
      localStorage.removeItem(TOKEN_KEY);
      this.failFatal(new ServerError("not_authenticated", "This device was signed out (its token was revoked from another device). Reload to start again."));
      return;
    }
    if (ev.code === 1008) {
      this.status("offline", "The server closed the connection: too many requests. Reconnecting…");
    }
    this.scheduleReconnect();
  }

  scheduleReconnect() {
    const base = this.retryAfter != null ? this.retryAfter : this.backoff;
    const delay = Math.round(base * (0.8 + 0.4 * Math.random()));
    this.retryAfter = null;
    this.backoff = Math.min(this.backoff * 2, BACKOFF_MAX_MS);
    const what = this.everOnline ? "Connection lost." : "Cannot reach the server.";
    this.status("offline", `${what} Reconnecting in ${Math.max(1, Math.round(delay / 1000))} s…`);
    setTimeout(() => this.connect(), delay);
  }

  receive(data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch (e) {
      return;
    }
    if (msg.id !== undefined && msg.id !== null && this.pending.has(msg.id)) {
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.type === "error") p.reject(new ServerError(msg.code, msg.message));
      else p.resolve(msg);
      return;
    }
    if (msg.type === "shutdown") {
      this.retryAfter = msg.retry_after_ms;
      this.status("offline", "The server is restarting. Reconnecting shortly…");
    }
    this.dispatchEvent(new CustomEvent("push", { detail: msg }));
  }

  /** Send a request now and wait for its reply (rejects with ServerError). */
  send(msg) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new ServerError("offline", DESCRIPTIONS.offline));
    }
    const id = this.nextId;
    this.nextId = (this.nextId % 2147483647) + 1;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.pending.delete(id)) reject(new ServerError("timeout", DESCRIPTIONS.timeout));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, {
        resolve: (m) => { clearTimeout(timer); resolve(m); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      ws.send(JSON.stringify({ ...msg, id }));
    });
  }

  /** A request once the session is open. */
  request(msg) {
    if (!this.online) return Promise.reject(new ServerError("offline", DESCRIPTIONS.offline));
    return this.send(msg);
  }

  /** The server's clock now, in ms. */
  serverNow() {
    return Date.now() + this.offset;
  }

  /** Today's date (UTC) by the server's clock. */
  today() {
    return new Date(this.serverNow()).toISOString().slice(0, 10);
  }

  status(state, message) {
    this.state = state;
    this.dispatchEvent(new CustomEvent("status", { detail: { state, message } }));
  }
}
