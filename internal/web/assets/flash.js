// A message that outlives one page change, e.g. "saved" shown on the list
// that an edit form returns to.

let pending = null;

export function flash(kind, text) {
  pending = { kind, text };
}

// takeFlash shows the pending message, if any, in a notice.
export function takeFlash(message) {
  if (pending) message.set(pending.kind, pending.text);
  pending = null;
}
