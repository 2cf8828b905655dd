// A task's cut-over on its page: where it stands (planned, copying, in
// sync, final pass, verified), its schedule of delta passes and of the
// final pass, "Final pass now", and pause and resume. Times are read and
// shown in the server's time zone, which the schedule runs in.

import { request } from './api.js';
import { h, field, notice, confirmAction } from './dom.js';

// cutoverSection returns the section and draw(task, lifecycle), which
// redraws the stage and the buttons; the form is drawn once and filled
// from the schedule, so a refresh never wipes what someone is typing.
export function cutoverSection(taskId, after) {
  const message = notice();
  const stage = h('p', { id: 'cutover-stage' });
  const buttons = h('div', { class: 'actions toolbar', id: 'cutover-actions' });
  const every = h('input', { type: 'number', name: 'every_hours', min: '0', step: 'any', inputmode: 'decimal' });
  const at = h('input', { type: 'text', name: 'at', placeholder: '06:00, 18:00', autocomplete: 'off' });
  const until = h('input', { type: 'datetime-local', name: 'until' });
  const finalAt = h('input', { type: 'datetime-local', name: 'final_at' });
  const zoneHint = h('p', { class: 'hint', id: 'cutover-zone' });
  const form = h('form', { id: 'schedule-form', class: 'form' },
    h('h3', { text: 'Schedule' }), zoneHint,
    field('Delta pass every (hours)', every, 'E.g. 6; or give clock times below.'),
    field('or daily at', at, 'Clock times, separated by commas.'),
    field('No delta pass after', until),
    field('Final pass at', finalAt, 'Its end verifies the task.'),
    h('div', { class: 'actions' },
      h('button', { class: 'primary', type: 'submit', text: 'Save schedule' }),
      h('button', { type: 'button', 'data-action': 'remove-schedule', text: 'Remove schedule', onclick: removeSchedule })));
  const section = h('section', { id: 'cutover', 'aria-labelledby': 'cutover-title' },
    h('h2', { id: 'cutover-title', text: 'Cut-over' }), stage, buttons, message.el, form);
  let zone = 'UTC';

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = {};
    const hours = Number(every.value || 0);
    if (hours > 0) body.every_minutes = Math.round(hours * 60);
    const times = at.value.split(',').map((t) => t.trim()).filter(Boolean);
    if (times.length) body.at = times;
    if (until.value) body.until = zonedToInstant(until.value, zone);
    if (finalAt.value) body.final_at = zonedToInstant(finalAt.value, zone);
    try {
      const schedule = await request('PUT', `/tasks/${taskId}/schedule`, body);
      fill(schedule);
      message.set('ok', `Schedule saved: ${schedule.words}.`);
    } catch (err) {
      message.set('error', `Schedule not saved: ${err.message}`);
    }
    await after();
  });

  async function removeSchedule() {
    if (!await confirmAction('Remove the schedule? No pass starts by itself after; a pass under way goes on.', 'Remove schedule')) return;
    try {
      await request('DELETE', `/tasks/${taskId}/schedule`);
      fill(null);
      message.set('ok', 'Schedule removed: passes start by hand.');
    } catch (err) {
      message.set('error', `Not removed: ${err.message}`);
    }
    await after();
  }

  // fill puts a schedule (null: none) in the form.
  function fill(schedule) {
    every.value = schedule?.every_minutes ? String(schedule.every_minutes / 60) : '';
    at.value = schedule?.at?.join(', ') ?? '';
    until.value = schedule?.until ? instantToZoned(schedule.until, zone) : '';
    finalAt.value = schedule?.final_at && !schedule.final_pass ? instantToZoned(schedule.final_at, zone) : '';
  }

  // act runs one of the cut-over's actions after asking, and says how it went.
  const act = (question, label, method, path, body, done) => async () => {
    if (!await confirmAction(question, label)) return;
    try {
      await request(method, path, body);
      message.set('ok', done);
    } catch (err) {
      message.set('error', `${label}: ${err.message}`);
    }
    await after();
  };

  // The stored schedule fills the form once, unless someone typed in it
  // before it came: what they type is never wiped.
  let filled = false;
  let typed = false;
  form.addEventListener('input', () => { typed = true; });
  const fillUntyped = (schedule) => { if (!typed) fill(schedule); };
  function draw(task, lifecycle) {
    zone = lifecycle.time_zone;
    zoneHint.textContent = `Times are in ${zone}, the server's time zone.`;
    if (!filled) {
      filled = true;
      request('GET', `/tasks/${taskId}/schedule`).then(fillUntyped, () => fillUntyped(null)); // 404: none
    }
    stage.replaceChildren(h('span', { class: `badge stage-${lifecycle.stage}`, text: lifecycle.stage.replaceAll('_', ' ') }), ' ', lifecycle.words);
    const passRuns = task.state === 'queued' || task.state === 'running';
    buttons.replaceChildren(...[
      lifecycle.stage === 'final_pass' ? null : h('button', { 'data-action': 'final-pass', class: 'primary', text: 'Final pass now',
        onclick: act('Run the final pass of every account now? It starts when no pass runs, no delta pass follows it, and its end verifies the task.',
          'Final pass now', 'POST', `/tasks/${taskId}/final`, undefined, 'The final pass is due: it starts when no pass runs.') }),
      task.paused_at
        ? h('button', { 'data-action': 'resume', text: 'Resume', onclick: act('Resume this task? A scheduled pass that came due meanwhile starts at once.',
          'Resume', 'POST', `/tasks/${taskId}/resume`, undefined, 'Resumed: passes start again.') })
        : h('button', { 'data-action': 'pause', text: 'Pause', onclick: act('Pause this task? No pass starts, by hand or by schedule, until you resume it; the pass under way goes on to its end.',
          'Pause', 'POST', `/tasks/${taskId}/pause`, {}, 'Paused: no pass starts until you resume the task.') }),
      !task.paused_at && passRuns ? h('button', { 'data-action': 'pause-stop', class: 'danger', text: 'Pause and stop the pass',
        onclick: act('Pause this task and hold the pass under way? Running accounts stop between messages and wait; Resume lets them go on where they were.',
          'Pause and stop', 'POST', `/tasks/${taskId}/pause`, { stop: true }, 'Paused: the pass under way is held, its running accounts stopping between messages.') }) : null,
    ].filter(Boolean));
  }
  return { section, draw };
}

// wallClock is the wall time of an instant (ms) in zone, as UTC ms.
function wallClock(ms, zone) {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-US', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  return Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute, +parts.second);
}

// zonedToInstant reads a datetime-local value ("2026-11-28T22:00") as a
// wall time in zone, and returns the instant in RFC 3339.
export function zonedToInstant(local, zone) {
  const wall = Date.parse(`${local}:00Z`);
  let ms = wall - (wallClock(wall, zone) - wall);
  ms = wall - (wallClock(ms, zone) - ms); // again, across a change of offset
  return new Date(ms).toISOString();
}

// instantToZoned is an instant's wall time in zone, for a datetime-local.
function instantToZoned(iso, zone) {
  return new Date(wallClock(Date.parse(iso), zone)).toISOString().slice(0, 16);
}
