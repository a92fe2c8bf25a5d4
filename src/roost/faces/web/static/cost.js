// What sessions cost, as the page shows it: a session's spend beside its name, the sum of a
// folder's and a node's sessions beside their rollups, a budget that holds a session with the
// button that lifts it, and the Cost dialog: what the last two weeks cost, day by day, in a
// small chart (GET /usage?by=day, or every node's with GET /swarm/usage in a swarm).
//
// A session's spend and budget are fields of its record (`spend`, `budget`), which the change
// stream keeps current, so the rows cost no request; the chart reads the ledger when opened.
// Sums are per currency and never mix two; a turn whose price is unknown is said, never guessed.

import { ApiError, get, post } from "./api.js";

const HELD = { exceeded: "over budget", warning: "near budget" };
const DAYS = 14;

// "1.70 USD", "1.70 USD + unknown", "unknown", or "" when nothing is known to have been spent.
export function costText(cost, unpriced = 0) {
  const known = Object.entries(cost || {})
    .map(([currency, amount]) => `${amount.toFixed(2)} ${currency}`)
    .join(", ");
  if (!unpriced) return known;
  return known ? `${known} + unknown` : "unknown";
}

// The spend of `records` summed: cost per currency, turns, and turns of unknown cost.
export function summed(records) {
  const total = { cost: {}, turns: 0, unpriced: 0 };
  for (const record of records) {
    const spend = record && record.spend;
    if (!spend || !spend.turns) continue;
    total.turns += spend.turns;
    total.unpriced += spend.unpriced || 0;
    for (const [currency, amount] of Object.entries(spend.cost || {})) {
      total.cost[currency] = (total.cost[currency] || 0) + amount;
    }
  }
  return total;
}

// A span saying what `records` cost, or null when none of them spent anything.
export function spendView(records, className = "cost") {
  const total = summed(records);
  if (!total.turns) return null;
  const span = document.createElement("span");
  span.className = className;
  span.textContent = costText(total.cost, total.unpriced);
  span.title = `${total.turns} ${total.turns === 1 ? "turn" : "turns"} counted`;
  return span;
}

// The budget body that lifts what holds `record`: its scope and what the scope is about.
function which(record) {
  const budget = record.budget;
  if (budget.scope === "session") return { scope: "session", target: record.session_key };
  if (budget.scope === "folder") return { scope: "folder", target: budget.folder };
  return { scope: "day" };
}

// A session a budget holds or nears: the words, the reason a person reads, and (for a session
// of this node, whose budgets this node holds) the button that lifts it. Null otherwise.
export function budgetView(record, { onLifted = () => {} } = {}) {
  const budget = record && record.budget;
  if (!budget || !(budget.state in HELD)) return null;
  const box = document.createElement("span");
  box.className = "budget";
  box.dataset.state = budget.state;
  box.title = budget.reason || "";
  const words = document.createElement("span");
  words.className = "held";
  words.textContent = HELD[budget.state];
  box.append(words);
  const remote = record.peer_state && record.peer_state !== "local";
  if (!remote) {
    const lift = document.createElement("button");
    lift.type = "button";
    lift.className = "lift";
    lift.textContent = "Lift";
    lift.title = "Let prompts through again until this budget's period ends";
    lift.addEventListener("click", (event) => {
      event.stopPropagation();
      lift.disabled = true;
      post("/budgets/lift", which(record))
        .then(onLifted)
        .catch((error) => {
          lift.disabled = false;
          words.textContent = error instanceof ApiError ? error.message : "could not lift it";
        });
    });
    lift.addEventListener("keydown", (event) => event.stopPropagation());
    box.append(lift);
  }
  return box;
}

// The UTC days of the chart, oldest first, as the ledger names them ("2026-12-07").
export function lastDays(now = Date.now(), count = DAYS) {
  const days = [];
  for (let back = count - 1; back >= 0; back -= 1) {
    days.push(new Date(now - back * 86400000).toISOString().slice(0, 10));
  }
  return days;
}

// Usage rows by day (one node's, or every node's) as [day, {cost, turns, unpriced}] for `days`.
export function byDay(rows, days) {
  const found = new Map(days.map((day) => [day, { cost: {}, turns: 0, unpriced: 0 }]));
  for (const row of rows) {
    const day = found.get(row.day);
    if (!day) continue;
    day.turns += row.turns || 0;
    day.unpriced += row.unpriced || 0;
    for (const [currency, amount] of Object.entries(row.cost || {})) {
      day.cost[currency] = (day.cost[currency] || 0) + amount;
    }
  }
  return [...found.entries()];
}

const SVG = "http://www.w3.org/2000/svg";

// One bar per day, of the currency most spent in; each bar's title says the day and its cost.
export function chart(days) {
  const currencies = new Map();
  for (const [, day] of days) {
    for (const [currency, amount] of Object.entries(day.cost)) {
      currencies.set(currency, (currencies.get(currency) || 0) + amount);
    }
  }
  const currency = [...currencies.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] || null;
  const most = Math.max(0, ...days.map(([, day]) => (currency && day.cost[currency]) || 0));
  const [width, height, gap] = [14, 60, 4];
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "cost-chart");
  svg.setAttribute("viewBox", `0 0 ${days.length * (width + gap)} ${height}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `cost per day over the last ${days.length} days`);
  days.forEach(([name, day], index) => {
    const amount = (currency && day.cost[currency]) || 0;
    const tall = most > 0 ? Math.max(amount > 0 ? 2 : 0, Math.round((amount / most) * height)) : 0;
    const bar = document.createElementNS(SVG, "rect");
    bar.setAttribute("x", String(index * (width + gap)));
    bar.setAttribute("y", String(height - tall));
    bar.setAttribute("width", String(width));
    bar.setAttribute("height", String(tall));
    bar.dataset.day = name;
    if (day.unpriced) bar.dataset.unpriced = String(day.unpriced);
    const title = document.createElementNS(SVG, "title");
    title.textContent = `${name}: ${costText(day.cost, day.unpriced) || "nothing spent"}`;
    bar.append(title);
    svg.append(bar);
  });
  return svg;
}

// The Cost dialog: opened from the header, it reads the ledger and draws the chart and total.
export class CostDialog {
  constructor(dialog, { swarm = () => false } = {}) {
    this.dialog = dialog;
    this.swarm = swarm;
    dialog.querySelector(".close").addEventListener("click", () => dialog.close());
  }

  async open() {
    const body = this.dialog.querySelector(".cost-body");
    const said = this.dialog.querySelector(".cost-error");
    said.textContent = "";
    if (!this.dialog.open) this.dialog.showModal();
    const days = lastDays();
    const route = this.swarm() ? "/swarm/usage" : "/usage";
    try {
      const doc = await get(`${route}?by=day&since=${DAYS}d`);
      const counted = byDay(doc.rows || [], days);
      const total = summed(counted.map(([, day]) => ({ spend: day })));
      const line = document.createElement("p");
      line.className = "cost-total";
      line.textContent = total.turns
        ? `${costText(total.cost, total.unpriced)} in ${total.turns} ${total.turns === 1 ? "turn" : "turns"}`
        : "Nothing counted in the last two weeks.";
      body.replaceChildren(line, chart(counted));
    } catch (error) {
      said.textContent = error instanceof ApiError ? error.message : "The usage could not be read.";
    }
  }
}
