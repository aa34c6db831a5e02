// Rematch offers (protocol 7, docs/protocol.md §14): another racer of a race that is over asks
// for a rematch; Accept joins the room by its code, Decline tells them. The offer goes away at
// its `expires_at` (the server then closes a room nobody joined).

import { describe } from "./net.js";
import { el, title, toast } from "./ui.js";

/** Show a `race.rematch_offer` push until it is answered or expires. */
export function showRematchOffer(app, msg) {
  for (const old of document.querySelectorAll(`[data-rematch-offer="${msg.race_id}"]`)) old.remove();
  const box = el("div.offer", { role: "alertdialog", "aria-label": "Rematch", "data-rematch-offer": msg.race_id });
  const close = () => { clearTimeout(timer); box.remove(); };
  const timer = setTimeout(close, Math.max(0, msg.expires_at - app.conn.serverNow()));
  box.append(
    el("p", {}, `${msg.name} asks for a rematch (${title(msg.variant)}).`),
    el("div.actions", {},
      el("button.primary", {
        "data-action": "accept-rematch",
        onclick: async () => {
          close();
          // Joined first: refused (still racing another race, of which this offer's race was
          // left behind), the race being played stays on the page, and the refusal is said.
          const r = await app.race.act({ type: "race.join", code: msg.code });
          if (!r) return;
          if (app.race.game) app.race.leaveRace();
          location.hash = "#/race";
          await app.race.update(r.race);
        },
      }, "Accept"),
      el("button", {
        "data-action": "decline-rematch",
        onclick: async () => {
          close();
          try {
            await app.conn.request({ type: "race.decline", race_id: msg.race_id });
          } catch (e) {
            toast(describe(e), "error");
          }
        },
      }, "Decline")));
  document.getElementById("toasts").before(box);
}

/** A `race.rematch_declined` push, in words. */
export function rematchDeclined(msg) {
  toast(`${msg.name} declined the rematch.`);
}
