-- Schedules (migration 0027): a task's delta passes and final pass in time.

-- name: ScheduleSet :execrows
-- Gives an existing task its schedule in place of the one it had. A new
-- final_at makes a final pass due again; without one, the record of the
-- final pass that began stays.
INSERT INTO task_schedules (task_id, every_minutes, at_times, time_zone, until_at, final_at, next_at, final_pass)
SELECT t.id, @every_minutes, @at_times::text[], @time_zone, sqlc.narg(until_at), sqlc.narg(final_at), sqlc.narg(next_at), 0
FROM tasks t WHERE t.id = @task_id
ON CONFLICT (task_id) DO UPDATE
SET every_minutes = excluded.every_minutes, at_times = excluded.at_times, time_zone = excluded.time_zone,
    until_at = excluded.until_at, final_at = coalesce(excluded.final_at, task_schedules.final_at),
    next_at = excluded.next_at,
    final_pass = CASE WHEN excluded.final_at IS NULL THEN task_schedules.final_pass ELSE 0 END,
    updated_at = now();

-- name: ScheduleGet :one
SELECT * FROM task_schedules WHERE task_id = @task_id;

-- name: ScheduleRemove :execrows
-- Drops a task's schedule whose final pass has not begun.
DELETE FROM task_schedules WHERE task_id = @task_id AND final_pass = 0;

-- name: ScheduleEnd :execrows
-- Stops the passes a schedule whose final pass began would start; it keeps
-- that record, which the lifecycle tells.
UPDATE task_schedules
SET every_minutes = 0, at_times = '{}', until_at = NULL, next_at = NULL, updated_at = now()
WHERE task_id = @task_id AND final_pass <> 0;

-- name: SchedulesDueExist :one
-- Whether a schedule has a pass due at now: the cheap look every process
-- takes, before the transaction that starts the passes.
SELECT EXISTS (
    SELECT 1 FROM task_schedules s JOIN tasks t ON t.id = s.task_id
    WHERE t.paused_at IS NULL AND NOT (t.state = ANY(@running_states::text[]))
      AND ((s.final_pass = 0 AND s.final_at <= @now) OR s.next_at <= @now)) AS due;

-- name: SchedulesDue :many
-- The schedules with a pass due at now, of tasks neither running nor
-- paused, held until the transaction ends: a process that finds one held
-- skips it, and finds it moved on after.
SELECT s.* FROM task_schedules s
JOIN tasks t ON t.id = s.task_id
WHERE t.paused_at IS NULL AND NOT (t.state = ANY(@running_states::text[]))
  AND ((s.final_pass = 0 AND s.final_at <= @now) OR s.next_at <= @now)
ORDER BY s.task_id
FOR UPDATE OF s SKIP LOCKED;

-- name: ScheduleMoved :exec
-- A pass of the schedule began (or was skipped): the next delta pass due,
-- and the final pass's number once it began.
UPDATE task_schedules SET next_at = sqlc.narg(next_at), final_pass = @final_pass WHERE task_id = @task_id;

-- name: ScheduleFinalNow :exec
-- "Final pass now": the final pass is due at now, on a schedule of its
-- own if the task had none.
INSERT INTO task_schedules (task_id, time_zone, final_at)
VALUES (@task_id, @time_zone, @now)
ON CONFLICT (task_id) DO UPDATE SET final_at = @now, final_pass = 0, updated_at = now();

-- name: TaskPause :exec
UPDATE tasks SET paused_at = now(), updated_at = now() WHERE id = @id AND paused_at IS NULL;

-- name: TaskResume :exec
UPDATE tasks SET paused_at = NULL, held = false, updated_at = now() WHERE id = @id AND paused_at IS NOT NULL;

-- name: TaskHold :execrows
-- A paused task's pass under way is held: its running accounts are told
-- to stop (AttemptRenew) and wait queued; none is admitted.
UPDATE tasks SET held = true, updated_at = now()
WHERE id = @id AND paused_at IS NOT NULL AND state = ANY(@migrating_states::text[]);

-- name: TaskPausedAt :one
-- Whether a task is paused (NULL when not); no row for a missing task.
SELECT paused_at FROM tasks WHERE id = @id;

-- name: ScheduleFinalDisarm :exec
-- A final pass that came due and was refused is no longer due: it does
-- not start later by itself, when the task has changed.
UPDATE task_schedules SET final_at = NULL, updated_at = now() WHERE task_id = @task_id AND final_pass = 0;
