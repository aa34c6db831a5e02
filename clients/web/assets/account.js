// Accounts on several devices (protocol 7, docs/protocol.md §14): "Sign in with a code" on the
// welcome screen, and the account page that shows a one-time code for another device (or the
// terminal: `solitaire signin CODE`). No token is ever shown or put in an address.

import { describe } from "./net.js";
import { clock, el, toast } from "./ui.js";

/** The welcome screen's second way in: a code shown by a device already signed in. */
export function signinWithCode(conn) {
  const input = el("input", {
    name: "code", "aria-label": "Sign-in code", autocomplete: "one-time-code", placeholder: "XXXX-XXXX",
    maxlength: 32, autocapitalize: "characters", spellcheck: "false", required: true,
  });
  const error = el("p.error", { role: "alert" });
  return el("form.panel.signin", {
    onsubmit: async (e) => {
      e.preventDefault();
      error.textContent = "";
      try {
        await conn.redeem(input.value);
      } catch (err) {
        error.textContent = describe(err);
      }
    },
  },
    el("h2", {}, "Sign in with a code"),
    el("p.muted", {}, "Playing already on another device or in the terminal? Show a sign-in code there (Account, or solitaire signin-code) and type it here."),
    el("label", {}, "Code ", input), el("button", { type: "submit", "data-action": "redeem" }, "Sign in"), error);
}

/** The account page (#/account): who this is, and a sign-in code for another device. */
export class AccountScreen {
  constructor(app) {
    this.app = app;
    this.conn = app.conn;
    this.code = null;
    this.node = el("section.account", { "aria-label": "Account" });
    this.timer = setInterval(() => this.tick(), 1000);
  }

  async load() {
    this.render();
  }

  render() {
    const c = this.code;
    const shown = c
      ? el("div.signincode", {},
        el("p", {}, "Type this code on the other device:"),
        el("p.big.code", { "data-signin-code": "" }, c.code),
        el("p.muted", { "data-signin-expires": "" }, ""),
        el("p.muted", {}, "It works once. In the terminal: ", el("code", {}, `solitaire signin ${c.code}`)))
      : null;
    this.node.replaceChildren(
      el("h1", {}, "Account"),
      el("div.panel", {},
        el("p", {}, "Signed in as ", el("strong", {}, this.conn.player.name), "."),
        el("p.muted", {}, "To play as the same player on another device or in the terminal, show a one-time sign-in code and type it there. It lasts 5 minutes."),
        el("div.actions", {}, el("button.primary", { onclick: () => this.show(), "data-action": "signin-code" }, "Show a sign-in code")),
        shown));
    this.tick();
  }

  async show() {
    try {
      this.code = await this.conn.request({ type: "signin.code" });
      this.render();
    } catch (e) {
      toast(describe(e), "error");
    }
  }

  tick() {
    const node = this.node.querySelector("[data-signin-expires]");
    if (!node || !this.code) return;
    const left = this.code.expires_at - this.conn.serverNow();
    node.textContent = left > 0 ? `Expires in ${clock(left)}.` : "Expired: show a new code.";
  }

  destroy() {
    clearInterval(this.timer);
  }
}
