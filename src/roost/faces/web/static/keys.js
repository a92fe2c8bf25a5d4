// The key row over a terminal on a phone: the keys a phone keyboard lacks. Esc, Tab, arrows,
// Enter and ^C send their bytes to the active terminal; Ctrl is sticky: it modifies the next
// key, pressed here or typed on the keyboard, then lets go.

const KEYS = [
  { label: "Esc", data: "\x1b" },
  { label: "Tab", data: "\t" },
  { label: "Ctrl", ctrl: true },
  { label: "←", arrow: "D", name: "Left" },
  { label: "↑", arrow: "A", name: "Up" },
  { label: "↓", arrow: "B", name: "Down" },
  { label: "→", arrow: "C", name: "Right" },
  { label: "Enter", data: "\r" },
  { label: "^C", data: "\x03", name: "Ctrl-C" },
];

// Ctrl with one key: letters and @[\]^_ become their control byte, space is NUL.
export function withCtrl(data) {
  if (data.length !== 1) return data;
  if (data === " ") return "\x00";
  const code = data.toUpperCase().charCodeAt(0);
  return code >= 64 && code <= 95 ? String.fromCharCode(code & 31) : data;
}

// An arrow as the program asked for it: application cursor mode (vim, less) or normal.
function arrowBytes(view, letter, ctrl) {
  if (ctrl) return `\x1b[1;5${letter}`;
  return view.term.modes.applicationCursorKeysMode ? `\x1bO${letter}` : `\x1b[${letter}`;
}

export class KeyRow {
  constructor(row, { target }) {
    this.row = row;
    this.target = target; // () => the active TerminalView, or null
    this.ctrl = false;
    this.buttons = KEYS.map((key) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "key";
      button.textContent = key.label;
      button.dataset.key = key.name || key.label;
      button.setAttribute("aria-label", key.name || key.label);
      if (key.ctrl) button.setAttribute("aria-pressed", "false");
      // Keep the focus (and the phone's keyboard) on the terminal.
      button.addEventListener("mousedown", (event) => event.preventDefault());
      button.addEventListener("click", () => this.press(key, button));
      return button;
    });
    row.replaceChildren(...this.buttons);
  }

  setCtrl(on) {
    this.ctrl = on;
    this.row.querySelector('[data-key="Ctrl"]').setAttribute("aria-pressed", on ? "true" : "false");
  }

  press(key, button) {
    if (key.ctrl) {
      this.setCtrl(!this.ctrl);
      return;
    }
    const view = this.target();
    if (!view) return;
    const data = key.arrow ? arrowBytes(view, key.arrow, this.ctrl) : this.ctrl ? withCtrl(key.data) : key.data;
    this.setCtrl(false);
    view.sendKeys(data);
    button.blur();
  }

  // What the terminal sends for keys typed on the keyboard: Ctrl applied once when it is on.
  filter(data) {
    if (!this.ctrl) return data;
    this.setCtrl(false);
    return withCtrl(data);
  }
}
