// The live event log of a task, or of every task: a WebSocket that first
// replays the stored events, then sends new ones. When the connection
// drops, it reconnects with after=<last seq seen>, so nothing is missed
// and nothing repeats.

import { openEventSocket, request } from './api.js';
import { EventKind } from './enums.js';

// Seqs order all events of the service, and every stream sees them
// committed in that order: the highest seq this tab has seen is a safe
// place for a stream of every task to start from when the page has just
// loaded what it shows (see tasksPage).
let highestSeq = 0;

export function latestSeqSeen() {
  return highestSeq;
}

// progressFigures are the account's figures an event carries
// (account.progress, folder.done, account.done, account.failed), in the
// shape of an account's progress; null when it carries none.
export function progressFigures(event) {
  if (typeof event.folders_total !== 'number') return null;
  const figures = {};
  for (const key of ['folders_total', 'folders_done', 'messages_total', 'messages_copied',
    'messages_skipped', 'messages_failed', 'bytes_copied']) figures[key] = Number(event[key]) || 0;
  // The source's count, when the attempt has taken one; without it the
  // account keeps the count it had, as the API does.
  if (typeof event.source_messages === 'number') {
    figures.source_messages = event.source_messages;
    figures.source_bytes = Number(event.source_bytes) || 0;
  }
  return figures;
}

// throttle calls fn at once, then at most once per wait ms however often
// it is asked: a call that comes too early runs at the end of the wait.
// stop() drops a waiting call.
export function throttle(fn, wait) {
  let timer = null;
  let last = -Infinity;
  const fire = () => {
    timer = null;
    last = Date.now();
    fn();
  };
  return {
    call() {
      if (timer) return;
      const early = wait - (Date.now() - last);
      if (early <= 0) fire();
      else timer = setTimeout(fire, early);
    },
    stop() { clearTimeout(timer); timer = null; },
  };
}

// isFailure says whether an event reports something that went wrong.
// A throttle carries the server's words but is a pause, not a failure.
export function isFailure(event) {
  if (event.kind === EventKind.accountThrottled) return false;
  return event.error !== '' || event.kind.endsWith('.failed') || event.kind === EventKind.error;
}

// describeEvent is an event in plain words: the service's sentence, after
// the side it is about, e.g.
// "source: alice@old.example → imap.old.example:993: authentication failed".
export function describeEvent(event) {
  const text = event.message || composeMessage(event);
  return event.side ? `${event.side}: ${text}` : text;
}

// composeMessage says what an event without a sentence is about.
function composeMessage(event) {
  const parts = [];
  if (event.login) parts.push(event.login);
  if (event.host) parts.push(`${event.host}:${event.port}`);
  let text = parts.join(' → ');
  if (event.error) text = text ? `${text}: ${event.error}` : event.error;
  return text || event.kind;
}

// figuresOnly events move an account's figures and nothing else: pages
// show their numbers without asking the API again.
export const figuresOnly = new Set([EventKind.accountProgress, EventKind.folderDone]);

// coalesce wraps an async fn so that calls made while it runs are folded
// into one more run once it ends: a burst of events costs two requests,
// and answers are drawn in the order they were asked for.
export function coalesce(fn) {
  let running = null;
  let again = false;
  return async function call() {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await fn();
        } while (again);
      } finally {
        running = null;
      }
    })();
    return running;
  };
}

// EventStream follows one task's events (every task's when taskId is
// null) after seq `after` until stop(); with liveOnly and no seq seen yet,
// from the events committed once it connects (the stored log is skipped).
export class EventStream {
  // onEvent(event) receives each event once, in seq order; onStatus(text)
  // hears "live", "reconnecting…" or "stopped: …"; onReconnect() is called
  // after a reconnection, to refresh what the events do not carry.
  constructor(taskId, { onEvent, onStatus = () => {}, onReconnect = () => {}, after = 0, liveOnly = false }) {
    Object.assign(this, { taskId, onEvent, onStatus, onReconnect, liveOnly });
    this.lastSeq = after;
    this.stopped = false;
    this.failures = 0;
    this.connect();
  }

  connect() {
    const socket = openEventSocket(this.taskId, this.lastSeq, this.liveOnly && this.lastSeq === 0);
    this.socket = socket;
    socket.addEventListener('open', () => {
      this.onStatus('live');
      if (this.failures > 0) this.onReconnect();
      this.failures = 0;
    });
    socket.addEventListener('message', (message) => this.receive(message.data));
    socket.addEventListener('close', () => {
      if (this.stopped || socket !== this.socket) return;
      this.failures += 1;
      this.onStatus('reconnecting…');
      // Backs off up to 10 s, so that a restarting service is not hammered.
      const wait = Math.min(10000, 500 * 2 ** Math.min(this.failures - 1, 5));
      this.timer = setTimeout(() => this.reconnect(), wait);
    });
  }

  // reconnect first asks the REST API about the task: a WebSocket cannot
  // tell why it was refused, the API can (401 asks for the token, 404
  // means the task is gone).
  async reconnect() {
    if (this.stopped) return;
    try {
      await request('GET', this.taskId === null ? '/tasks' : `/tasks/${this.taskId}`);
    } catch (err) {
      if (err.status === 404 || err.status === 401) {
        this.onStatus(`stopped: ${err.message}`);
        return;
      }
    }
    if (!this.stopped) this.connect();
  }

  receive(data) {
    let event;
    try {
      event = JSON.parse(data);
    } catch {
      return; // not an event: nothing to show
    }
    if (typeof event.seq !== 'number' || event.seq <= this.lastSeq) return;
    this.lastSeq = event.seq;
    highestSeq = Math.max(highestSeq, event.seq);
    this.onEvent(event);
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.socket?.close();
  }
}
