-- The failed logins (a wrong password, an unknown user) the service caused
-- on each server host: login tests keep them under a limit per host and
-- window, so that a server's lock-out (fail2ban) does not ban the
-- migration host while it tests a list full of dead logins. A login test
-- claims its attempt here first (counted as a failure until it succeeds),
-- so that tests at once cannot together go past the limit.
CREATE TABLE login_failures (
    id   bigserial   PRIMARY KEY,
    host text        NOT NULL,
    at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_host_at ON login_failures (host, at);
