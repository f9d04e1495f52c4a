// Keyboard and focus behaviour of the page's overlays, on the live DOM.
//
// A modal is a page overlay: an element with aria-modal="true". While one
// is open, Tab and Shift+Tab cycle through its focusable elements only,
// focus that lands outside it is brought back, Esc presses its [data-esc]
// button, and Ctrl+Enter (Cmd+Enter on a Mac) submits its form. Without a
// modal, Esc closes the topmost non-modal overlay (the pinned inspector,
// the transcript, the task-history drawer) through its [data-esc] button.
// When a modal opens, focus moves into it ([data-autofocus] first); when it
// closes, focus returns to where it was.
//
// The view stays a function of the state: these handlers only press the
// buttons the view drew, which dispatch the same actions a click does.

const FOCUSABLE = [
  "a[href]", "button:not([disabled])", "textarea:not([disabled])", "input:not([disabled]):not([type=hidden])",
  "select:not([disabled])", "[tabindex]:not([tabindex='-1'])", "summary",
].join(",");

/** Overlays Esc closes when no modal is open, topmost first. */
const NON_MODAL = [".tooltip-card--pinned", ".transcript", ".drawer"];

/** topModal is the open modal dialog, if any (the last one in the document is on top). */
export function topModal(doc: Document = document): HTMLElement | null {
  const all = doc.querySelectorAll<HTMLElement>('[aria-modal="true"]');
  return all.length > 0 ? all[all.length - 1] : null;
}

/** focusables lists the elements of root that Tab can reach, in order. */
export function focusables(root: Element): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>(FOCUSABLE)).filter((el) => {
    if (el.closest("[inert]") !== null) {
      return false;
    }
    const r = el.getClientRects();
    return r.length > 0;
  });
}

/** isSubmitChord: Ctrl+Enter, or Cmd+Enter on a Mac. */
export function isSubmitChord(ev: KeyboardEvent): boolean {
  return ev.key === "Enter" && (ev.ctrlKey || ev.metaKey) && !ev.altKey;
}

function press(el: Element | null): boolean {
  if (el instanceof HTMLElement && !(el as HTMLButtonElement).disabled) {
    el.click();
    return true;
  }
  return false;
}

/** onKeydown is the document's keydown handler for overlays. */
export function onKeydown(ev: KeyboardEvent): void {
  const modal = topModal();
  if (ev.key === "Escape") {
    if (modal !== null) {
      if (press(modal.querySelector("[data-esc]"))) {
        ev.preventDefault();
      }
      return;
    }
    for (const sel of NON_MODAL) {
      const open = document.querySelectorAll(sel);
      if (open.length > 0 && press(open[open.length - 1].querySelector("[data-esc]"))) {
        ev.preventDefault();
        return;
      }
    }
    return;
  }
  if (modal === null) {
    return;
  }
  if (isSubmitChord(ev)) {
    const target = ev.target instanceof Element ? ev.target : null;
    const form = (target !== null && modal.contains(target) ? target.closest("form") : null) ?? modal.querySelector("form");
    if (form !== null) {
      ev.preventDefault();
      form.requestSubmit();
    }
    return;
  }
  if (ev.key === "Tab") {
    const items = focusables(modal);
    if (items.length === 0) {
      ev.preventDefault();
      return;
    }
    const first = items[0];
    const last = items[items.length - 1];
    const at = document.activeElement;
    if (ev.shiftKey && (at === first || !modal.contains(at))) {
      ev.preventDefault();
      last.focus();
    } else if (!ev.shiftKey && (at === last || !modal.contains(at))) {
      ev.preventDefault();
      first.focus();
    }
  }
}

/** onFocusin brings focus that left an open modal back into it. */
export function onFocusin(ev: FocusEvent): void {
  const modal = topModal();
  if (modal !== null && ev.target instanceof Node && !modal.contains(ev.target)) {
    focusInto(modal);
  }
}

function focusInto(modal: HTMLElement): void {
  const preferred = modal.querySelector<HTMLElement>("[data-autofocus]");
  const target = preferred !== null && focusables(modal).includes(preferred) ? preferred : focusables(modal)[0];
  (target ?? modal).focus();
}

/**
 * FocusKeeper moves focus into a modal when it opens and back to where it
 * was when it closes. Call sync after every render.
 */
export class FocusKeeper {
  private open: HTMLElement | null = null;
  private before: HTMLElement | null = null;

  sync(): void {
    const modal = topModal();
    if (modal !== null && modal !== this.open) {
      if (this.open === null) {
        this.before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      }
      this.open = modal;
      if (!modal.contains(document.activeElement)) {
        focusInto(modal);
      }
    } else if (modal === null && this.open !== null) {
      this.open = null;
      const back = this.before;
      this.before = null;
      if (back !== null && back.isConnected && (document.activeElement === null || document.activeElement === document.body)) {
        back.focus();
      }
    }
  }
}
