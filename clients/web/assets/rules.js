// The rules page (#/rules/VARIANT) and the rules dialog of a game, from the server's
// /rules.json: each variant's rules written for people (`about`), how to play by clicking,
// tapping, dragging and keys (`play`), what undo and hints do, and small pictures of legal
// plays. The server writes all of it (engine/guide.py); the page only lays it out.

import { faceCard } from "./cards.js";
import { el, title } from "./ui.js";

/** A picture: cards side by side with a sign between them, or overlapped as a pile. */
function picture(p) {
  const cards = p.cards.map((c) => {
    const node = faceCard(c, false, "mini");
    delete node.dataset.card; // an example, not a card on the table
    return node;
  });
  const shown = p.layout === "pile"
    ? el("div.pile.mini", {}, cards)
    : el("div.row", {}, cards.flatMap((c, i) => (i ? [el("span.sign", {}, p.sign), c] : [c])));
  return el("figure.picture", {}, shown, el("figcaption", {}, p.caption));
}

/** One variant's rules, as the server wrote them for people. */
export function rulesSummary(doc) {
  if (!doc) return el("p", {}, "No rules for this variant.");
  return el("div.rulesbody", {},
    el("h3", {}, "The game"),
    doc.about.map((s) => el("p", {}, s)),
    doc.pictures.length ? el("div.pictures", {}, doc.pictures.map(picture)) : null,
    el("h3", {}, "How to play"),
    el("ul", {}, doc.play.map((s) => el("li", {}, s)), el("li", {}, doc.undo), el("li", {}, doc.hint)));
}

/** The rules screen: a tab per variant, then the chosen variant's rules. */
export function rulesPage(rules, variants, v) {
  const pick = el("nav.tabs", { "aria-label": "Variants" }, variants.map((x) =>
    el("a", { href: `#/rules/${x}`, "aria-current": x === v ? "page" : "false" }, title(x))));
  const doc = rules[v];
  const body = el("article.rulestext", { "data-rules": v, "aria-labelledby": "rules-title" },
    el("h2", { id: "rules-title" }, doc ? doc.title : title(v)),
    rulesSummary(doc));
  return el("section.rules", {}, el("h1", {}, "Rules"), pick, body);
}
