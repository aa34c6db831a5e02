// The board: draws a view from the server and turns clicks, drags and keys into move text in
// the engine's notation (docs/engine.md). Whether a move is legal is the server's answer.
// Cards that a move's events say moved glide from their old place to the new one (not when
// the reader asked for reduced motion).

import { backCard, emptySlot, faceCard, suitMark } from "./cards.js";
import { el, variantInfo } from "./ui.js";

const GLIDE_MS = 220;

/** Whether the reader asked for reduced motion: then nothing moves by itself. */
export function reducedMotion() {
  return !!(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
}

/** The view a move's `changes` leave (docs/protocol.md, "Following a game"): a value replaces
 * the view's; a map for a list sets entries by index, after cutting or extending the list to
 * its `length`. Plain data edits: no rule of any game is known here. */
export function applyChanges(view, changes) {
  const out = { ...view };
  for (const [key, value] of Object.entries(changes)) {
    const old = out[key];
    if (Array.isArray(old) && value !== null && typeof value === "object" && !Array.isArray(value)) {
      const items = old.slice(0, typeof value.length === "number" ? value.length : old.length);
      while (typeof value.length === "number" && items.length < value.length) items.push(null);
      for (const [k, v] of Object.entries(value)) if (k !== "length") items[Number(k)] = v;
      out[key] = items;
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** Positions of Tri Peaks' 28 cards: [x, row] in card widths / half card heights. */
const PEAK_XY = (() => {
  const xy = [];
  for (let k = 0; k < 3; k++) xy.push([1.5 + 3 * k, 0]);
  for (let k = 0; k < 3; k++) xy.push([1 + 3 * k, 1], [2 + 3 * k, 1]);
  for (let i = 0; i < 9; i++) xy.push([0.5 + i, 2]);
  for (let i = 0; i < 10; i++) xy.push([i, 3]);
  return xy;
})();

/** How a variant's table is laid out: "pairing", "tripeaks" or "tableau" (the server says). */
export function family(variant) {
  return variantInfo(variant).family;
}

export class Board {
  /** `onMove(text)` is called with each move the player makes; it returns a promise. */
  constructor(onMove) {
    this.onMove = onMove;
    this.node = el("div.board", { role: "group", "aria-label": "Game board" });
    this.node.addEventListener("keydown", (e) => this.key(e));
    this.view = null;
    this.sel = null;
    this.hint = null;
    this.locked = false;
    this.drag = null;
  }

  /** Draw `view`; `moved`: the events of the move that led to it, to animate. */
  set(view, { locked = false, moved = null } = {}) {
    const origins = moved && this.view && !reducedMotion() ? this.origins(moved) : [];
    this.view = view;
    this.locked = locked;
    this.sel = null;
    this.hint = null;
    this.render();
    this.glide(origins);
  }

  // -- animation ---------------------------------------------------------------------------

  /** A place named by the events (`3`, `w`, `f`, `s`), or a card in it. */
  place(name) {
    return this.node.querySelector(`[data-place="${name}"]`);
  }

  cardAt(place, card) {
    const box = this.place(place);
    if (!box) return null;
    if (box.dataset.card === card) return box;
    const all = box.querySelectorAll(`[data-card="${card}"]`);
    return all.length ? all[all.length - 1] : null;
  }

  /** Where each moved card was before the move (the stock for a drawn one). */
  origins(events) {
    const out = [];
    for (const e of events) {
      if (e.type !== "move") continue;
      for (const card of e.cards) {
        const from = this.cardAt(e.from, card) || this.place(e.from);
        if (from) out.push({ card, to: e.to, rect: from.getBoundingClientRect() });
      }
    }
    return out;
  }

  /** Each moved card glides from where it was; one that left the table (a removed pair)
   * flies to its place as a copy. */
  glide(origins) {
    for (const o of origins) {
      const node = this.cardAt(o.to, o.card);
      const target = node || this.place(o.to);
      if (!target) continue;
      const r = target.getBoundingClientRect();
      const dx = o.rect.left - r.left, dy = o.rect.top - r.top;
      if (node) {
        if (dx || dy) {
          node.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }],
            { duration: GLIDE_MS, easing: "ease-out" });
        }
        continue;
      }
      const ghost = faceCard(o.card, false, "ghost");
      ghost.style.cssText = `position:fixed;left:${o.rect.left}px;top:${o.rect.top}px;margin:0;z-index:15;pointer-events:none`;
      ghost.setAttribute("aria-hidden", "true");
      delete ghost.dataset.card; // a picture in flight, not a card on the table
      document.body.append(ghost);
      const fly = ghost.animate([{ transform: "none", opacity: 1 }, { transform: `translate(${-dx}px, ${-dy}px) scale(.6)`, opacity: 0 }],
        { duration: GLIDE_MS + 80, easing: "ease-in" });
      fly.onfinish = () => ghost.remove();
      fly.oncancel = () => ghost.remove();
    }
  }

  /** Highlight the places a hinted move names. */
  showHint(move) {
    this.hint = move;
    this.render();
  }

  /** An illegal move: the selected cards shake and return where they were. */
  snapBack() {
    const moved = [...this.node.querySelectorAll(".selected, .dragging")];
    this.sel = null;
    this.render();
    for (const node of moved) {
      const again = this.node.querySelector(`[data-key="${node.dataset.key}"]`);
      if (again) {
        again.classList.add("snap");
        again.addEventListener("animationend", () => again.classList.remove("snap"), { once: true });
      }
    }
  }

  render() {
    const focused = document.activeElement && this.node.contains(document.activeElement)
      ? document.activeElement.dataset.key : null;
    this.node.replaceChildren();
    if (!this.view) return;
    const fam = family(this.view.variant);
    this.node.className = `board ${fam} v-${this.view.variant}`;
    if (fam === "pairing") this.renderPairing();
    else if (fam === "tripeaks") this.renderPeaks();
    else this.renderTableau();
    this.decorate();
    if (focused) {
      const again = this.node.querySelector(`[data-key="${focused}"]`);
      if (again) again.focus();
    }
  }

  // -- drawing ---------------------------------------------------------------------------

  renderPairing() {
    const v = this.view;
    const piles = el("div.piles", { style: `--cols:${Math.min(12, v.piles.length)}` });
    v.piles.forEach((cards, i) => {
      const n = i + 1;
      const pile = el("div.pile", { "data-pile": n, "data-place": n, "aria-label": `pile ${n}` });
      if (!cards.length) pile.append(this.slot(emptySlot(`pile ${n}, empty`), { pile: n }));
      cards.forEach((c, k) => {
        const top = k === cards.length - 1;
        const card = faceCard(c, top && !this.locked);
        if (top) this.source(card, { pile: n, key: `p${n}`, label: `pile ${n}` });
        pile.append(card);
      });
      piles.append(pile);
    });
    // The removed cards are out of the game: a count, not a card back that looks like a stock.
    const info = el("div.tray", {},
      el("div.discard", { "data-place": "f", role: "img", "aria-label": `${v.discard} cards removed` },
        el("div.removed", {}, el("strong", {}, String(v.discard)), el("span", {}, "removed"))));
    this.node.append(info, piles);
  }

  renderPeaks() {
    const v = this.view;
    const peaks = el("div.peaks");
    v.tableau.forEach((c, i) => {
      if (c === null) return;
      const pos = i + 1;
      const [x, row] = PEAK_XY[i];
      const card = c === "??" ? backCard(false) : faceCard(c, !this.locked);
      card.style.setProperty("--x", x);
      card.style.setProperty("--row", row);
      card.classList.add("peak");
      card.dataset.place = pos;
      if (c !== "??") this.source(card, { pos, key: `t${pos}`, label: `position ${pos}` });
      peaks.append(card);
    });
    const stock = v.stock
      ? backCard(!this.locked, `stock, ${v.stock} cards: draw`)
      : emptySlot("stock, empty", !this.locked);
    this.mark(stock, { stock: "", key: "stock" });
    const top = v.foundation[v.foundation.length - 1];
    const found = top ? faceCard(top, false) : emptySlot("foundation, empty");
    this.target(found, { found: "", key: "found" });
    this.node.append(peaks, el("div.tray", {},
      el("div.stock", { "data-place": "s" }, stock, el("span.count", {}, `${v.stock} in stock`)),
      el("div.foundation", { "data-place": "f" }, found, el("span.count", {}, "foundation"))));
  }

  renderTableau() {
    const v = this.view;
    const waste = Array.isArray(v.waste); // the view has a waste where the variant has one
    const does = variantInfo(v.variant).stock || "draw";
    const stock = v.stock
      ? backCard(!this.locked, `stock, ${v.stock} cards: ${does}`)
      : emptySlot(waste ? "stock, empty: turn the waste over" : "stock, empty", !this.locked);
    this.mark(stock, { stock: "", key: "stock" });
    const tray = el("div.tray", {}, el("div.stock", { "data-place": "s" }, stock, el("span.count", {}, `${v.stock}`)));
    if (waste) {
      const pile = el("div.waste", { "aria-label": "waste", "data-place": "w" });
      const shown = v.waste.slice(-3);
      if (!shown.length) pile.append(emptySlot("waste, empty"));
      shown.forEach((c, k) => {
        const top = k === shown.length - 1;
        const card = faceCard(c, top && !this.locked);
        if (top) this.source(card, { waste: "", key: "waste", label: "waste" });
        pile.append(card);
      });
      tray.append(pile);
    }
    const founds = el("div.foundations", { "aria-label": "foundations", "data-place": "f" });
    // The suit each foundation takes, where the server says foundations have suits.
    const suits = variantInfo(v.variant).foundation_suits || "";
    v.foundations.forEach((f, j) => {
      const top = f[f.length - 1];
      const suit = suits[j];
      const node = top
        ? faceCard(top, !this.locked, "found")
        : emptySlot(suit ? `foundation ${j + 1}, empty: ${suitMark(suit).name}` : `foundation ${j + 1}, empty`, !this.locked, suit);
      this.target(node, { found: j + 1, key: `f${j + 1}` });
      if (top && variantInfo(v.variant).foundation_back) node.draggable = !this.locked;
      founds.append(node);
    });
    tray.append(founds);
    const piles = el("div.piles", { style: `--cols:${v.piles.length}` });
    v.piles.forEach((p, i) => {
      const n = i + 1;
      const pile = el("div.pile", { "data-pile": n, "data-place": n, "aria-label": `pile ${n}` });
      for (let d = 0; d < p.down; d++) pile.append(backCard(false));
      if (!p.down && !p.up.length) {
        pile.append(this.target(emptySlot(`pile ${n}, empty`, !this.locked), { pile: n, count: 0, key: `p${n}e` }));
      }
      p.up.forEach((c, k) => {
        const count = p.up.length - k;
        const card = faceCard(c, !this.locked);
        this.source(card, { pile: n, count, key: `p${n}c${count}`, label: `pile ${n}` });
        pile.append(card);
      });
      piles.append(pile);
    });
    this.node.append(tray, piles);
  }

  /** Data attributes and the click handler of a place. */
  mark(node, data) {
    for (const [k, v] of Object.entries(data)) {
      if (k !== "label") node.dataset[k] = v;
    }
    if (!this.locked) node.addEventListener("click", () => this.click(node));
    return node;
  }

  /** A card that can be picked up (clicked, dragged) and is also a drop target. */
  source(node, data) {
    this.mark(node, data);
    node.draggable = !this.locked;
    this.dropzone(node);
    node.addEventListener("dragstart", (e) => {
      this.sel = null;
      this.pick(node, true);
      node.classList.add("dragging");
      e.dataTransfer.setData("text/plain", node.dataset.key);
      e.dataTransfer.effectAllowed = "move";
    });
    node.addEventListener("dragend", () => node.classList.remove("dragging"));
    return node;
  }

  target(node, data) {
    this.mark(node, data);
    this.dropzone(node);
    if (data.found !== undefined) {
      node.addEventListener("dragstart", (e) => {
        this.sel = null;
        this.pick(node, true);
        e.dataTransfer.setData("text/plain", node.dataset.key);
      });
    }
    return node;
  }

  slot(node, data) {
    this.mark(node, data);
    return node;
  }

  dropzone(node) {
    node.addEventListener("dragover", (e) => { e.preventDefault(); node.classList.add("over"); });
    node.addEventListener("dragleave", () => node.classList.remove("over"));
    node.addEventListener("drop", (e) => {
      e.preventDefault();
      node.classList.remove("over");
      if (this.sel) this.click(node);
    });
  }

  /** Selection and hint highlights. */
  decorate() {
    if (this.sel) {
      for (const node of this.node.querySelectorAll("[data-key]")) {
        if (this.isSelected(node)) {
          node.classList.add("selected");
          node.setAttribute("aria-pressed", "true");
        }
      }
    }
    if (this.hint) {
      for (const node of this.hinted(this.hint)) node.classList.add("hinted");
    }
  }

  isSelected(node) {
    const s = this.sel, d = node.dataset;
    if (s.kind === "pile") return d.pile == s.pile && d.count !== undefined && +d.count <= s.count && +d.count > 0;
    if (s.kind === "pair") return d.pile == s.pile && d.key === `p${s.pile}`;
    if (s.kind === "waste") return d.waste !== undefined;
    if (s.kind === "peak") return d.pos == s.pos;
    if (s.kind === "found") return d.found == s.found;
    return false;
  }

  hinted(move) {
    const out = [];
    const q = (sel) => { const n = this.node.querySelector(sel); if (n) out.push(n); };
    const [a, b, count] = move.split(" ");
    const tokens = [a, b].filter(Boolean);
    for (const t of tokens) {
      if (t === "d") q("[data-stock]");
      else if (t === "w") q("[data-waste]");
      else if (t === "f") q("[data-found]");
      else if (t.startsWith("f")) q(`[data-found][data-card="${t.slice(1)}"]`);
      else if (family(this.view.variant) === "tripeaks") q(`[data-pos="${t}"]`);
      else if (t === a && count) q(`[data-pile="${t}"][data-count="${count}"]`);
      else {
        const cards = this.node.querySelectorAll(`.pile[data-pile="${t}"] .card`);
        if (cards.length) out.push(cards[cards.length - 1]);
      }
    }
    return out;
  }

  // -- input -----------------------------------------------------------------------------

  pick(node, fromDrag = false) {
    const d = node.dataset;
    const fam = family(this.view.variant);
    if (fam === "pairing") this.sel = { kind: "pair", pile: +d.pile };
    else if (fam === "tripeaks") this.sel = d.pos ? { kind: "peak", pos: +d.pos } : null;
    else if (d.waste !== undefined) this.sel = { kind: "waste" };
    else if (d.found !== undefined && d.card) this.sel = { kind: "found", found: +d.found, card: d.card };
    else if (d.pile !== undefined && +d.count > 0) this.sel = { kind: "pile", pile: +d.pile, count: +d.count };
    if (!fromDrag) this.render();
  }

  clear() {
    this.sel = null;
    this.render();
  }

  play(text) {
    if (this.locked) return;
    this.onMove(text);
  }

  click(node) {
    if (this.locked || !this.view) return;
    const d = node.dataset;
    const fam = family(this.view.variant);
    if (d.stock !== undefined) return this.play("d");
    if (fam === "tripeaks") {
      if (d.pos) return this.play(d.pos);
      if (d.found !== undefined && this.sel) return this.play(String(this.sel.pos));
      return;
    }
    if (fam === "pairing") {
      if (d.pile === undefined || d.card === undefined) return;
      const pile = +d.pile;
      if (!this.sel) return this.pick(node);
      if (this.sel.pile === pile) return this.clear();
      const [x, y] = [this.sel.pile, pile].sort((p, q) => p - q);
      return this.play(`${x} ${y}`);
    }
    const s = this.sel;
    if (d.found !== undefined) {
      if (s && s.kind === "pile" && s.count === 1) return this.play(`${s.pile} f`);
      if (s && s.kind === "waste") return this.play("w f");
      if (s && s.kind === "found" && s.found === +d.found) return this.clear();
      if (d.card && variantInfo(this.view.variant).foundation_back) return this.pick(node);
      if (s) return this.clear();
      return;
    }
    if (d.waste !== undefined) {
      if (s && s.kind === "waste") return this.play("w f");
      return this.pick(node);
    }
    if (d.pile !== undefined) {
      const pile = +d.pile, count = +d.count;
      if (!s) return count > 0 ? this.pick(node) : undefined;
      if (s.kind === "pile" && s.pile === pile) {
        if (count === s.count && count === 1) return this.play(`${pile} f`);
        if (count === s.count || count === 0) return this.clear();
        return this.pick(node);
      }
      if (s.kind === "pile") return this.play(`${s.pile} ${pile} ${s.count}`);
      if (s.kind === "waste") return this.play(`w ${pile}`);
      if (s.kind === "found") return this.play(`f${s.card} ${pile}`);
    }
  }

  /** Arrow keys move the focus to the nearest card that way; Escape drops the selection. */
  key(e) {
    if (e.key === "Escape") { this.clear(); return; }
    const dirs = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const dir = dirs[e.key];
    if (!dir) return;
    const from = document.activeElement;
    if (!from || !this.node.contains(from)) return;
    e.preventDefault();
    const at = center(from);
    let best = null, bestScore = Infinity;
    for (const node of this.node.querySelectorAll("button")) {
      if (node === from) continue;
      const c = center(node);
      const dx = c.x - at.x, dy = c.y - at.y;
      const along = dx * dir[0] + dy * dir[1];
      if (along <= 1) continue;
      const across = Math.abs(dx * dir[1]) + Math.abs(dy * dir[0]);
      const score = along + 2 * across;
      if (score < bestScore) { bestScore = score; best = node; }
    }
    if (best) best.focus();
  }
}

function center(node) {
  const r = node.getBoundingClientRect();
  return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
}
