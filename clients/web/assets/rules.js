// The rules page (#/rules/VARIANT) and the rules dialog of a game, from the server's /rules.json.

import { el, title } from "./ui.js";

/** One variant's rules, as the server wrote them. */
export function rulesSummary(doc) {
  return el("pre.rulestext", {}, doc ? doc.text : "No rules for this variant.");
}

/** The rules screen: a tab per variant, then the chosen variant's rules. */
export function rulesPage(rules, variants, v) {
  const pick = el("nav.tabs", { "aria-label": "Variants" }, variants.map((x) =>
    el("a", { href: `#/rules/${x}`, "aria-current": x === v ? "page" : "false" }, title(x))));
  const body = rulesSummary(rules[v]);
  body.dataset.rules = v;
  return el("section.rules", {}, el("h1", {}, "Rules"), pick, body);
}
