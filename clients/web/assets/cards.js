// Cards drawn with HTML and CSS: a face shows rank and suit, a back shows nothing of the card.
// A face carries its suit as a class (`suit-C`...) for the four-colour deck (settings.js), and a
// card that is not a button is an image to assistive technology (its label is its name).

const SUITS = { C: ["♣", "clubs"], D: ["♦", "diamonds"], H: ["♥", "hearts"], S: ["♠", "spades"] };
const RANKS = { A: "ace", J: "jack", Q: "queen", K: "king" };

/** "10H" -> {rank: "10", suit: "H"}. */
export function parseCard(code) {
  return { rank: code.slice(0, -1), suit: code.slice(-1) };
}

/** "10H" -> "10 of hearts" (for screen readers). */
export function cardName(code) {
  const { rank, suit } = parseCard(code);
  return `${RANKS[rank] || rank} of ${SUITS[suit][1]}`;
}

/** A face-up card; a <button> when `interactive` so it can be focused and played by keyboard. */
export function faceCard(code, interactive = false, extra = "") {
  // "??" is a face-down card wherever a view may show one.
  if (code === "??") return backCard(false);
  const { rank, suit } = parseCard(code);
  const [glyph] = SUITS[suit];
  const node = document.createElement(interactive ? "button" : "div");
  node.className = `card face ${suit === "D" || suit === "H" ? "red" : "black"} suit-${suit} ${extra}`.trim();
  node.dataset.card = code;
  node.setAttribute("aria-label", cardName(code));
  if (interactive) node.type = "button";
  else node.setAttribute("role", "img");
  node.innerHTML = `<span class="corner">${rank}${glyph}</span><span class="pip">${glyph}</span>`;
  return node;
}

/** A face-down card: a back, with nothing of the card's identity. */
export function backCard(interactive = false, label = "face-down card") {
  const node = document.createElement(interactive ? "button" : "div");
  node.className = "card back";
  node.setAttribute("aria-label", label);
  if (interactive) node.type = "button";
  else node.setAttribute("role", "img");
  return node;
}

/** "H" -> {glyph: "♥", name: "hearts", red: true}. */
export function suitMark(suit) {
  const [glyph, name] = SUITS[suit];
  return { glyph, name, red: suit === "D" || suit === "H" };
}

/** An empty place (an emptied pile, an empty foundation); `suit` marks a foundation that
 * takes one suit (the server's `foundation_suits`). */
export function emptySlot(label, interactive = false, suit = "") {
  const node = document.createElement(interactive ? "button" : "div");
  node.className = "card slot";
  node.setAttribute("aria-label", label);
  if (interactive) node.type = "button";
  else node.setAttribute("role", "img");
  if (suit) {
    const mark = suitMark(suit);
    node.dataset.suit = suit;
    node.classList.add(mark.red ? "red" : "black");
    node.innerHTML = `<span class="mark" aria-hidden="true">${mark.glyph}</span>`;
  }
  return node;
}
