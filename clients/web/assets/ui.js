// Small DOM helpers shared by the screens.

/** An element: el("button.primary", {onclick}, "text", child…). */
export function el(spec, attrs = {}, ...children) {
  const [tag, ...classes] = spec.split(".");
  const node = document.createElement(tag || "div");
  if (classes.length) node.className = classes.join(" ");
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k === "text") node.textContent = v;
    else if (k === "style") node.style.cssText = v; // CSSOM: allowed by the page's CSP
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/** A short message in the corner (errors say what happened and what to do). */
export function toast(message, kind = "info") {
  const box = document.getElementById("toasts");
  const t = el(`div.toast.${kind}`, { role: kind === "error" ? "alert" : "status" }, message);
  box.append(t);
  setTimeout(() => t.remove(), kind === "error" ? 6000 : 3500);
}

/** 83450 -> "1:23" (or "1:02:03"). */
export function clock(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const mm = h ? String(m).padStart(2, "0") : String(m);
  return (h ? `${h}:` : "") + `${mm}:${String(sec).padStart(2, "0")}`;
}

/** 1 -> "1 point", 412 -> "412 points". */
export function points(n) {
  return `${n} point${n === 1 ? "" : "s"}`;
}

export function signed(n) {
  return n > 0 ? `+${n}` : String(n);
}

/** A modal dialog with `content` and buttons [{label, value, primary}]; resolves to a value. */
export function dialog(title, content, buttons = [{ label: "Close", value: null }]) {
  return new Promise((resolve) => {
    const d = el("dialog.dialog", { "aria-label": title });
    const close = (v) => { if (d.open) d.close(); d.remove(); resolve(v); };
    d.addEventListener("dismiss", () => close(null)); // closeDialogs(): the page changed
    d.append(el("h2", {}, title), content,
      el("div.actions", {}, buttons.map((b) =>
        el(`button${b.primary ? ".primary" : ""}`, { onclick: () => close(b.value) }, b.label))));
    d.addEventListener("cancel", (e) => { e.preventDefault(); close(null); });
    document.body.append(d);
    d.showModal();
  });
}

/** Close every open dialog as if cancelled (a route change: a dialog of the page left behind
 * must not stay modal over the next one). */
export function closeDialogs() {
  for (const d of document.querySelectorAll("dialog.dialog")) d.dispatchEvent(new Event("dismiss"));
}

/** The four tiers of a day, easiest first (protocol 8); `medium` is the daily game. */
export const TIERS = ["easy", "medium", "hard", "expert"];
export const DAILY_TIER = "medium";

/** "Easy", "Medium (the daily)". */
export function tierName(tier) {
  const name = tier.charAt(0).toUpperCase() + tier.slice(1);
  return tier === DAILY_TIER ? `${name} (the daily)` : name;
}

/** What a game is, for its header and result: "hard · 2030-06-15", "daily · 2030-06-15",
 * "easy · catch-up of 2030-06-03" (the server's `tier`, `catchup` and `date`). */
export function gameLabel(game) {
  if (!game.date) return "";
  if (game.catchup) return `${game.tier || DAILY_TIER} · catch-up of ${game.date}`;
  if (!game.tier || game.tier === DAILY_TIER) return `daily (medium) · ${game.date}`;
  return `${game.tier} · ${game.date}`;
}

/** The variant descriptors of `welcome.variant_info` (protocol 6) by id: the server's word on
 * titles, goals, scoring and card counts; the page keeps no table of its own. */
const VARIANTS = new Map();

export function setVariants(list) {
  VARIANTS.clear();
  for (const v of list || []) VARIANTS.set(v.id, v);
}

/** The descriptor of a variant (a bare one, named by its id, for a variant the server did not describe). */
export function variantInfo(id) {
  return VARIANTS.get(id) || { id, name: id, title: id, family: "tableau", clear: 0, goal: "", scored: false, may_finish: false, finish: false, undo_counts: true };
}

/** The name to show for a variant ("Tri Peaks"). */
export function title(variant) {
  return variantInfo(variant).name;
}

/** Variants scored by points (Triple Deck) rather than cards cleared. */
export function scoring(variant) {
  return variantInfo(variant).scored;
}

/** Variants the player may end at any time: "Finish" rather than "Resign". */
export function mayFinish(variant) {
  return variantInfo(variant).may_finish;
}
