-- name: UserPasswordSet :execrows
UPDATE users SET password_digest = @password_digest, failed_signins = 0, signin_locked_until = NULL
WHERE id = @id;

-- name: UserSignInFacts :one
-- What a sign-in as name is decided on, the user locked.
SELECT id, role, coalesce(password_digest, '')::text AS password_digest,
       signin_locked_until::timestamptz AS locked_until
FROM users WHERE name = @name
FOR UPDATE;

-- name: UserSignInFailed :one
-- Counts a failed sign-in; the failures-th locks the user until now +
-- lock_seconds, and the count starts again.
UPDATE users
SET failed_signins = CASE WHEN failed_signins + 1 >= @failures::int THEN 0 ELSE failed_signins + 1 END,
    signin_locked_until = CASE WHEN failed_signins + 1 >= @failures::int
        THEN now() + make_interval(secs => @lock_seconds::float8) ELSE signin_locked_until END
WHERE id = @id
RETURNING signin_locked_until::timestamptz AS locked_until;

-- name: UserSignInSucceeded :exec
UPDATE users SET failed_signins = 0, signin_locked_until = NULL WHERE id = @id;

-- name: SessionCreate :exec
INSERT INTO sessions (cookie_sha256, user_id, csrf_token, expires_at)
VALUES (@cookie_sha256, @user_id, @csrf_token, @expires_at);

-- name: SessionHolder :one
-- The session's user and CSRF token, while it lasts.
SELECT s.id, s.csrf_token, u.id AS user_id, u.name AS user_name, u.role
FROM sessions s JOIN users u ON u.id = s.user_id
WHERE s.cookie_sha256 = @cookie_sha256 AND s.expires_at > now();

-- name: SessionDelete :exec
DELETE FROM sessions WHERE cookie_sha256 = @cookie_sha256;

-- name: SessionsPrune :execrows
DELETE FROM sessions WHERE expires_at <= now();
