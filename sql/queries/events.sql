-- name: EventAppend :one
INSERT INTO events (kind, task_id, account_id, side, login, host, port, error, message)
VALUES (@kind, @task_id, @account_id, @side, @login, @host, @port, @error, @message)
RETURNING seq, time;

-- name: EventListByTask :many
SELECT * FROM events
WHERE task_id = @task_id AND seq > @after_seq
ORDER BY seq
LIMIT @max_rows;
