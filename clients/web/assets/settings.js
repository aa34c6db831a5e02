// Display settings, kept in this browser (localStorage `solitaire.settings`): the theme
// (standard, high contrast, or whatever the device asks for with `prefers-contrast: more`) and
// the deck's colours (two, or four: ♠ black, ♥ red, ♦ blue, ♣ green). They only change how the
// page looks: `data-theme` and `data-deck` on <html>, read by style.css.

import { el } from "./ui.js";

const KEY = "solitaire.settings";
const MORE_CONTRAST = "(prefers-contrast: more)";

export const THEMES = [
  ["auto", "As the device asks", "High contrast when the system asks for more contrast, standard otherwise."],
  ["standard", "Standard", "The green table."],
  ["contrast", "High contrast", "Black table, white panels, stronger outlines and darker suit colours."],
];

export const DECKS = [
  ["two", "Two colours", "♠ ♣ black, ♥ ♦ red."],
  ["four", "Four colours", "♠ black, ♥ red, ♦ blue, ♣ green: no two suits share a colour, which helps with colour blindness."],
];

const DEFAULTS = { theme: "auto", deck: "two" };

/** The stored settings (defaults for anything missing or unreadable). */
export function loadSettings() {
  let stored = {};
  try {
    stored = JSON.parse(localStorage.getItem(KEY) || "{}") || {};
  } catch {
    stored = {};
  }
  const pick = (value, choices, fallback) => (choices.some(([id]) => id === value) ? value : fallback);
  return { theme: pick(stored.theme, THEMES, DEFAULTS.theme), deck: pick(stored.deck, DECKS, DEFAULTS.deck) };
}

export function saveSettings(settings) {
  localStorage.setItem(KEY, JSON.stringify(settings));
  applySettings(settings);
}

/** The theme in effect: "auto" follows the device's contrast preference. */
export function effectiveTheme(theme) {
  if (theme !== "auto") return theme;
  return window.matchMedia && window.matchMedia(MORE_CONTRAST).matches ? "contrast" : "standard";
}

export function applySettings(settings = loadSettings()) {
  const root = document.documentElement;
  root.dataset.theme = effectiveTheme(settings.theme);
  root.dataset.deck = settings.deck;
}

/** Apply the stored settings now and whenever the device's contrast preference changes. */
export function initSettings() {
  applySettings();
  if (window.matchMedia) window.matchMedia(MORE_CONTRAST).addEventListener("change", () => applySettings());
}

function choice(name, options, current, onchange) {
  return el("fieldset.choices", {},
    el("legend", {}, name === "theme" ? "Theme" : "Cards"),
    options.map(([id, label, help]) => {
      const input = el("input", { type: "radio", name, value: id, checked: id === current, "aria-describedby": `${name}-${id}-help`, onchange });
      return el("div.choice", {},
        el("label", {}, input, " ", label),
        el("p.muted", { id: `${name}-${id}-help` }, help));
    }));
}

/** The settings panel (the #/settings screen): changes apply and are kept at once. */
export function settingsPanel() {
  const settings = loadSettings();
  const sample = el("p.sample", { "aria-hidden": "true" },
    ["S", "H", "D", "C"].map((s) => el(`span.suit-${s}`, {}, { S: "♠", H: "♥", D: "♦", C: "♣" }[s])));
  const changed = (e) => {
    settings[e.target.name] = e.target.value;
    saveSettings(settings);
  };
  return el("section.settings", {},
    el("h1", {}, "Settings"),
    el("form.panel", { "aria-label": "Display settings", onsubmit: (e) => e.preventDefault() },
      el("p", {}, "These settings are kept in this browser and apply at once."),
      choice("theme", THEMES, settings.theme, changed),
      choice("deck", DECKS, settings.deck, changed),
      sample));
}
