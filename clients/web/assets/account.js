// Accounts on several devices (protocol 7, docs/protocol.md §14): "Sign in with a code" on the
// welcome screen, and the account page that shows a one-time code for another device (or the
// terminal: `solitaire signin CODE`). No token is ever shown or put in an address. Protocol 9
// (§16): the account page lists the player's devices and signs one out; which ones this
// device may sign out is the server's word (`can_revoke`).

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
    this.devices = null; // the last `devices` reply
    this.node = el("section.account", { "aria-label": "Account" });
    this.timer = setInterval(() => this.tick(), 1000);
    this.onPush = (e) => { if (e.detail.type === "device.signed_in") this.signedIn(e.detail); };
    this.conn.addEventListener("push", this.onPush);
  }

  async load() {
    this.render();
    await this.refresh();
  }

  async refresh() {
    try {
      this.devices = await this.conn.request({ type: "devices" });
      this.render();
    } catch (e) {
      toast(describe(e), "error");
    }
  }

  signedIn(msg) {
    toast(`A new device signed in as you: ${msg.name || "unnamed"}. Not yours? Sign it out below.`);
    this.refresh();
  }

  async revoke(device) {
    try {
      this.devices = await this.conn.request({ type: "device.revoke", device });
      toast("That device was signed out.");
      this.render();
    } catch (e) {
      toast(describe(e), "error");
    }
  }

  devicesPanel() {
    const d = this.devices;
    if (!d) return el("section.panel.devices", { "aria-label": "Your devices" }, el("h2", {}, "Your devices"), el("p.muted", {}, "Loading…"));
    const when = (ms) => new Date(ms).toISOString().slice(0, 16).replace("T", " ") + " UTC";
    const rows = d.devices.map((x) => el("tr", { "data-device": x.device, "data-how": x.how },
      el("td", {}, x.name || (x.how === "original" ? "First device" : "Unnamed device")),
      el("td", {}, x.how === "original" ? "first device" : "with a code"),
      el("td", {}, when(x.signed_in_at)),
      el("td", {}, x.current ? el("strong", {}, "this device")
        : x.can_revoke ? el("button", { "data-action": "revoke", "aria-label": `Sign out ${x.name || x.device}`, onclick: () => this.revoke(x.device) }, "Sign out")
          : "")));
    return el("section.panel.devices", { "aria-label": "Your devices" },
      el("h2", {}, "Your devices"),
      el("table.devices", {},
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Device"), el("th", { scope: "col" }, "Signed in"), el("th", { scope: "col" }, "When"), el("th", { scope: "col" }, el("span.sr-only", {}, "Action")))),
        el("tbody", {}, ...rows)),
      d.trusted_at ? el("p.muted", { "data-trusted-at": "" }, `This device signed in with a code: until ${when(d.trusted_at)} it may sign out only devices newer than itself.`) : null);
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
        shown),
      this.devicesPanel());
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
    this.conn.removeEventListener("push", this.onPush);
  }
}
